package check

import "gofsck/internal/ext2fs"

// Block allocation after pass 5 (the quota files' rewrite, e2fsck's main
// after the passes). Pass 5 has released e2fsck's block found map by then,
// so the library allocates from fs->block_map, the bitmap pass 5 left (the
// one Finish writes, c.repair.final), and ext2fs_block_alloc_stats2 keeps
// the descriptors' and superblock's free counts. The pass maps are kept in
// step so that nothing later sees a stale picture. Serial code only.

// lateAllocBlock is ext2fs_new_block2 over fs->block_map (the first free
// cluster at or after goal, wrapping around to the first data block; goal
// 0 or past the end means the first data block) followed by
// ext2fs_block_alloc_stats2(+1). It returns the first block of the
// cluster and false when the filesystem is full.
func (c *Checker) lateAllocBlock(goal uint64) (uint64, bool) {
	d := c.repair.final
	if d == nil {
		return 0, false
	}
	f := c.fs
	cl, ok := ext2fs.NewCluster(f, d.blocks, goal, nil)
	if !ok {
		return 0, false
	}
	d.blocks.Set(cl)
	c.repair.bitmapsDirty = true
	c.blockFound.Set(cl)
	blk := cl << f.ClusterBits
	c.groupStatsBlock(blk, 1)
	return blk, true
}

// lateFreeBlock is ext2fs_block_alloc_stats2(fs, blk, -1) after pass 5:
// the bit is cleared and the counts go up even when the block was free.
func (c *Checker) lateFreeBlock(blk uint64) {
	d := c.repair.final
	f := c.fs
	if d == nil || blk < f.FirstDataBlock || blk >= f.BlocksCount {
		return
	}
	cl := f.ClusterOf(blk)
	d.blocks.Clear(cl)
	c.repair.bitmapsDirty = true
	c.blockFound.Clear(cl)
	c.groupStatsBlock(blk, -1)
}
