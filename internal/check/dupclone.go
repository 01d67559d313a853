package check

import (
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Pass 1D's "Clone multiply-claimed blocks" (e2fsck's clone_file): every
// block of the file still in the dup map is copied to a newly allocated
// block and the file is pointed at the copy, in the library's block
// iteration order (metadata blocks before the blocks they map). Claim
// counts drop one step behind, as e2fsck's deferred decrement does, so a
// file sharing a block with itself keeps its second reference.

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
	iterErr    string         // the block iteration failed
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
		if c.dupMapOutOfRange(b) {
			c.dupMapRangeWarning(b)
			return b, false
		}
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
				cs.err = string(ext2fs.ErrBlockAllocFail)
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
		cs.err = string(ext2fs.ErrShortRead)
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
// extents included, looked up by ext2fs.Bmap2) gives the physical block
// lblk would have in the same physical cluster; 0 when there is none or
// a lookup fails (implied_cluster_alloc's error, which clone_file_block
// takes as no block).
func (cs *cloneState) impliedCluster(lblk uint64) uint64 {
	c := cs.c
	f := c.fs
	n := cs.orig
	if f.ClusterBits == 0 || n == nil || n.Flags()&ondisk.FlagExtents == 0 || lblk >= 1<<32 {
		return 0
	}
	ratio := uint64(1) << f.ClusterBits
	base := lblk &^ (ratio - 1)
	for i := uint64(0); i < ratio; i++ {
		if base+i == lblk {
			continue
		}
		p, err := ext2fs.Bmap2(c.libfs(), cs.ino, n, base+i, 0)
		if err != nil {
			return 0
		}
		if p != 0 {
			return p - i + (lblk - base)
		}
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
	// An extent inode's all-zero i_block is not given an empty root.
	if c.hasValidBlocks(n) && (n.Flags()&ondisk.FlagExtents == 0 || !ext2fs.IblockEmpty(n)) {
		cs.iterate(n)
	}
	cs.deferredDec()
	if cs.iterErr != "" {
		c.fix(problem.Problem{Code: problem.PR_1B_BLOCK_ITERATE, Ino: ino, Str: "clone_file", Err: cs.iterErr})
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

// iterate clones the shared blocks of inode n with the library's block
// iterator (ext2fs.BlockIterate), pre-order. In a block map a cloned
// mapping block is read from its new place, an unreadable one maps
// nothing, and a changed i_block is written here; in an extent tree a
// cloned tree block replaces its index entry before its subtree is
// walked and a cloned data block is remapped by ext2fs_extent_set_bmap,
// which cuts extents and splits or grows nodes as needed and writes what
// it changes (the inode included). An iterator error is kept in iterErr.
func (cs *cloneState) iterate(n ondisk.Inode) {
	it := &ext2fs.BlockIter{FS: cs.c.fs, IO: zeroedReads{c: cs.c}}
	changed, err := it.IterateInode(cs.c.libfs(), cs.ino, n, func(blk *uint64, blockcnt int64, _ uint64, _ int) int {
		nb, ch := cs.block(*blk, blockcnt)
		r := 0
		if ch {
			*blk = nb
			r = ext2fs.BlockChanged
		}
		if cs.err != "" {
			r |= ext2fs.BlockAbort
		}
		return r
	})
	if err != nil {
		cs.iterErr = err.Error()
	}
	if changed {
		cs.c.writeInode(cs.ino, n)
	}
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
		if b >= f.BlocksCount {
			// The library's bitmap test warns, then its allocation
			// statistics refuse the block.
			if c.dupMapOutOfRange(b) {
				c.dupMapRangeWarning(b)
			}
			c.diag("ext2fs_block_alloc_stats: Illegal block number: %d\n", b)
			dupBlocks++
		} else if c.blockDup.Test(f.ClusterOf(b)) {
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
		if err := c.iterateBlocksErr(c.newScratch(), ino, n, visit); err != "" {
			c.fix(problem.Problem{Code: problem.PR_1B_BLOCK_ITERATE, Ino: ino, Str: "delete_file", Err: err})
		}
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
	count, err := c.adjustEARefcount(acl, -1)
	if err != nil {
		c.fix(problem.Problem{Code: problem.PR_1B_ADJ_EA_REFCOUNT, Ino: ino, Blk: acl, Str: "delete_file"})
	}
	if (err == nil && count == 0) || (acl < f.BlocksCount && c.blockDup.Test(f.ClusterOf(acl))) {
		visit(acl, -5)
		c.chargeQuota(ino, n, uint64(-int64(f.BlockSize)), 0)
	}
}
