package check

import "gofsck/internal/ext2fs"

// Allocation during a repair, e2fsck's e2fsck_get_alloc_block and
// ext2fs_new_inode over the maps the passes have built: a block (cluster)
// is free when no inode or metadata claimed it (blockFound), an inode when
// pass 1 did not find it in use. An allocation marks the map and records
// the on-disk bitmap edit, so pass 5 sees the bitmaps as e2fsck's
// allocator leaves them. Serial code only (the replay or direct mode).

// allocBlock returns a free block at or after goal (wrapping around to
// the first data block), marks it in use, and reports false when the
// filesystem is full. With bigalloc it returns the first block of a free
// cluster.
func (c *Checker) allocBlock(goal uint64) (uint64, bool) {
	cl, ok := ext2fs.NewCluster(c.fs, c.blockFound, goal, nil)
	if !ok {
		return 0, false
	}
	c.blockFound.Set(cl)
	c.markBlockOnDisk(cl, true)
	return cl << c.fs.ClusterBits, true
}

// allocInode returns a free inode number, preferring the group of dir
// (0: the first group), marks it in use (and a directory in inodeDir when
// isDir), and reports false when there is none.
func (c *Checker) allocInode(dir uint32, isDir bool) (uint32, bool) {
	ino, ok := ext2fs.NewInodeNum(c.fs, c.inodeUsed, dir)
	if !ok {
		return 0, false
	}
	c.inodeUsed.Set(uint64(ino))
	if isDir {
		c.inodeDir.Set(uint64(ino))
	}
	c.markInodeOnDisk(ino, true)
	return ino, true
}
