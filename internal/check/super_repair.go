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
