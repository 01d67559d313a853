package check

// endOfRun runs e2fsck's end-of-run checks after pass 5: the orphan file
// and the quota files (spec 3.9).
func (c *Checker) endOfRun() {
	c.checkOrphanFileEnd()
	if !c.sink.Aborted() {
		c.checkQuotas()
	}
}
