package check

import (
	"encoding/binary"

	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Pass 1D's "Clone multiply-claimed blocks" (e2fsck's clone_file): every
// block of the file still in the dup map is copied to a newly allocated
// block and the file is pointed at the copy, in the library's block
// iteration order (metadata blocks before the blocks they map). Claim
// counts drop one step behind, as e2fsck's deferred decrement does, so a
// file sharing a block with itself keeps its second reference.

func init() {
	canRepair(problem.PR_1D_CLONE_QUESTION)
}

// cloneMaxDepth bounds the extent tree walk (the format allows 5 levels).
const cloneMaxDepth = 5

// cloneState is e2fsck's clone_struct.
type cloneState struct {
	c          *Checker
	ino        uint32
	dir        bool
	dupCluster uint64 // logical cluster of the last cloned block
	allocBlock uint64
	saveDC     *dupCluster
	saveBlk    uint64
	buf        []byte
	clusters   map[uint64]*dupCluster
	dirBlocks  map[uint32]int // logical block -> index in c.dblist
	err        string
}

// decrementBadcount is e2fsck's decrement_badcount: a cluster with one
// claimant left leaves the dup map unless it overlaps fs metadata.
func (c *Checker) decrementBadcount(blk uint64, dc *dupCluster) {
	dc.numBad--
	cl := c.fs.ClusterOf(blk)
	if dc.numBad <= 0 || (dc.numBad == 1 && !c.blockMeta.Test(cl)) {
		if c.blockMeta.Test(cl) {
			return
		}
		c.blockDup.Clear(cl)
	}
}

func (cs *cloneState) deferredDec() {
	if cs.saveDC == nil {
		return
	}
	cs.c.decrementBadcount(cs.saveBlk, cs.saveDC)
	cs.saveDC = nil
}

// block is clone_file_block: it returns the block that replaces b and
// whether b was replaced.
func (cs *cloneState) block(b uint64, blockcnt int64) (uint64, bool) {
	c := cs.c
	f := c.fs
	cs.deferredDec()
	if b == 0 || cs.err != "" {
		return b, false
	}
	mask := uint64(1)<<f.ClusterBits - 1
	lc := uint64(blockcnt) >> f.ClusterBits
	var newBlk uint64
	var dc *dupCluster
	if lc == cs.dupCluster && cs.allocBlock != 0 {
		newBlk = cs.allocBlock
	} else {
		if b >= f.BlocksCount || !c.blockDup.Test(f.ClusterOf(b)) {
			return b, false
		}
		dc = cs.clusters[f.ClusterOf(b)]
		if dc == nil {
			return b, false
		}
		cs.dupCluster = lc
		nb, ok := c.allocBlock(0)
		if !ok {
			cs.err = "Could not allocate block in ext2 filesystem"
			return b, false
		}
		cs.allocBlock = nb
		newBlk = nb
	}
	newBlk = newBlk&^mask + uint64(blockcnt)&mask
	if cs.dir && blockcnt >= 0 {
		if i, ok := cs.dirBlocks[uint32(blockcnt)]; ok {
			c.dblist[i].blk = newBlk
		}
	}
	if b >= f.BlocksCount || f.ReadBlock(b, cs.buf) != nil {
		cs.err = "Attempt to read block from filesystem resulted in short read"
		return b, false
	}
	c.writeBlock(newBlk, cs.buf)
	if c.blockMeta.Test(f.ClusterOf(b)) {
		cs.saveDC = nil
	} else {
		cs.saveDC = dc
	}
	cs.saveBlk = b
	if cl := f.ClusterOf(newBlk); !c.blockFound.Test(cl) {
		c.blockFound.Set(cl)
		c.markBlockOnDisk(cl, true)
	}
	return newBlk, true
}

// cloneFile clones the shared blocks of di's inode; it returns the error
// message of a failure ("" on success).
func (c *Checker) cloneFile(di *dupInode, inodes map[uint32]*dupInode, clusters map[uint64]*dupCluster) string {
	f := c.fs
	ino := di.ino
	cs := &cloneState{c: c, ino: ino, dupCluster: ^uint64(0), buf: make([]byte, f.BlockSize), clusters: clusters}
	if c.inodeDir.Test(uint64(ino)) {
		cs.dir = true
		cs.dirBlocks = map[uint32]int{}
		for i := range c.dblist {
			if c.dblist[i].ino == ino {
				cs.dirBlocks[c.dblist[i].lblk] = i
			}
		}
	}
	n := ondisk.Inode(di.inode)
	if c.hasValidBlocks(n) {
		var changed bool
		if n.Flags()&ondisk.FlagExtents != 0 {
			changed = cs.extentRoot(n)
		} else {
			changed = cs.blockMap(n)
		}
		if changed {
			c.writeInode(ino, n)
		}
	}
	cs.deferredDec()
	if cs.err != "" {
		return cs.err
	}
	is64 := c.sb.Is64bit()
	blk := n.FileACL(is64)
	if blk == 0 {
		return ""
	}
	nb, changed := cs.block(blk, -5)
	if !changed {
		return cs.err
	}
	n.SetFileACL(nb)
	c.writeInode(ino, n)
	dc := clusters[f.ClusterOf(blk)]
	if dc == nil {
		return ""
	}
	for k := len(dc.inodes) - 1; k >= 0; k-- {
		o := dc.inodes[k]
		if o == ino {
			continue
		}
		t := inodes[o]
		if t == nil {
			return ""
		}
		tn := ondisk.Inode(t.inode)
		if tn.FileACL(is64) == blk {
			tn.SetFileACL(nb)
			c.writeInode(o, tn)
			c.decrementBadcount(blk, dc)
		}
	}
	return ""
}

// blockMap clones the shared blocks of a block-mapped inode, updating
// i_block in n; it reports whether n changed.
func (cs *cloneState) blockMap(n ondisk.Inode) bool {
	f := cs.c.fs
	ib := n.IBlock()
	changed := false
	for i := 0; i < 12; i++ {
		if nb, ch := cs.block(uint64(leU32(ib[4*i:])), int64(i)); ch {
			binary.LittleEndian.PutUint32(ib[4*i:], uint32(nb))
			changed = true
		}
	}
	per := int64(f.BlockSize / 4)
	base := int64(12)
	span := int64(1)
	for level := 1; level <= 3; level++ {
		span *= per
		slot := ib[4*(11+level):]
		if b := uint64(leU32(slot)); b != 0 {
			if nb, ch := cs.indirect(b, level, base); ch {
				binary.LittleEndian.PutUint32(slot, uint32(nb))
				changed = true
			}
		}
		base += span
		if cs.err != "" {
			break
		}
	}
	return changed
}

// indirect handles one indirect block of the given level mapping logical
// blocks from base: the block itself first, then what it maps (read from
// its new place when it was cloned); it returns the block's new number.
func (cs *cloneState) indirect(b uint64, level int, base int64) (uint64, bool) {
	c := cs.c
	f := c.fs
	nb, changed := cs.block(b, -int64(level))
	if cs.err != "" || nb < f.FirstDataBlock || nb >= f.BlocksCount {
		return nb, changed
	}
	buf := make([]byte, f.BlockSize)
	if f.ReadBlock(nb, buf) != nil {
		return nb, changed
	}
	per := int64(f.BlockSize / 4)
	span := int64(1)
	for k := 1; k < level; k++ {
		span *= per
	}
	dirty := false
	for i := int64(0); i < per && cs.err == ""; i++ {
		child := uint64(leU32(buf[4*i:]))
		if child == 0 {
			continue
		}
		var cb uint64
		var ch bool
		if level == 1 {
			cb, ch = cs.block(child, base+i)
		} else {
			cb, ch = cs.indirect(child, level-1, base+i*span)
		}
		if ch {
			binary.LittleEndian.PutUint32(buf[4*i:], uint32(cb))
			dirty = true
		}
	}
	if dirty {
		c.writeBlock(nb, buf)
	}
	return nb, changed
}

// extentRoot clones the shared blocks of an extent-mapped inode; it
// reports whether i_block changed.
func (cs *cloneState) extentRoot(n ondisk.Inode) bool {
	root := ondisk.ExtentHeader(n.IBlock())
	if root.Verify() != nil || int(root.Depth()) > cloneMaxDepth {
		return false
	}
	return cs.extentNode(n, root, 0, int(root.Depth()))
}

// extentNode walks one node (index entries' blocks before their
// subtrees); it reports whether the node's bytes changed.
func (cs *cloneState) extentNode(n ondisk.Inode, h ondisk.ExtentHeader, level, depth int) bool {
	c := cs.c
	f := c.fs
	if level == depth {
		return cs.extentLeaf(h)
	}
	changed := false
	for i := 0; i < int(h.Entries()) && cs.err == ""; i++ {
		e := h.Idx(i)
		nb, ch := cs.block(e.Leaf, -1)
		if ch {
			ent := h[ondisk.ExtentHeaderSize+i*ondisk.ExtentEntrySize:]
			binary.LittleEndian.PutUint32(ent[4:], uint32(nb))
			binary.LittleEndian.PutUint16(ent[8:], uint16(nb>>32))
			changed = true
		}
		if cs.err != "" || nb < f.FirstDataBlock || nb >= f.BlocksCount {
			continue
		}
		buf := make([]byte, f.BlockSize)
		if f.ReadBlock(nb, buf) != nil {
			continue
		}
		child := ondisk.ExtentHeader(buf)
		if child.Verify() != nil || int(child.Depth()) != depth-level-1 {
			continue
		}
		if cs.extentNode(n, child, level+1, depth) {
			if f.MetadataCsum {
				end := ondisk.ExtentHeaderSize + int(child.Max())*ondisk.ExtentEntrySize
				if sum, _, ok := ondisk.ExtentBlockChecksum(buf, f.CsumSeed, cs.ino, n.Generation()); ok {
					binary.LittleEndian.PutUint32(buf[end:], sum)
				}
			}
			c.writeBlock(nb, buf)
		}
	}
	return changed
}

// extentPiece is a run of blocks contiguous in both numberings.
type extentPiece struct {
	lblk     uint32
	pblk     uint64
	len      uint32
	uninit   bool
	remapped bool
}

// extentLeaf remaps the cloned blocks of one leaf as the library's
// ext2fs_extent_set_bmap leaves them when the blocks are remapped in
// order: each remapped run becomes its own extent, merged with a
// neighbour it continues. It reports whether the leaf changed.
func (cs *cloneState) extentLeaf(h ondisk.ExtentHeader) bool {
	var out []extentPiece
	anyChange := false
	add := func(p extentPiece) {
		if k := len(out) - 1; k >= 0 {
			l := &out[k]
			limit := uint32(ondisk.ExtentInitMaxLen)
			if l.uninit {
				limit--
			}
			if (l.remapped || p.remapped) && l.uninit == p.uninit && l.lblk+l.len == p.lblk &&
				l.pblk+uint64(l.len) == p.pblk && l.len+p.len <= limit {
				l.len += p.len
				l.remapped = l.remapped || p.remapped
				return
			}
		}
		out = append(out, p)
	}
	entries := int(h.Entries())
	for i := 0; i < entries; i++ {
		e := h.Leaf(i)
		var cur extentPiece
		have := false
		for k := uint32(0); k < e.Len; k++ {
			old := e.Pblk + uint64(k)
			nb, ch := cs.block(old, int64(e.Lblk)+int64(k))
			if cs.err != "" {
				return false
			}
			anyChange = anyChange || ch
			if have && cur.remapped == ch && cur.pblk+uint64(cur.len) == nb {
				cur.len++
				continue
			}
			if have {
				add(cur)
			}
			cur = extentPiece{lblk: e.Lblk + k, pblk: nb, len: 1, uninit: e.Uninit, remapped: ch}
			have = true
		}
		if have {
			add(cur)
		}
	}
	if !anyChange {
		return false
	}
	if len(out) > int(h.Max()) {
		cs.err = "No free space in extent map"
		return false
	}
	binary.LittleEndian.PutUint16(h[2:], uint16(len(out)))
	for i, p := range out {
		ent := h[ondisk.ExtentHeaderSize+i*ondisk.ExtentEntrySize:]
		l := p.len
		if p.uninit {
			l += ondisk.ExtentInitMaxLen
		}
		binary.LittleEndian.PutUint32(ent[0:], p.lblk)
		binary.LittleEndian.PutUint16(ent[4:], uint16(l))
		binary.LittleEndian.PutUint16(ent[6:], uint16(p.pblk>>32))
		binary.LittleEndian.PutUint32(ent[8:], uint32(p.pblk))
	}
	return true
}
