package check

// A group bitmap found on the bad-block list (PR_1_BB_BAD_BLOCK,
// PR_1_IB_BAD_BLOCK answered yes) is relocated at the end of pass 1 with
// the other group metadata to move (relocate.go, e2fsck's
// handle_fs_bad_blocks): it gets a new block holding a copy of the old
// one, and every superblock and descriptor copy is written.

// markInvalidBitmap records that group g's block (or inode) bitmap must
// be relocated once pass 1 is over.
func (c *Checker) markInvalidBitmap(g uint32, block bool) {
	if !c.repairing() {
		return
	}
	what := relocInodeBitmap
	if block {
		what = relocBlockBitmap
	}
	c.markRelocate(g, what)
}
