package check

import (
	"context"
	"maps"
	"runtime"
	"slices"
	"sync/atomic"

	"gofsck/internal/problem"
)

// Speculative parallel passes for writable runs.
//
// The parallel engine (engine.go) checks units concurrently only where no
// fix can change what a later unit sees, which holds when every answer is
// "no". A writable run answers "yes", so its passes 1 and 2 would run
// serially. Most writable runs, though, check filesystems that turn out
// clean (a forced check at boot, a check after journal recovery), and a
// pass that reports nothing does the same whatever the answers would have
// been.
//
// So a writable run first runs pass 1, then pass 2, in parallel as a
// speculation: every problem is answered "no" and fails the speculation,
// as does any write, header, library message or stop. A pass that ends
// with none of these is kept as it is: its state is exactly what the
// serial pass would have built. Otherwise the Checker is put back as it
// was before the pass and the pass runs again serially with the real sink,
// which has seen nothing of the speculation. Passes 1 and 2 allocate their
// state afresh; saveSpeculation copies what they change in place.
//
// A failed speculation stops at its first problem (specSink.Aborted), so
// it costs at most one parallel pass, usually much less.

// specSink is the sink of a speculative pass. Its methods are called from
// the replaying goroutine and, through Answer, from workers.
type specSink struct {
	failed atomic.Bool
	real   Sink // the run's sink, which the speculation stands in for
}

func (s *specSink) fail() { s.failed.Store(true) }

// Fix fails the speculation: the pass reported a problem.
func (s *specSink) Fix(problem.Problem) bool { s.fail(); return false }

// Answer is what workers ask before going on: a problem fails the
// speculation, and "no" keeps the worker from changing anything.
func (s *specSink) Answer(problem.Problem) bool { s.fail(); return false }

// Header fails the speculation: within passes 1 and 2 only the sub-passes
// (1B-1E) print headers, and only after problems.
func (s *specSink) Header(problem.Code) { s.fail() }

// Aborted stops the pass as soon as the speculation has failed.
func (s *specSink) Aborted() bool { return s.failed.Load() }

func (s *specSink) EndLatch(problem.Latch) (bool, bool) { return false, false }

// FatalError, Unsupported, Diagnostic, LibError, Log and the status marks
// are output, stops or status changes the real sink would see: the pass
// runs again to give them to it.
func (s *specSink) FatalError(string)             { s.fail() }
func (s *specSink) Unsupported(problem.Code)      { s.fail() }
func (s *specSink) Diagnostic(string)             { s.fail() }
func (s *specSink) LibError(bool, string, string) { s.fail() }
func (s *specSink) Log(string)                    { s.fail() }
func (s *specSink) MarkInvalid()                  { s.fail() }
func (s *specSink) MarkValid()                    { s.fail() }
func (s *specSink) MarkFixed()                    { s.fail() }

// Status, DeviceName and AnsweredAll are the real sink's, which a
// speculation only reads (no question is asked during it).
func (s *specSink) Status() problem.Status { return s.real.Status() }
func (s *specSink) DeviceName() string     { return libOutput(s.real).DeviceName() }
func (s *specSink) AnsweredAll() bool      { return false }

// canSpeculate reports whether pass n of this run may be tried in
// parallel first: a writable run whose answers are known without asking
// (the speculation must not prompt) with more than one worker, and
// nothing owed to the end of the pass from before it.
func (c *Checker) canSpeculate(n int) bool {
	if n > 2 || c.opt.ReadOnly || c.opt.NoSpeculation || c.workers() <= 1 || c.abort {
		return false
	}
	if r := &c.repair.reloc; n == 1 && (len(r.groups) > 0 || r.resize) {
		// Pass 1 ends with work owed from before it (relocations, the
		// resize inode), which changes the repair state in place.
		return false
	}
	return c.answerer() != nil
}

// runSpeculative runs pass n (run) as a speculation first when it may,
// and again serially when the speculation fails. It reports through
// Stats.Speculated which passes were kept.
func (c *Checker) runSpeculative(ctx context.Context, n int, run func(context.Context) error) error {
	if !c.canSpeculate(n) {
		return run(ctx)
	}
	saved := c.saveSpeculation(n)
	real := c.sink
	spec := &specSink{real: real}
	c.sink, c.spec = spec, spec
	err := run(ctx)
	c.sink, c.spec = real, nil
	if err == nil && !spec.failed.Load() && !c.abort {
		c.stats.Speculated |= 1 << n
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	prog := c.prog
	c.restoreSpeculation(saved)
	// The units the speculation reported were reported: the serial run
	// reports only the ones after them.
	c.prog = prog
	c.prog.replay = true
	// The speculation's maps are garbage now: collect them before the
	// serial pass allocates its own, so the run's peak stays one pass's.
	runtime.GC()
	return run(ctx)
}

// saveSpeculation copies the Checker before speculative pass n: a shallow
// copy, plus copies of what the pass changes in place whatever the answers
// (the directory records' parents, the rehash queues and, in pass 2, the
// bad-inode map, which process_bad_inode clears in a writable run after a
// declined i_blocks_hi fix). Everything else passes 1 and 2 change in
// place, they change only on a "yes".
func (c *Checker) saveSpeculation(n int) *Checker {
	s := *c
	s.dirs = slices.Clone(c.dirs)
	s.rehash = maps.Clone(c.rehash)
	s.rehashAsked = maps.Clone(c.rehashAsked)
	if n == 2 && c.inodeBad != nil {
		s.inodeBad = c.inodeBad.Clone()
	}
	return &s
}

// restoreSpeculation puts the Checker back as saveSpeculation found it.
func (c *Checker) restoreSpeculation(s *Checker) { *c = *s }
