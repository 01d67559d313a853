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
	canRepair(problem.PR_1D_CLONE_QUESTION, problem.PR_1D_DELETE_QUESTION)
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
	orig       ondisk.Inode   // the inode before cloning (bigalloc only)
	dirBlocks  map[uint32]int // logical block -> index in c.dblist
	err        string         // an allocation or read failure (clone_struct's errcode)
	iterErr    string         // the block iteration failed (remapping an extent)
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
		// An implied cluster allocation first: when another block of
		// this logical cluster maps to a different physical cluster,
		// the block moves into that one and nothing is allocated.
		if nb := cs.impliedCluster(uint64(blockcnt)); nb != 0 && f.ClusterOf(nb) != f.ClusterOf(b) {
			newBlk = nb
		} else {
			nb, ok := c.allocBlock(0)
			if !ok {
				cs.err = "Could not allocate block in ext2 filesystem"
				return b, false
			}
			newBlk = nb
		}
		cs.allocBlock = newBlk
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

// impliedCluster is ext2fs_map_cluster_block on the inode as pass 1B
// read it (the library's clone_struct keeps that copy, so the root is
// not the one being remapped): on a bigalloc filesystem, the first other
// block of lblk's logical cluster that the extent tree maps (uninit
// extents included) gives the physical block lblk would have in the same
// physical cluster; 0 when there is none.
func (cs *cloneState) impliedCluster(lblk uint64) uint64 {
	c := cs.c
	f := c.fs
	n := cs.orig
	if f.ClusterBits == 0 || n == nil || n.Flags()&ondisk.FlagExtents == 0 || lblk >= 1<<32 {
		return 0
	}
	ratio := uint64(1) << f.ClusterBits
	base := lblk &^ (ratio - 1)
	buf := make([]byte, f.BlockSize)
	for i := uint64(0); i < ratio; i++ {
		if base+i == lblk {
			continue
		}
		if p := cs.mapped(n, base+i, buf); p != 0 {
			return p - i + (lblk - base)
		}
	}
	return 0
}

// mapped is the physical block the extent tree of n maps lblk to, 0 for
// a hole or a tree that cannot be followed.
func (cs *cloneState) mapped(n ondisk.Inode, lblk uint64, buf []byte) uint64 {
	f := cs.c.fs
	node := ondisk.ExtentHeader(n.IBlock())
	for level := 0; level <= cloneMaxDepth; level++ {
		if node.Verify() != nil {
			return 0
		}
		if node.Depth() == 0 {
			for i := 0; i < int(node.Entries()); i++ {
				e := node.Leaf(i)
				if uint64(e.Lblk) <= lblk && lblk < uint64(e.Lblk)+uint64(e.Len) {
					return e.Pblk + (lblk - uint64(e.Lblk))
				}
			}
			return 0
		}
		next := -1
		for i := 0; i < int(node.Entries()); i++ {
			if uint64(node.Idx(i).Lblk) <= lblk {
				next = i
			}
		}
		if next < 0 {
			return 0
		}
		blk := node.Idx(next).Leaf
		if blk < f.FirstDataBlock || blk >= f.BlocksCount || f.ReadBlock(blk, buf) != nil {
			return 0
		}
		node = ondisk.ExtentHeader(buf)
	}
	return 0
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
	if f.ClusterBits != 0 {
		cs.orig = append(ondisk.Inode(nil), n...)
	}
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
	if cs.iterErr != "" {
		// The library would split a full leaf below the root; gofsck
		// does not, so the run stops as for an unimplemented fix.
		c.unsupported(problem.PR_1D_CLONE_QUESTION)
		return cs.iterErr
	}
	if cs.err != "" {
		c.diag("clone_file: %s returned from clone_file_block\n", cs.err)
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
		return cs.extentLeaf(n, h, level == 0)
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

// extentPiece is one extent of a leaf being remapped.
type extentPiece struct {
	lblk   uint32
	pblk   uint64
	len    uint32
	uninit bool
}

// leafSim replays the library's ext2fs_extent_set_bmap on the extents of
// one leaf node. full is called when an insert finds the node full; it
// returns false when the node cannot grow.
type leafSim struct {
	ext  []extentPiece
	max  int
	full func() bool
}

func (s *leafSim) insert(at int, e extentPiece) bool {
	if len(s.ext) >= s.max && !s.full() {
		return false
	}
	s.ext = append(s.ext, extentPiece{})
	copy(s.ext[at+1:], s.ext[at:])
	s.ext[at] = e
	return true
}

// setBmap maps logical block l (mapped in the node) to phys as 1.47.0's
// ext2fs_extent_set_bmap does: the block's extent is cut, and the new
// block joins the neighbouring extent it continues or becomes its own.
func (s *leafSim) setBmap(l uint32, phys uint64, uninit bool) bool {
	maxLen := uint32(ondisk.ExtentInitMaxLen)
	if uninit {
		maxLen--
	}
	i := -1
	for k := range s.ext {
		if e := s.ext[k]; l >= e.lblk && l-e.lblk < e.len {
			i = k
			break
		}
	}
	if i < 0 {
		return false
	}
	e := s.ext[i]
	if e.uninit == uninit && e.pblk+uint64(l-e.lblk) == phys {
		return true
	}
	newE := extentPiece{lblk: l, pblk: phys, len: 1, uninit: uninit}
	prevJoins := func() bool {
		if i == 0 {
			return false
		}
		p := s.ext[i-1]
		return p.lblk+p.len == l && p.pblk+uint64(p.len) == phys && p.uninit == uninit && p.len < maxLen-1
	}
	nextJoins := func() bool {
		if i+1 >= len(s.ext) {
			return false
		}
		x := s.ext[i+1]
		return l+1 == x.lblk && phys+1 == x.pblk && x.uninit == uninit && x.len < maxLen-1
	}
	switch {
	case l == e.lblk && e.len == 1:
		// 1.47.0 replaces the extent; merging it into the previous one
		// came in 1.47.3.
		s.ext[i] = newE
	case l == e.lblk+e.len-1:
		if nextJoins() {
			x := &s.ext[i+1]
			x.lblk--
			x.pblk--
			x.len++
		} else if !s.insert(i+1, newE) {
			return false
		}
		s.ext[i].len--
	case l == e.lblk:
		s.ext[i].lblk++
		s.ext[i].pblk++
		s.ext[i].len--
		if prevJoins() {
			s.ext[i-1].len++
		} else if !s.insert(i, newE) {
			return false
		}
	default:
		head := l - e.lblk
		s.ext[i].len = head
		if !s.insert(i+1, newE) {
			s.ext[i] = e
			return false
		}
		post := extentPiece{lblk: l + 1, pblk: e.pblk + uint64(head) + 1, len: e.len - head - 1, uninit: e.uninit}
		if !s.insert(i+2, post) {
			return false
		}
	}
	return true
}

// extentLeaf remaps the cloned blocks of one leaf (h; the inode's root
// when root is set) block by block as the library's iterator does. A full
// root is split the library's way: its extents move to a new leaf block
// allocated near the first of them, and the root becomes an index. It
// reports whether h changed.
func (cs *cloneState) extentLeaf(n ondisk.Inode, h ondisk.ExtentHeader, root bool) bool {
	c := cs.c
	f := c.fs
	entries := int(h.Entries())
	orig := make([]ondisk.Extent, entries)
	sim := &leafSim{max: int(h.Max())}
	for i := range orig {
		orig[i] = h.Leaf(i)
		sim.ext = append(sim.ext, extentPiece{lblk: orig[i].Lblk, pblk: orig[i].Pblk, len: orig[i].Len, uninit: orig[i].Uninit})
	}
	var leafBlk uint64
	sim.full = func() bool {
		if !root || leafBlk != 0 || len(sim.ext) == 0 {
			return false
		}
		mask := uint64(1)<<f.ClusterBits - 1
		goal := (sim.ext[0].pblk - (uint64(1) << f.ClusterBits)) &^ mask
		b, ok := c.newBlock(goal)
		if !ok {
			return false
		}
		leafBlk = b
		sim.max = (f.BlockSize - ondisk.ExtentHeaderSize) / ondisk.ExtentEntrySize
		c.iblkAdd(n, 1)
		return true
	}
	changed := false
	for _, e := range orig {
		for k := uint32(0); k < e.Len; k++ {
			nb, ch := cs.block(e.Pblk+uint64(k), int64(e.Lblk)+int64(k))
			if cs.err != "" {
				return false
			}
			if !ch {
				continue
			}
			changed = true
			if !sim.setBmap(e.Lblk+k, nb, e.Uninit) {
				cs.iterErr = "No free space in extent map"
				cs.err = cs.iterErr
				return false
			}
		}
	}
	if !changed {
		return false
	}
	put := func(node []byte) {
		binary.LittleEndian.PutUint16(node[2:], uint16(len(sim.ext)))
		for i, p := range sim.ext {
			ent := node[ondisk.ExtentHeaderSize+i*ondisk.ExtentEntrySize:]
			l := p.len
			if p.uninit {
				l += ondisk.ExtentInitMaxLen
			}
			binary.LittleEndian.PutUint32(ent[0:], p.lblk)
			binary.LittleEndian.PutUint16(ent[4:], uint16(l))
			binary.LittleEndian.PutUint16(ent[6:], uint16(p.pblk>>32))
			binary.LittleEndian.PutUint32(ent[8:], uint32(p.pblk))
		}
	}
	if leafBlk == 0 {
		put(h)
		return true
	}
	// The split root: a leaf block with every extent, the root an index.
	buf := make([]byte, f.BlockSize)
	copy(buf, h[:ondisk.ExtentHeaderSize])
	binary.LittleEndian.PutUint16(buf[4:], uint16(sim.max))
	put(buf)
	if f.MetadataCsum {
		end := ondisk.ExtentHeaderSize + sim.max*ondisk.ExtentEntrySize
		if sum, _, ok := ondisk.ExtentBlockChecksum(buf, f.CsumSeed, cs.ino, n.Generation()); ok {
			binary.LittleEndian.PutUint32(buf[end:], sum)
		}
	}
	c.writeBlock(leafBlk, buf)
	binary.LittleEndian.PutUint16(h[2:], 1)
	binary.LittleEndian.PutUint16(h[6:], 1)
	ent := h[ondisk.ExtentHeaderSize:]
	binary.LittleEndian.PutUint32(ent[0:], sim.ext[0].lblk)
	binary.LittleEndian.PutUint32(ent[4:], uint32(leafBlk))
	binary.LittleEndian.PutUint16(ent[8:], uint16(leafBlk>>32))
	binary.LittleEndian.PutUint16(ent[10:], 0)
	return true
}

// deleteDupFile is e2fsck's delete_file: the file's blocks that no other
// file claims are freed, its claims on shared ones dropped, its EA block
// reference released, and the inode cleared.
func (c *Checker) deleteDupFile(di *dupInode, clusters map[uint64]*dupCluster) {
	f := c.fs
	ino := di.ino
	n := ondisk.Inode(di.inode)
	dupBlocks := int64(0)
	curCluster := ^uint64(0)
	visit := func(b uint64, blockcnt int64) {
		if b == 0 {
			return
		}
		lc := uint64(blockcnt) >> f.ClusterBits
		if b < f.BlocksCount && c.blockDup.Test(f.ClusterOf(b)) {
			if dc := clusters[f.ClusterOf(b)]; dc != nil && lc != curCluster {
				c.decrementBadcount(b, dc)
				dupBlocks++
			}
		} else {
			if b%(uint64(1)<<f.ClusterBits) == 0 {
				c.releaseBlock(b)
			}
			dupBlocks++
		}
		curCluster = lc
	}
	if c.hasValidBlocks(n) {
		c.iterateBlocks(c.newScratch(), n, visit)
	}
	c.inodeBad.Clear(uint64(ino))
	c.inodeReg.Clear(uint64(ino))
	c.inodeDir.Clear(uint64(ino))
	c.inodeUsed.Clear(uint64(ino))
	c.inodeAllocStats(ino, -1, n.IsDir())
	c.chargeQuota(ino, n, uint64(-dupBlocks*int64(f.BlockSize)), ^uint64(0))
	n = c.readFullInode(ino)
	c.zapInode(ino, n)
	acl := n.FileACL(c.sb.Is64bit())
	if acl == 0 || !c.sb.HasCompat(ondisk.CompatExtAttr) {
		return
	}
	count, ok := c.adjustEARefcount(acl, -1)
	if !ok {
		c.fix(problem.Problem{Code: problem.PR_1B_ADJ_EA_REFCOUNT, Ino: ino, Blk: acl, Str: "delete_file"})
	}
	if (ok && count == 0) || (acl < f.BlocksCount && c.blockDup.Test(f.ClusterOf(acl))) {
		visit(acl, -5)
		c.chargeQuota(ino, n, uint64(-int64(f.BlockSize)), 0)
	}
}
