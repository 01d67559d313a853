package check

// endOfRun runs e2fsck's end-of-run checks after pass 5: the journal
// dropped before pass 1 is re-created (journal_repair.go), then the orphan
// file and the quota files are checked (spec 3.9).
func (c *Checker) endOfRun() {
	c.recreateJournal()
	if c.sink.Aborted() {
		return
	}
	c.checkOrphanFileEnd()
	if !c.sink.Aborted() {
		c.checkQuotas()
	}
	c.checkBackupSuper()
}
