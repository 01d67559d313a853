package check

import (
	"bytes"

	"gofsck/internal/problem"
)

// Fixes of the superblock and group-descriptor checks (check_super_block)
// that are made in super.go's check loop itself.
func init() {
	canRepair(
		problem.PR_0_GDT_CSUM, problem.PR_0_GDT_CSUM_LATCH,
		problem.PR_0_GDT_UNINIT,
		problem.PR_0_BB_UNINIT_LAST,
		problem.PR_0_GDT_ITABLE_UNUSED,
	)
}

// descsUnchanged reports whether the descriptors are still as opened.
func (c *Checker) descsUnchanged() bool {
	return c.repairing() && bytes.Equal(c.fs.GDT(), c.repair.origGDT)
}

// descFixesUnchanged is called after the descriptor loop: its fixes change
// the descriptors in memory without marking the filesystem changed (e2fsck
// recomputes their checksums but does not mark the superblock dirty), so
// they alone do not make the run report "FILE SYSTEM WAS MODIFIED". The
// descriptors are still written at the end, as e2fsck's final flush
// writes them.
func (c *Checker) descFixesUnchanged(wasUnchanged bool) {
	if wasUnchanged {
		c.repair.origGDT = bytes.Clone(c.fs.GDT())
	}
}

// FixSkipCounts is the writable part of e2fsck's clean skip
// (check_if_skip): the superblock's free inode and block counts are set
// from the sums of the group descriptors' counts when they differ
// (PR_0_FREE_INODE_COUNT, PR_0_FREE_BLOCK_COUNT; modern kernels do not
// keep the global counts current). It reports whether it changed the
// superblock, which must then be written (WriteMasterSuper).
func (c *Checker) FixSkipCounts() bool {
	if !c.repairing() {
		return false
	}
	f := c.fs
	sb := c.sb
	var freeBlocks uint64
	var freeInodes uint32
	for g := uint32(0); g < f.Groups; g++ {
		gd := f.Group(g)
		freeBlocks += uint64(gd.FreeBlocks())
		freeInodes += gd.FreeInodes()
	}
	freeBlocks <<= f.ClusterBits
	changed := false
	if sb.FreeInodesCount() != freeInodes &&
		c.fix(problem.Problem{Code: problem.PR_0_FREE_INODE_COUNT, Ino: sb.FreeInodesCount(), Ino2: freeInodes}) {
		sb.SetFreeInodesCount(freeInodes)
		changed = true
	}
	if sb.FreeBlocksCount() != freeBlocks &&
		c.fix(problem.Problem{Code: problem.PR_0_FREE_BLOCK_COUNT, Blk: sb.FreeBlocksCount(), Blk2: freeBlocks}) {
		sb.SetFreeBlocksCount(freeBlocks)
		changed = true
	}
	return changed
}

func init() {
	canRepair(problem.PR_0_FREE_INODE_COUNT, problem.PR_0_FREE_BLOCK_COUNT)
}
