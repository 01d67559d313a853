package check

// checkOrphanFileEnd validates the orphan file at the end of the run
// (PR_6_ORPHAN_*). Not implemented yet.
func (c *Checker) checkOrphanFileEnd() {}
