package check

// Progress is told how far the check has come, for e2fsck's -C. Its
// Update is called on the goroutine running Run, in order, at most once
// per unit of work (a group, a batch of directory blocks, a thousand
// directories), never per inode or per entry: an implementation should
// only store the numbers (atomically) for a reporter goroutine to print.
//
// Each pass's units are e2fsck's: groups in pass 1, directory blocks in
// pass 2, directories in pass 3, groups in pass 4 and twice the groups in
// pass 5. A pass starts with cur 0 and, unless the check stops during it,
// ends with cur == max.
type Progress interface {
	// Update says that cur of the max units of pass (1 to 5) are done.
	Update(pass int, cur, max uint64)
}

// progressState is the pass and total of the last Update, so that the
// end of a pass can be reported without the pass knowing it.
type progressState struct {
	pass int
	max  uint64
}

// progress reports cur of max units of pass done.
func (c *Checker) progress(pass int, cur, max uint64) {
	if c.opt.Progress == nil {
		return
	}
	c.prog = progressState{pass: pass, max: max}
	c.opt.Progress.Update(pass, min(cur, max), max)
}

// progressDone reports that the pass that just ended did all its work.
func (c *Checker) progressDone(pass int) {
	if c.opt.Progress == nil || c.prog.pass != pass {
		return
	}
	c.opt.Progress.Update(pass, c.prog.max, c.prog.max)
}
