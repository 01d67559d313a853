package check

import "sync/atomic"

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

// progressUpTo reports the units of pass up to cur, as progress does,
// but never starts the pass (a cur of 0 reports nothing).
func (c *Checker) progressUpTo(pass int, cur, max uint64) {
	if cur > 0 {
		c.progress(pass, cur, max)
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

// WorkProgress is what a Progress may also implement to hear how much of
// passes 1 and 2 the workers have done, in a finer measure than e2fsck's
// units (inode-table blocks in pass 1, directory blocks in pass 2): done
// of total, never going back within a pass. A bar drawn from it moves as
// the work does, where a pass's units can be few and large (a volume of
// eight groups). It is called on the goroutine running Run, between the
// Updates of the pass.
type WorkProgress interface {
	Work(pass int, done, total uint64)
}

// Progress ahead of the replay.
//
// The replay of passes 1 and 2 (engine.go) reaches a unit only when its
// worker has finished it and every unit before it is replayed, so
// progress reported by the replay alone comes in bursts: nothing while
// the worker of the next unit reads a group's inode table or 256
// directory blocks from a slow device, then the whole unit at once. So
// workers count their work as they do it (unitProgress), and the Run
// goroutine, while it waits for the next unit, reports from those counts:
// e2fsck's units, up to the first unit not finished that far, and the
// work done, for a bar.
//
// The -C fd lines stay e2fsck's, one for one: reported ahead of the
// replay are only units whose worker recorded nothing after which the
// replay could stop the run (recSink.mayStop), which the replay reports
// too when it gets there, so the lines written are the ones the replay
// alone writes, earlier.

// unitProgress is the work the workers of a pass have done. The workers
// write it; the Run goroutine reads it.
type unitProgress struct {
	pass int
	max  uint64 // e2fsck's units in the pass (the max of its Updates)
	// reached[i] is how many of e2fsck's units in work unit i (groups in
	// pass 1, directory blocks in pass 2) its worker has finished with
	// nothing recorded after which the replay could stop the run.
	reached []atomic.Uint32
	// frontier returns the units of the pass that may be reported when
	// the units before next are replayed, from reached.
	frontier func(next int) uint64
	// work of total is the pass's work done (for WorkProgress).
	work  atomic.Uint64
	total uint64
	// step is the work between two wakes of the Run goroutine, woken
	// the work done at the last.
	step  uint64
	woken atomic.Uint64
	wake  chan struct{}
	// serial: the units run on the Run goroutine, which reports at once
	// (set by runUnits).
	serial bool
	report func(next int)
}

// aheadSteps is how many times at most a pass's work wakes the Run
// goroutine to report: every 0.1% of it.
const aheadSteps = 1000

// newUnitProgress returns the counts of a pass of n work units, units
// of e2fsck's and total work.
func newUnitProgress(pass, n int, units, total uint64, frontier func(next int) uint64) *unitProgress {
	u := &unitProgress{pass: pass, max: units, reached: make([]atomic.Uint32, n), frontier: frontier,
		total: total, step: max(1, total/aheadSteps), wake: make(chan struct{}, 1)}
	return u
}

// reportAhead reports the progress of the workers of the current pass
// when the units before next are replayed. It runs on the Run goroutine.
func (c *Checker) reportAhead(next int) {
	u := c.ahead
	if u == nil || c.opt.Progress == nil {
		return
	}
	if wp, ok := c.opt.Progress.(WorkProgress); ok {
		wp.Work(u.pass, min(u.work.Load(), u.total), u.total)
	}
	c.progressUpTo(u.pass, u.frontier(next), u.max)
}

// unitReached says that the worker has finished the first k of e2fsck's
// units in its work unit: counted, unless something it recorded may stop
// the run before them (then neither they nor any later unit are reported
// ahead of the replay). A serial run reports them at once.
func (c *Checker) unitReached(k uint32) {
	u := c.ahead
	if u == nil {
		return
	}
	if c.abort || c.sink.Aborted() || c.rec != nil && c.rec.mayStop || c.repair != nil && c.repair.bbRestart.Load() {
		return
	}
	u.reached[c.unit].Store(k)
	if u.serial {
		u.report(c.unit)
	}
}

// workDone adds n to the pass's work done and wakes the Run goroutine
// every step of it (a serial run reports at once).
func (c *Checker) workDone(n uint64) {
	u := c.ahead
	if u == nil {
		return
	}
	w := u.work.Add(n)
	if u.serial {
		u.report(c.unit)
		return
	}
	if w >= u.woken.Load()+u.step {
		u.wakeRun(w)
	}
}

// wakeRun has the Run goroutine report the work done, w (and the units
// reached with it), unless a wake is pending: that one reports it.
func (u *unitProgress) wakeRun(w uint64) {
	u.woken.Store(w)
	select {
	case u.wake <- struct{}{}:
	default:
	}
}
