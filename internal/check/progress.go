package check

// Progress is told how far the check has come, for e2fsck's -C. Update
// is called on the goroutine running Run, in order, once for each of
// e2fsck's units of work, as e2fsck calls its ctx->progress: an
// implementation should do little more than store or write the numbers.
//
// Each pass's units are e2fsck's: groups in pass 1, directory blocks in
// pass 2, directories in pass 3, groups in pass 4 and twice the groups in
// pass 5 (block bitmaps, then inode bitmaps). A pass starts with cur 0
// and, unless the check stops during it, reports every cur from 1 to max
// in turn. As in e2fsck, pass 5 reports a bitmap's groups again after it
// fixed the bitmap (e2fsck counts them anew), and a check that restarts
// reports its passes again from pass 1.
type Progress interface {
	// Update says that cur of the max units of pass (1 to 5) are done.
	Update(pass int, cur, max uint64)
}

// progressState is what the last Update reported, so that a pass may
// report at the end of a batch of units (the calls for the units of the
// batch are made up) and the end of a pass can be reported without the
// pass knowing it.
type progressState struct {
	pass     int
	cur, max uint64
	// replay: a pass that ran as a speculation is being run again; what
	// it reported is not reported twice.
	replay bool
}

// progress reports that the units of pass up to cur (of max) are done:
// an Update for each unit not reported yet, in order. A cur of 0 starts
// the pass.
func (c *Checker) progress(pass int, cur, max uint64) {
	p := c.opt.Progress
	if p == nil {
		return
	}
	cur = min(cur, max)
	s := &c.prog
	if pass != s.pass || max != s.max {
		*s = progressState{pass: pass, cur: cur, max: max}
		p.Update(pass, cur, max)
		return
	}
	if cur == 0 && !s.replay {
		s.cur = 0
		p.Update(pass, 0, max)
		return
	}
	for s.cur < cur {
		s.cur++
		p.Update(pass, s.cur, max)
	}
}

// progressRewind makes the next units of the current pass be reported
// again from after cur, without reporting cur itself: pass 5 counts a
// bitmap's groups anew after fixing it.
func (c *Checker) progressRewind(pass int, cur uint64) {
	if c.opt.Progress != nil && c.prog.pass == pass && !c.prog.replay {
		c.prog.cur = min(cur, c.prog.cur)
	}
}

// progressDone reports that the pass that just ended did all its work.
func (c *Checker) progressDone(pass int) {
	if c.prog.pass == pass {
		c.progress(pass, c.prog.max, c.prog.max)
	}
}
