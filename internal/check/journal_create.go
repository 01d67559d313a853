package check

import (
	"fmt"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Dropping an unusable journal (PR_0_JOURNAL_BAD_INODE) and creating a new
// one at the end of the run (PR_6_RECREATE_JOURNAL, the library's
// ext2fs_add_journal_inode3 with the default size).

// log prints s through the Sink (a line outside the problem table).
func (c *Checker) log(s string) { c.sink.Log(s) }

// dropJournal is the PR_0_JOURNAL_BAD_INODE fix: has_journal, the journal
// inode number and its backup are cleared, needs_recovery too (with a full
// check), and every superblock copy is written.
func (c *Checker) dropJournal() {
	if !c.repairing() {
		return
	}
	sb := c.sb
	if sb.HasCompat(ondisk.CompatHasJournal) && sb.JournalInum() != 0 {
		c.log("*** journal has been deleted ***\n\n")
	}
	sb.SetFeatureCompat(sb.FeatureCompat() &^ ondisk.CompatHasJournal)
	sb.SetJournalInum(0)
	sb.ClearJnlBlocks()
	c.journalDropped = true
	c.writeAllSupers()
	c.clearRecover(true)
}

// recreateJournal is unix.c's PR_6_RECREATE_JOURNAL step after the passes.
func (c *Checker) recreateJournal() {
	if !c.journalDropped || c.invalidBitmaps || !c.repairing() {
		return
	}
	f := c.fs
	n := ext2fs.DefaultJournalSize(f.BlocksCount)
	d := c.repair.final
	total, fc := ext2fs.JournalParams(c.sb, n)
	if n < 0 || d == nil || !c.journalClustersModelled(total) {
		c.unsupported(problem.PR_6_RECREATE_JOURNAL)
		return
	}
	// Not enough room: the library allocates every free block before it
	// fails (a fuller tree would need even more).
	full := ext2fs.FreeBlocksCount(f, d.blocks) < total
	if full && (f.ClusterBits != 0 || !c.journalNoSpaceSimple(d)) {
		c.unsupported(problem.PR_6_RECREATE_JOURNAL)
		return
	}
	var plan *ext2fs.JournalPlan
	tree := false
	if !full {
		var ok bool
		if plan, ok = ext2fs.PlanJournal(f, d.blocks, total, ext2fs.MidpointJournalBlock(f)); !ok {
			// More runs than the inode's four extents: the library's
			// extent tree (journal_tree.go).
			if tree = c.journalTreeModelled(false); !tree {
				c.unsupported(problem.PR_6_RECREATE_JOURNAL)
				return
			}
		}
	}
	if !c.fix(problem.Problem{Code: problem.PR_6_RECREATE_JOURNAL}) {
		return
	}
	c.log(fmt.Sprintf("Creating journal (%d blocks): ", n))
	ino := uint32(ondisk.JournalIno)
	old := make(ondisk.Inode, f.InodeSize)
	if err := f.ReadInode(ino, old, make([]byte, f.BlockSize)); err != nil || old.BlocksLo() != 0 || old.BlocksHi() != 0 {
		c.log("File exists: while trying to create journal\n")
		return
	}
	if full {
		c.journalNoSpace(d, total)
		c.log(string(ext2fs.ErrBlockAllocFail) + ": while trying to create journal\n")
		return
	}
	if tree {
		if !c.writeJournalTree(total, fc, d.blocks, ext2fs.MidpointJournalBlock(f)) {
			c.unsupported(problem.PR_6_RECREATE_JOURNAL)
			return
		}
	} else {
		c.writeJournal(plan, total, fc)
	}
	c.log(" Done.\n")
	c.log("\n*** journal has been regenerated ***\n")
}

// journalNoSpaceSimple reports whether a journal that does not fit fails
// the way journalNoSpace emulates: with extents, the free space is at
// most four runs plus one block (the fifth extent's block is taken, then
// the extent block it needs cannot be).
func (c *Checker) journalNoSpaceSimple(d *diskBitmaps) bool {
	if !c.sb.HasIncompat(ondisk.IncompatExtents) {
		return false
	}
	runs := ext2fs.FreeRuns(c.fs, d.blocks, ext2fs.MidpointJournalBlock(c.fs))
	return len(runs) <= 4 || len(runs) == 5 && runs[4][1] == 1
}

// journalNoSpace is a failed ext2fs_add_journal_inode3 for lack of space
// (journalNoSpaceSimple), ext2fs.JournalNoSpace through the repair path
// with the bitmaps to be written.
func (c *Checker) journalNoSpace(d *diskBitmaps, n uint64) {
	f := c.fs
	runs := ext2fs.FreeRuns(c.fs, d.blocks, ext2fs.MidpointJournalBlock(c.fs))
	var ino ondisk.Inode = make([]byte, f.InodeSize)
	if err := f.ReadInode(ondisk.JournalIno, ino, make([]byte, f.BlockSize)); err != nil {
		clear(ino)
	}
	ext2fs.JournalNoSpace(c.journalFS(), ino, runs, n, uint32(c.opt.Now.Unix()), c.journalAllocStats)
	c.markBitmapsDirty()
}

// journalClustersModelled reports whether a journal of n blocks is laid
// out as planJournal lays it out: on bigalloc (extents only) every
// extent must cover whole clusters, as ext2fs_fallocate's does when the
// journal starts at logical block 0 and its size is a multiple of the
// cluster ratio.
func (c *Checker) journalClustersModelled(n uint64) bool {
	f := c.fs
	if f.ClusterBits == 0 {
		return true
	}
	ratio := uint64(1) << f.ClusterBits
	return f.ClusterBits < 16 && c.sb.HasIncompat(ondisk.IncompatExtents) && n%ratio == 0
}

// writeJournal writes the planned journal of n blocks (fc of them for
// fast commits) through the repair path, each block counted by
// journalAllocStats (ext2fs.WriteJournal).
func (c *Checker) writeJournal(p *ext2fs.JournalPlan, n, fc uint64) {
	ext2fs.WriteJournal(c.journalFS(), p, n, fc, uint32(c.opt.Now.Unix()), c.journalAllocStats)
	c.markBitmapsDirty()
}

// journalFS is the filesystem as the journal's creation writes it: every
// block write counts as a change. It allocates nothing: the blocks are
// chosen from the caller's bitmaps (ext2fs.PlanJournal) or through the
// extent handle's own allocator (journal_tree.go).
func (c *Checker) journalFS() *ext2fs.Filsys {
	return &ext2fs.Filsys{FS: c.fs, IO: repairIO{c}}
}

// markBitmapsDirty records that the bitmaps to be written changed.
func (c *Checker) markBitmapsDirty() {
	c.repair.mu.Lock()
	c.repair.bitmapsDirty = true
	c.repair.mu.Unlock()
}

// journalAllocStats is ext2fs_block_alloc_stats2(fs, blk, +1) after pass
// 5: the bitmaps to be written and the counts (ext2fs.TakeBlockStats,
// called for every block of the clusters taken on bigalloc). The
// library's counts wrap below zero: a journal re-created before a
// restart (journal_restart.go) takes blocks the descriptors still count
// as used.
func (c *Checker) journalAllocStats(blk uint64) {
	c.repair.final.blocks.Set(c.fs.ClusterOf(blk))
	ext2fs.TakeBlockStats(c.fs, blk)
}
