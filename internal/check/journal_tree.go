package check

import (
	"gofsck/internal/bitmap"
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
)

// A re-created journal whose free runs need more than the four extents an
// inode holds (ext2fs.PlanJournal gives up): ext2fs.CreateJournalTree,
// ext2fs_fallocate's extent by extent, with the extent handle's tree
// blocks from e2fsck's allocator. At the end of the run that is the
// bitmaps pass 5 left (its found map is gone by then). Before a restart
// (journal_restart.go) the free runs and tree blocks come from pass 1's
// found map instead, which the claims mark too (e2fsck's alloc-stats
// callbacks), while the stats go to the bitmaps read from the disk. On
// bigalloc (at the end of the run only: before a restart e2fsck's found
// map has a bit per block) the runs are of whole clusters and a tree
// block takes a cluster.

// journalTreeModelled reports whether writeJournalTree can follow the
// library for this filesystem.
func (c *Checker) journalTreeModelled(restart bool) bool {
	return c.sb.HasIncompat(ondisk.IncompatExtents) && (c.fs.ClusterBits == 0 || !restart)
}

// writeJournalTree creates the n-block journal (fc of them for fast
// commits) from goal on: free blocks are searched in found (the bitmaps
// to be written at the end of the run, pass 1's found map before a
// restart), which each claim marks, and counted by journalAllocStats in
// the bitmaps to be written. The extent handle writes its tree blocks through the
// library's path (libfs), the zeroed blocks, the journal superblock and
// inode through the repair path. It returns false when the library's
// path is not followed (the run then stops as unsupported).
func (c *Checker) writeJournalTree(n, fc uint64, found *bitmap.Bitmap, goal uint64) bool {
	f := c.fs
	stats := func(blk uint64) {
		c.journalAllocStats(blk)
		found.Set(f.ClusterOf(blk))
	}
	if !ext2fs.CreateJournalTree(c.libfs(), repairIO{c}, found, n, fc, goal, uint32(c.opt.Now.Unix()), stats) {
		return false
	}
	c.markBitmapsDirty()
	return true
}
