package check

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// The parallel engine.
//
// Passes 1 and 2 cut their work into units (a group's used inodes; a batch
// of directory blocks) that workers check concurrently. A worker runs the
// same pass code as a serial check, on a shard of the Checker: a shallow
// copy that shares the maps whose updates commute (atomic bitmaps,
// per-inode slots) and has its own sink and accumulators. The sink records
// every problem with the answer the real sink will give (Answerer), so the
// worker can go on without waiting; the main goroutine then replays each
// unit's events into the real sink in unit order. Output, answers and exit
// code are therefore the same with 1 worker and with N.
//
// The few decisions that depend on what came earlier in e2fsck's order
// (the first inode to reference an EA block prints its problems, the first
// entry naming a directory is its parent, a directory's blocks after its
// first duplicate name) are recorded as events too and decided during the
// replay, which is serial and in order.
//
// Lock order: sharedState.mu is a leaf lock; no lock is held across I/O
// except inside eaEntry.once (its validation reads one block).

// eventKind says what an event replays.
type eventKind uint8

const (
	evFix eventKind = iota
	evHeader
	evEndLatch
	evEARef   // an inode references EA block blk (pass 1)
	evRef     // a directory entry references inode ino (pass 2)
	evSubdir  // an entry names subdirectory ino; p is the LINK_DIR problem
	evDotDot  // directory p.Ino's '..' names ino
	evDupName // first duplicate name of a block; p is REPORT_DUP_DIRENT
	evDxRefs  // an htree node's index entries (dx refs in dx)
	evAbort   // e2fsck stops here
	evFatal   // a library error ends the run; p.Str is its com_err line
	evWrite   // a fix writes data at byte offset blk (repair only)
	evRehash  // directory ino is queued for pass 3A (setRehash)
	// evClearBad: process_bad_inode found nothing to fix in ino, which a
	// writable run then no longer treats as bad (speculative pass 2).
	evClearBad
	// evUnsupported stops the run at a fix gofsck cannot make (p.Code).
	evUnsupported
	// evPctxDir: an htree directory block of ino was checked to its end,
	// which sets check_dir_block's sticky pctx.dir (Checker.pctxDir).
	evPctxDir
	// evPctxDirFix: the next evFix prints the sticky pctx.dir as its Dir,
	// which the worker did not know (set before its unit).
	evPctxDirFix
)

// event is one recorded sink call or order-dependent decision.
type event struct {
	kind  eventKind
	latch problem.Latch
	ino   uint32
	blk   uint64
	p     problem.Problem
	dx    *dxNodeRefs
	data  []byte // evWrite
}

// recSink records a worker's problems. With direct set it forwards every
// call at once instead (serial mode, interactive answers).
type recSink struct {
	events []event
	answer Answerer
	direct Sink
	fatal  bool
	// latched has bit l set when a member of latch l was recorded since
	// its last EndLatch: ending an unused latch is a no-op and is not
	// recorded (pass 1 ends two latches per inode).
	latched uint32
	// writable says that the run writes, where any problem may stop it
	// (a preen halt, a fix gofsck does not make), decided or not by the
	// replay; a read-only run stops only at a fatal problem, an abort
	// question or a library error.
	writable bool
	// mayStop is set once an event is recorded after which the replay
	// might stop the run: the progress reported ahead of the replay
	// (unitProgress) goes no further than the work before it.
	mayStop bool
}

func (r *recSink) Fix(p problem.Problem) bool {
	if r.direct != nil {
		return r.direct.Fix(p)
	}
	if p.Dirent != nil {
		// The name aliases a block buffer the worker reuses: copy it.
		d := *p.Dirent
		d.Name = append([]byte(nil), d.Name...)
		p.Dirent = &d
	}
	r.events = append(r.events, event{kind: evFix, p: p})
	d, ok := problem.Lookup(p.Code)
	if ok {
		if d.Flags&problem.FlagFatal != 0 {
			r.fatal = true
		}
		if d.Latch != problem.LatchNone {
			r.latched |= 1 << d.Latch
		}
	}
	if !ok || r.writable || d.Flags&problem.FlagFatal != 0 || d.Prompt == problem.PromptAbort {
		r.mayStop = true
	}
	return r.answer.Answer(p)
}

func (r *recSink) Header(c problem.Code) {
	if r.direct != nil {
		r.direct.Header(c)
		return
	}
	r.events = append(r.events, event{kind: evHeader, p: problem.Problem{Code: c}})
	r.mayStop = r.mayStop || r.writable
}

func (r *recSink) Aborted() bool {
	if r.direct != nil {
		return r.direct.Aborted()
	}
	return r.fatal
}

func (r *recSink) EndLatch(l problem.Latch) (bool, bool) {
	if r.direct != nil {
		return r.direct.EndLatch(l)
	}
	if r.latched&(1<<l) == 0 {
		return false, false
	}
	r.latched &^= 1 << l
	r.events = append(r.events, event{kind: evEndLatch, latch: l})
	r.mayStop = r.mayStop || r.writable
	return false, false
}

// Unsupported stops the run at a fix gofsck cannot make: forwarded to the
// direct sink, or recorded (the worker stops as after a fatal problem) so
// that the replay stops the run at the same point.
func (r *recSink) Unsupported(code problem.Code) {
	if r.direct != nil {
		r.direct.Unsupported(code)
		return
	}
	r.fatal = true
	r.mayStop = true
	r.events = append(r.events, event{kind: evUnsupported, p: problem.Problem{Code: code}})
}

// record appends an order-dependent event.
func (r *recSink) record(e event) {
	r.events = append(r.events, e)
	switch e.kind {
	case evRehash, evClearBad, evPctxDir, evPctxDirFix, evDxRefs:
		// State the replay applies; evPctxDirFix comes before a
		// recorded problem, which counts on its own.
	case evEARef, evSubdir, evDupName:
		// The replay decides whether they raise a problem (an EA
		// block's, LINK_DIR, REPORT_DUP_DIRENT), none of which is fatal.
		r.mayStop = r.mayStop || r.writable
	default:
		r.mayStop = true
	}
}

// FatalError forwards to the direct sink (fatalError records instead when
// there is none).
func (r *recSink) FatalError(line string) {
	if r.direct != nil {
		libOutput(r.direct).FatalError(line)
	}
}

// MarkInvalid forwards to the direct sink; a worker running ahead marks
// nothing (its units record the problem that leads to it).
func (r *recSink) MarkInvalid() {
	if r.direct != nil {
		r.direct.MarkInvalid()
	}
}

// A worker's recording keeps no run status and prints no library lines:
// the passes' units neither read the status nor print outside the problem
// table (those come from the serial parts of the run), so these drop what
// they are given even in direct mode.
func (r *recSink) Status() problem.Status        { return problem.Status{} }
func (r *recSink) MarkValid()                    {}
func (r *recSink) MarkFixed()                    {}
func (r *recSink) Log(string)                    {}
func (r *recSink) AnsweredAll() bool             { return false }
func (r *recSink) LibError(bool, string, string) {}
func (r *recSink) Diagnostic(string)             {}
func (r *recSink) DeviceName() string            { return "" }

// sharedState is what workers share under a mutex.
type sharedState struct {
	mu sync.Mutex
	// mu protects eaCache, eaInodeRefs and encPolicy.
	eaCache     map[uint64]*eaEntry
	eaInodeRefs map[uint32]uint64
	encPolicy   map[uint32]string
}

// bufferPools hold the per-unit buffers of a check's workers, so that it
// allocates them once per worker rather than once per unit. One Checker
// and its shards share them.
type bufferPools struct {
	pass1 sync.Pool // *pass1Scratch
	pass2 sync.Pool // *dirWorker
}

// workers returns the number of workers to use: by default two per CPU,
// so that a worker waiting for a read (extent blocks, directory blocks on
// a cold cache) does not leave a CPU idle; the prefetch hints keep more
// reads in flight still.
func (c *Checker) workers() int {
	if c.opt.Workers > 0 {
		return c.opt.Workers
	}
	return 2 * runtime.NumCPU()
}

// answerer returns the sink's predictor, or nil when answers cannot be
// known in advance (then the passes run serially with direct forwarding).
func (c *Checker) answerer() Answerer {
	a, _ := c.sink.(Answerer)
	return a
}

// shard returns a worker's view of the Checker: everything shared (see
// Checker), its own workerOwned part, empty, and rec as its sink (the
// Checker's own sink when rec is nil, for a template that workers copy).
func (c *Checker) shard(rec *recSink) *Checker {
	w := *c
	w.workerOwned = workerOwned{rec: rec}
	if rec != nil {
		w.sink = rec
	}
	return &w
}

// runUnits runs n units on the worker pool and replays their results in
// order. work fills a unit's shard; replay consumes it on the calling
// goroutine. At most lookahead units are finished ahead of the replay
// cursor, which bounds memory. A true return from replay stops the run.
//
// prefetch, when not nil, is called for units ahead of the ones being
// worked on, to start their reads in the background: the device then has
// many requests in flight while the workers stay one per CPU.
func (c *Checker) runUnits(ctx context.Context, n int, prefetch func(i int) int64, work func(i int, w *Checker), replay func(i int, w *Checker) bool) error {
	if c.opt.PrefetchUnits < 0 {
		prefetch = nil
	}
	a := c.answerer()
	nw := c.workers()
	hints := &hintWindow{n: n, prefetch: prefetch, dist: 2 * nw, window: c.opt.PrefetchBytes}
	if c.opt.PrefetchUnits > 0 {
		hints.dist, hints.window = c.opt.PrefetchUnits, 0
	}
	// Only a read-only check, or a speculative pass (speculate.go), may
	// run in parallel: with "yes" answers some fixes change what later
	// units see.
	serial := a == nil || nw <= 1 || n <= 1 || !c.opt.ReadOnly && c.spec == nil
	ahead := c.ahead
	var wake chan struct{} // nil: never ready
	if ahead != nil {
		ahead.serial, ahead.report = serial, c.reportAhead
		wake = ahead.wake
	}
	if serial {
		// Serial: the same code, forwarding straight to the sink.
		for i := 0; i < n; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			hints.dispatch(i)
			rec := &recSink{direct: c.sink}
			w := c.shard(rec)
			w.unit = i
			work(i, w)
			if replay(i, w) {
				return nil
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Workers copy a frozen template, never c itself, which the replay
	// keeps updating.
	tmpl := c.shard(nil)
	lookahead := 4 * nw
	slots := make(chan struct{}, lookahead)
	done := make([]chan *Checker, n)
	for i := range done {
		done[i] = make(chan *Checker, 1)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	var internal any
	for k := 0; k < nw; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				rec := &recSink{answer: a, writable: !c.opt.ReadOnly}
				w := tmpl.shard(rec)
				w.unit = i
				func() {
					defer func() {
						if r := recover(); r != nil {
							// A bug must not take the whole check down:
							// report it as an internal error of this unit.
							rec.events = append(rec.events, event{kind: evAbort})
							w.internalErr = r
						}
					}()
					work(i, w)
				}()
				done[i] <- w
				if ahead != nil {
					// The replay may be waiting for an earlier unit:
					// report this one's work.
					ahead.wakeRun(ahead.work.Load())
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(next)
		for i := 0; i < n; i++ {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			hints.dispatch(i)
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var err error
	for i := 0; i < n; i++ {
		var w *Checker
	wait:
		for {
			select {
			case w = <-done[i]:
				break wait
			case <-wake:
				// Workers have done more: report it while the replay
				// waits for unit i.
				c.reportAhead(i)
			case <-ctx.Done():
				err = ctx.Err()
				break wait
			}
		}
		if err != nil {
			break
		}
		stop := replay(i, w)
		<-slots
		if w.internalErr != nil {
			internal = w.internalErr
			break
		}
		if stop {
			break
		}
	}
	// Workers finish their current unit and exit; no goroutine outlives
	// the pass.
	cancel()
	wg.Wait()
	if internal != nil && err == nil {
		err = &InternalError{Val: internal}
	}
	return err
}

// hintWindow decides which units' reads runUnits hints ahead of the
// workers: the units up to dist past the one dispatched, and with a
// window, more until window bytes are hinted for units not yet
// dispatched (so that a device's read-ahead has reads to keep in flight
// whatever the units' sizes). prefetch hints unit i's reads and returns
// their size in bytes.
type hintWindow struct {
	n, dist  int
	window   int64
	prefetch func(i int) int64
	next     int     // the next unit to hint
	sizes    []int64 // bytes hinted for the units from first to next
	first    int
	pending  int64 // sum of sizes
}

// maxUnitsAhead bounds how far the window hints past the unit
// dispatched, whatever the units' sizes.
const maxUnitsAhead = 1 << 12

// dispatch is called before unit i goes to a worker, for i = 0, 1, ...
// in turn.
func (h *hintWindow) dispatch(i int) {
	if h.prefetch == nil {
		return
	}
	for h.first <= i && len(h.sizes) > 0 {
		h.pending -= h.sizes[0]
		h.sizes = h.sizes[1:]
		h.first++
	}
	if h.first <= i {
		h.first = i + 1
	}
	for h.next < h.n && (h.next <= i+h.dist || h.window > 0 && h.pending < h.window && h.next <= i+maxUnitsAhead) {
		b := h.prefetch(h.next)
		if h.next > i {
			h.sizes = append(h.sizes, b)
			h.pending += b
		}
		h.next++
	}
}

// InternalError is a bug caught at a worker boundary: the check stops with
// an operational error instead of crashing.
type InternalError struct{ Val any }

func (e *InternalError) Error() string { return fmt.Sprintf("internal error: %v", e.Val) }

// dxNodeRefs are the index entries of one htree root or interior node,
// applied to the directory's per-block records during replay.
type dxNodeRefs struct {
	dir     uint32
	node    uint32 // logical block of the node
	count   int
	entries []dxEntryRef
}

// dxEntryRef is one index entry of a node.
type dxEntryRef struct {
	index    int
	blk      uint32
	hash     uint32
	prev     uint32 // block of the previous entry (0 for the first)
	nextHash uint32
}

// fatalError stops the run after a library error, printing its line
// through the Sink (recorded first when a worker runs ahead).
func (c *Checker) fatalError(line string) {
	c.abort = true
	if c.rec != nil && c.rec.direct == nil {
		c.rec.record(event{kind: evFatal, p: problem.Problem{Str: line}})
		return
	}
	c.out().FatalError(line)
}

// stop ends the run here as e2fsck does after a declined salvage: a worker
// records it so the replay stops at the same point.
func (c *Checker) stop() {
	if c.rec != nil && c.rec.direct == nil {
		c.rec.record(event{kind: evAbort})
	}
	c.abort = true
}

// rehashCleared queues a directory whose index pass 2 dropped, as
// e2fsck's clear_htree does: only onto an existing dirs_to_hash list,
// which a writable run makes at pass 1's start when the filesystem has
// dir_index, and any other queueing makes on its first use. Without
// either, the directory stays linear and pass 3A does not run for it.
func (c *Checker) rehashCleared(dir uint32) {
	if c.optimizeAll() || c.sb.HasCompat(ondisk.CompatDirIndex) || len(c.rehash) > 0 {
		c.setRehash(dir)
	}
}

// setRehash queues dir for rebuilding in pass 3A.
func (c *Checker) setRehash(dir uint32) {
	if c.rec != nil && c.rec.direct == nil {
		// A worker of a speculative pass 1 queues large linear
		// directories (the other callers are fixes, answered no there).
		c.rec.record(event{kind: evRehash, ino: dir})
		return
	}
	c.rehash[dir] = true
	if c.rehashAsked != nil {
		c.rehashAsked[dir] = true
	}
}
