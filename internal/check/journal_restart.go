package check

import (
	"fmt"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Re-creating a dropped journal when pass 1 restarts the check. e2fsck's
// main asks PR_6_RECREATE_JOURNAL as soon as e2fsck_run returns, also
// when it returns for a restart, so the journal is made before the
// restart rather than at the end of the run (the restarted check starts
// with the flag cleared). At that point pass 1's block_found_map is still
// in place: the allocator e2fsck installs takes blocks from it (where the
// dropped journal's old blocks are free), while the library's alloc stats
// mark them in the bitmaps ext2fs_read_bitmaps loaded from the disk and
// count them off the group and superblock free counts. Closing the
// filesystem for the restart writes that block bitmap, the superblock and
// the descriptors (every copy: dropping the journal cleared
// EXT2_FLAG_MASTER_SB_ONLY); the restarted check's pass 5 then frees the
// old journal's blocks.

// journalBeforeRestart runs that step when the journal was dropped, for
// a restart asked by pass 1, 2 or 3. It returns false when the run stops
// because gofsck cannot follow (c.unsupported).
func (c *Checker) journalBeforeRestart() bool {
	if !c.journalDropped || c.invalidBitmaps || !c.repairing() {
		return true
	}
	return c.recreateJournalForRestart()
}

// recreateJournalForRestart is the re-creation itself.
func (c *Checker) recreateJournalForRestart() bool {
	f := c.fs
	n := ext2fs.DefaultJournalSize(f.BlocksCount)
	total, fc := ext2fs.JournalParams(c.sb, n)
	if n < 0 || !c.journalClustersModelled(total) || c.blockFound == nil {
		c.unsupported(problem.PR_6_RECREATE_JOURNAL)
		return false
	}
	ino := uint32(ondisk.JournalIno)
	old := make(ondisk.Inode, f.InodeSize)
	exists := f.ReadInode(ino, old, make([]byte, f.BlockSize)) != nil || old.BlocksLo() != 0
	// ext2fs_read_bitmaps: the bitmaps as on disk, with the edits fixes
	// made to them so far; the journal's alloc stats go there
	// (journalAllocStats edits c.repair.final).
	d := c.loadBitmaps()
	c.repair.mu.Lock()
	c.repair.applyEdits(d)
	c.repair.mu.Unlock()
	var plan *ext2fs.JournalPlan
	tree := false
	goal := c.restartJournalGoal(d)
	if !exists {
		var ok bool
		plan, ok = ext2fs.PlanJournal(f, c.blockFound, total, goal)
		if ok && f.ClusterBits != 0 {
			ok = journalOneRunAt(plan, goal)
		}
		if !ok && c.journalTreeModelled(true) {
			// More runs than four extents: the extent tree
			// (journal_tree.go).
			ok, tree = true, true
		}
		if !ok {
			// Not enough room in the found map: the library's partial
			// allocation is not modelled here.
			c.unsupported(problem.PR_6_RECREATE_JOURNAL)
			return false
		}
	}
	if !c.fix(problem.Problem{Code: problem.PR_6_RECREATE_JOURNAL}) {
		return true
	}
	c.log(fmt.Sprintf("Creating journal (%d blocks): ", n))
	if exists {
		c.log("File exists: while trying to create journal\n")
		return true
	}
	c.applyBitmapEdits(d)
	if tree {
		if !c.writeJournalTree(total, fc, c.blockFound, goal) {
			c.unsupported(problem.PR_6_RECREATE_JOURNAL)
			return false
		}
	} else {
		c.writeJournal(plan, total, fc)
	}
	c.writeDirtyBitmapsForRestart(d)
	c.log(" Done.\n")
	c.log("\n*** journal has been regenerated ***\n")
	return true
}

// writeDirtyBitmapsForRestart is ext2fs_write_bitmaps at the close before
// a restart: the block bitmap, which the journal's allocation dirtied, and
// the inode bitmap only when a fix edited it; each group's bitmap is
// skipped while the group is BLOCK_UNINIT (INODE_UNINIT).
func (c *Checker) writeDirtyBitmapsForRestart(d *diskBitmaps) {
	c.repair.mu.Lock()
	inodesDirty := len(c.repair.inodeEdits) > 0
	c.repair.mu.Unlock()
	c.writeGroupBitmaps(d, inodesDirty)
}

// restartJournalGoal is extent_fallocate's goal for an empty inode: the
// midpoint block moved to the first block free in fs->block_map (d, the
// bitmaps as read from the disk) at or after it; unchanged when there is
// none. The allocation then searches pass 1's found map from there.
func (c *Checker) restartJournalGoal(d *diskBitmaps) uint64 {
	f := c.fs
	goal := ext2fs.MidpointJournalBlock(f)
	if !c.sb.HasIncompat(ondisk.IncompatExtents) {
		return goal
	}
	ratio := uint64(1) << f.ClusterBits
	for b := goal &^ (ratio - 1); b < f.BlocksCount; b += ratio {
		if !d.blocks.Test(f.ClusterOf(b)) {
			return b
		}
	}
	return goal
}

// journalOneRunAt reports whether the plan is one run of contiguous
// blocks starting at goal. On bigalloc e2fsck's found map has a bit per
// block (a subcluster bitmap) where gofsck's has one per cluster: the
// two searches agree when the journal fits in whole free clusters from
// the goal on, and gofsck does not follow otherwise.
func journalOneRunAt(p *ext2fs.JournalPlan, goal uint64) bool {
	if len(p.Data) == 0 || p.Data[0] != goal || len(p.Meta) != 0 {
		return false
	}
	for i, b := range p.Data {
		if b != goal+uint64(i) {
			return false
		}
	}
	return true
}
