package check

import (
	"gofsck/internal/bitmap"
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Pass 1E: extent trees that could be shallower or narrower, or are too
// deep, are rebuilt (e2fsck's e2fsck_should_rebuild_extents and
// rebuild_extents): the tree's index blocks are freed, its extents
// collected (merged where they continue each other) and inserted again
// into an empty root with the library's handle (ext2fs.ExtentHandle), which
// allocates new tree blocks from the block found map as the library
// does for e2fsck.

// extSeg is one extent of a rebuild list.
type extSeg struct {
	lblk, pblk uint64
	len        uint64
	uninit     bool
}

// askRebuildExtents asks code (level lvl) about the inode of x and queues
// it for pass 1E on "yes".
func (c *Checker) askRebuildExtents(x *extentScan, code problem.Code, lvl int) {
	w := x.w
	p := problem.Problem{Code: code, Ino: w.ino, Blk: uint64(lvl), Inode: c.inodeInfo(w.n)}
	if c.fix(p) && c.rebuildQueued(w.ino) {
		c.p1.rebuild.Set(uint64(w.ino))
	}
}

// convertBmapLater queues the inode of w for pass 1E under -E
// bmap2extent (a directory to be rebuilt in pass 3A is converted there).
func (c *Checker) convertBmapLater(w *blockWalk) {
	if !c.opt.ConvertBmap || (w.isDir && c.rehashed(w.ino)) {
		return
	}
	if c.rebuildQueued(w.ino) {
		c.p1.rebuild.Set(uint64(w.ino))
	}
}

// rebuildQueued reports whether a "yes" to rebuilding ino's extent tree
// queues it for pass 1E (e2fsck_rebuild_extents_later).
func (c *Checker) rebuildQueued(ino uint32) bool {
	return c.repairing() && c.p1.rebuild != nil && c.sb.HasIncompat(ondisk.IncompatExtents) &&
		(ino == ondisk.RootIno || ino >= c.fs.FirstIno)
}

// maxExtentWalkSteps bounds a walk of one extent tree: a hostile tree
// whose index entries share children would otherwise be walked an
// exponential number of times.
const maxExtentWalkSteps = 1 << 26

// loadExtentList is load_extents: the leaf extents of ino's tree in
// order (merged where one continues the previous), walked with the
// library's handle; each index block is freed when the walk first enters
// it (its count is returned). An error ends the walk (the blocks freed
// so far stay freed).
func (c *Checker) loadExtentList(ino uint32, n ondisk.Inode, list []extSeg) ([]extSeg, uint64, error) {
	m := make(ondisk.Inode, len(n))
	copy(m, n)
	x, err := c.openExtHandle(ino, m)
	if err != nil {
		return list, 0, err
	}
	var freed uint64
	ext, err := x.Get(ext2fs.ExtentRoot)
	for steps := 0; err == nil; steps++ {
		if steps >= maxExtentWalkSteps {
			// Only a tree whose nodes share children gets here.
			return list, freed, ext2fs.ErrExtentCycle
		}
		switch {
		case ext.Flags&ext2fs.ExtentFlagSecondVisit != 0:
		case ext.Flags&ext2fs.ExtentFlagLeaf == 0:
			freed++
			c.releaseBlock(ext.Pblk)
		default:
			seg := extSeg{lblk: ext.Lblk, pblk: ext.Pblk, len: uint64(ext.Len), uninit: ext.Flags&ext2fs.ExtentFlagUninit != 0}
			if k := len(list); k > 0 {
				last := &list[k-1]
				if last.pblk+last.len == seg.pblk && last.lblk+last.len == seg.lblk &&
					last.uninit == seg.uninit && last.len+seg.len < 1<<32 {
					last.len += seg.len
					break
				}
			}
			list = append(list, seg)
		}
		ext, err = x.Get(ext2fs.ExtentNext)
	}
	if err == ext2fs.ErrExtentNoNext {
		err = nil
	}
	return list, freed, err
}

// loadBlockMap is find_blocks over ext2fs_block_iterate3: the mapped
// blocks of a block-mapped inode as extents (a block continuing the last
// extent extends it), and its indirect blocks freed and counted. An
// indirect block outside the filesystem, or one that cannot be read, maps
// nothing (its blocks keep their places in the count) and makes the walk
// fail at the end with the last such error.
func (c *Checker) loadBlockMap(n ondisk.Inode, list []extSeg) ([]extSeg, uint64, error) {
	f := c.fs
	var freed uint64
	var err error
	it := &ext2fs.BlockIter{FS: f, IO: zeroedReads{c: c, failed: &err}, Flags: ext2fs.BlockFlagReadOnly}
	it.Iterate(n, func(blk *uint64, blockcnt int64, _ uint64, _ int) int {
		b := *blk
		if blockcnt < 0 {
			if b >= f.BlocksCount || b < f.FirstDataBlock {
				err = ext2fs.ErrBadIndBlock
				*blk = 0 // skipped, in the iterator's copy only
				return 0
			}
			freed++
			c.releaseBlock(b)
			return 0
		}
		lblk := uint64(blockcnt)
		if k := len(list); k > 0 {
			last := &list[k-1]
			if last.lblk+last.len == lblk && last.pblk+last.len == b && last.len+1 < 1<<32 {
				last.len++
				return 0
			}
		}
		list = append(list, extSeg{lblk: lblk, pblk: b, len: 1})
		return 0
	})
	return list, freed, err
}

// pass1E rebuilds the queued extent trees (rebuild_extents). The queue is
// emptied whether or not they are (rebuild_extents frees
// inodes_to_rebuild), so a later restart carries nothing (RebuildQueue).
func (c *Checker) pass1E() {
	if c.p1.rebuild == nil {
		return
	}
	defer func() { c.p1.rebuild = newRebuildMap(uint64(c.fs.InodesCount) + 1) }()
	if c.invalidBitmaps || !c.sb.HasIncompat(ondisk.IncompatExtents) {
		return
	}
	if c.sink.Status().Invalid {
		return
	}
	first := true
	var list []extSeg
	var err error
	for ino := c.p1.rebuild.NextSet(1); ino <= uint64(c.fs.InodesCount); ino = c.p1.rebuild.NextSet(ino + 1) {
		if first {
			c.sink.Header(problem.PR_1E_PASS_HEADER)
			first = false
		}
		if list, err = c.rebuildExtentTree(uint32(ino), list[:0]); err != nil {
			c.fix(problem.Problem{Code: problem.PR_1E_OPTIMIZE_EXT_ERR, Ino: uint32(ino), Err: err.Error()})
		}
		if c.sink.Aborted() || c.abort {
			return
		}
	}
}

// RebuildQueue lists the inodes queued for pass 1E, for the run after a
// restart (Options.Rebuild).
func (c *Checker) RebuildQueue() []uint32 {
	if c.p1.rebuild == nil {
		return nil
	}
	var q []uint32
	for ino := c.p1.rebuild.NextSet(1); ino <= uint64(c.fs.InodesCount); ino = c.p1.rebuild.NextSet(ino + 1) {
		q = append(q, uint32(ino))
	}
	return q
}

// rebuildExtentTree is rebuild_extent_tree: the mapping of inode ino
// (extents or a block map) is collected and written back as a new
// extent tree. Unused and inline-data inodes are left alone. list is
// scratch space, returned for reuse.
func (c *Checker) rebuildExtentTree(ino uint32, list []extSeg) ([]extSeg, error) {
	n := c.readFullInode(ino)
	if n.LinksCount() == 0 || n.Flags()&ondisk.FlagInlineData != 0 {
		return list, nil
	}
	var freed uint64
	var err error
	if n.Flags()&ondisk.FlagExtents != 0 {
		list, freed, err = c.loadExtentList(ino, n, list)
	} else {
		list, freed, err = c.loadBlockMap(n, list)
	}
	if err != nil {
		return list, err
	}
	return list, c.rewriteExtents(ino, n, list, freed)
}

// rewriteExtents is rewrite_extent_replay: the inode's tree is emptied,
// the freed index blocks leave i_blocks and the quota, and the extents
// are inserted one after the other with the library's handle, which
// allocates the tree blocks it needs; the blocks it adds are charged to
// the quota.
func (c *Checker) rewriteExtents(ino uint32, n ondisk.Inode, list []extSeg, freed uint64) error {
	f := c.fs
	n.SetFlags(n.Flags() &^ ondisk.FlagExtents)
	clear(n.IBlock())
	c.chargeQuota(ino, n, uint64(-int64(freed*uint64(f.BlockSize))), 0)
	if err := ext2fs.IblkSubBlocks(f, n, freed); err != nil {
		return err
	}
	x, err := c.openExtHandle(ino, n)
	if err != nil {
		return err
	}
	startVal := ext2fs.StatIBlocks(f, n)
	for _, s := range list {
		for s.len > 0 {
			max := uint64(ext2fs.ExtInitMaxLen)
			ext := ext2fs.Extent{Lblk: s.lblk, Pblk: s.pblk, Flags: ext2fs.ExtentFlagLeaf}
			if s.uninit {
				max = ext2fs.ExtUninitMaxLen
				ext.Flags |= ext2fs.ExtentFlagUninit
			}
			l := min(s.len, max)
			ext.Len = uint32(l)
			ext.Flags &= ext2fs.ExtentFlagUninit
			if err := x.Insert(ext, true); err != nil {
				return err
			}
			if err := x.FixParents(); err != nil {
				return err
			}
			s.lblk += l
			s.pblk += l
			s.len -= l
		}
	}
	if d := ext2fs.StatIBlocks(f, n) - startVal; d != 0 {
		c.chargeQuota(ino, n, d<<9, 0)
	}
	c.writeInode(ino, n)
	return nil
}

// newRebuildMap returns the map of inodes queued for pass 1E.
func newRebuildMap(n uint64) *bitmap.Bitmap { return bitmap.New(n) }
