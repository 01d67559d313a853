package check

import (
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Pass 2's PR_2_BAD_INLINE_DIR_SIZE "yes" path (e2fsck's
// fix_inline_dir_size): an inline directory whose data size (60 bytes of
// i_block plus the "system.data" attribute) is not a multiple of 4, or
// leaves fewer than 12 bytes past i_block, is rewritten with the size
// rounded up to the next multiple of 4 (or cut back to i_block alone),
// through the library's inline-data and extended-attribute writers, and
// i_size follows. A rewrite that finds no room is retried 4 bytes
// smaller; one that fails again is PR_2_FIX_INLINE_DIR_FAILED, whose yes
// (i_size 0, the inline flag dropped, the rest of the check treating the
// data as a block at 0) gofsck does not make: the CanFix guard stops the
// run there.
//
// The library's writers rewrite every attribute (ext2fs_xattrs_write):
// the in-inode area and, when the inode has one, the EA block (entries
// hashed, a zero block hash, one reference); values in EA inodes keep
// their reference and get their hash. A shared EA block is copied to a
// new block as the library does, while the block bitmap is unloaded in
// e2fsck (libBlockMapUnloaded). A layout the library would refuse stops
// the run as unsupported (nothing is written).

// fixInlineDirSize is fix_inline_dir_size for directory ino, whose inline
// data (size bytes) is in buf. It returns the new size, or false when the
// check must stop (an unsupported layout, or a declined
// PR_2_FIX_INLINE_DIR_FAILED, where e2fsck aborts the directory scan).
func (w *dirWorker) fixInlineDirSize(ino uint32, size int, buf []byte) (int, bool) {
	c := w.c
	oldSize := size
	var newSize int
	if oldSize > ondisk.IBlockSize && oldSize < ondisk.IBlockSize+12 {
		oldSize = ondisk.IBlockSize
		newSize = oldSize
	} else {
		newSize = oldSize + 4 - oldSize&3
	}
	if newSize > len(buf) {
		c.unsupported(problem.PR_2_BAD_INLINE_DIR_SIZE)
		return 0, false
	}
	clear(buf[oldSize:newSize])
	err := ext2fs.InlineDataSet(c.inlineFS(), ino, buf, newSize)
	if err == ext2fs.ErrInlineDataNoSpace {
		newSize -= 4
		err = ext2fs.InlineDataSet(c.inlineFS(), ino, buf, newSize)
	}
	if err == ext2fs.ErrXattrNotModelled {
		c.unsupported(problem.PR_2_BAD_INLINE_DIR_SIZE)
		return 0, false
	}
	if err != nil {
		// Not registered: a yes stops the run before the question.
		c.fix(problem.Problem{Code: problem.PR_2_FIX_INLINE_DIR_FAILED, Ino: ino, Num: uint64(size)})
		c.unsupported(problem.PR_2_FIX_INLINE_DIR_FAILED)
		return 0, false
	}
	n := c.readFullInode(ino)
	n.SetSize(uint64(newSize))
	c.writeInode(ino, n)
	c.invalidateNames()
	return newSize, true
}

// inlineFS is the library's filesystem for its inline-data writers:
// the repair path's writes, and e2fsck's allocator while the block
// bitmap is unloaded (libBlockMapUnloaded; a shared EA block is not
// modelled otherwise).
func (c *Checker) inlineFS() *ext2fs.Filsys {
	fsys := &ext2fs.Filsys{FS: c.fs, IO: repairIO{c}}
	if c.libBlockMapUnloaded() {
		fsys.Alloc = ext2fs.AllocFuncs{Alloc: c.unloadedAllocBlock}
	}
	return fsys
}

// libBlockMapUnloaded reports whether e2fsck would have the block bitmap
// unloaded at this point of pass 2 (fs->block_map NULL): no fix read it
// to edit it (no bitmap edit so far, no pass 1B). On bigalloc e2fsck's
// found map has a bit per block, which gofsck's does not model here.
func (c *Checker) libBlockMapUnloaded() bool {
	c.repair.mu.Lock()
	defer c.repair.mu.Unlock()
	return c.fs.ClusterBits == 0 && len(c.repair.blockEdits) == 0 && len(c.repair.inodeEdits) == 0 &&
		c.repair.final == nil && c.dupCount == 0
}

// unloadedAllocBlock is ext2fs_alloc_block2 through e2fsck's allocator
// while the block bitmap is unloaded: the first block free in the found
// map at or after goal (wrapping around), marked there, and the group
// and superblock counts taken (ext2fs_block_alloc_stats2); the on-disk
// bitmap is not changed, so pass 5 reports the block as e2fsck's does.
// The library zeroes the block before the caller writes it whole.
func (c *Checker) unloadedAllocBlock(goal uint64) (uint64, bool) {
	b, ok := ext2fs.NewCluster(c.fs, c.blockFound, goal, nil)
	if !ok {
		return 0, false
	}
	c.blockFound.Set(b)
	c.groupStatsBlock(b, 1)
	return b, true
}
