package blockdev

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ReadaheadMode is how a File's read-ahead orders and sizes its reads.
type ReadaheadMode int

const (
	// Parallel is for a device that serves many requests at once (SSDs,
	// arrays, network storage): hinted ranges are read in the order they
	// were hinted, many at a time.
	Parallel ReadaheadMode = iota
	// Serial is for a device that serves one request at a time (a disk
	// with one command queued, a rotational disk): pending ranges are
	// read in ascending order, neighbours merged into large reads.
	Serial
)

func (m ReadaheadMode) String() string {
	if m == Serial {
		return "serial"
	}
	return "parallel"
}

// ReadaheadStats says what a File's read-ahead did.
type ReadaheadStats struct {
	Reads, Bytes uint64
	// Dropped counts hinted ranges left unread: the queue was full, or
	// the device was closed first.
	Dropped uint64
	// Skipped counts ranges not read because the page cache was serving
	// the reads (readahead.warmth).
	Skipped uint64
	// Busy is the sum of the reads' durations; divided by the time the
	// read-ahead ran, it is the average number of reads in flight.
	Busy time.Duration
}

// Warm-cache detection (readahead.warmth).
const (
	maxWarmth  = 128
	warmLevel  = 64
	warmDrop   = 8
	warmSample = 16
)

// cachedRead reports whether a read of n bytes that took d was served by
// the page cache: a copy's time (a few GB/s) plus a system call's, under
// what the fastest devices take for a request.
func cachedRead(n int64, d time.Duration) bool {
	return d < 25*time.Microsecond+time.Duration(n/4)
}

// Readahead limits: a queue longer than maxQueue spans drops new hints
// (they are only hints), and a read is never larger than maxReadahead.
const (
	maxQueue     = 1 << 16
	maxReadahead = 4 << 20
)

// raSpan is a byte range to read ahead.
type raSpan struct{ off, n int64 }

func (s raSpan) end() int64 { return s.off + s.n }

// readahead keeps up to depth reads in flight on a file so that the
// kernel's page cache holds the ranges the checker hinted at by the time
// it reads them (posix_fadvise's WILLNEED leaves the depth to the kernel,
// which on some devices keeps one or two reads in flight).
//
// Its workers pread each range into one shared scratch buffer and drop
// the bytes: the cache is the kernel's, bounded and evicted by the
// kernel, and the checker's own reads stay ordinary preads. What the
// checker reads, and so everything it prints, does not depend on what
// was read ahead or when; only how long its reads wait does.
type readahead struct {
	f       *os.File
	depth   int
	maxRead int64
	mode    ReadaheadMode

	mu    sync.Mutex
	cond  sync.Cond
	queue []raSpan // FIFO from head (Parallel); unordered (Serial)
	head  int
	// later holds the ranges hinted for a later pass (PrefetchLater),
	// read only when queue is empty, by at most a quarter of the workers
	// at once: they use the device's spare capacity without delaying
	// what the running pass needs.
	later     []raSpan
	laterHead int
	laterBusy int
	cursor    int64 // Serial: the elevator's position
	closed    bool
	started   bool
	wg        sync.WaitGroup
	scratch   []byte // shared by the workers; its contents are never read

	reads, bytes, dropped, skipped atomic.Uint64
	busy                           atomic.Int64
	// warmth rises by one for each read the page cache served
	// (cachedRead), up to maxWarmth, and falls by warmDrop for each it
	// did not. From warmLevel on only one hint in warmSample is read
	// (sample counts them, under mu): on a warm cache the reads would
	// only copy what is cached, and the sampled ones notice when the
	// device is reached again. One slow read (a preempted copy on a
	// loaded machine) does not end it; a few in a row do.
	warmth atomic.Int32
	sample uint32
	// noProbe is set once preadv2 with RWF_NOWAIT turned out not to be
	// supported for the file (FUSE, old kernels): inCache then always
	// says no, and the warmth alone decides.
	noProbe atomic.Bool
}

// SetReadahead makes Prefetch keep up to depth reads of at most maxRead
// bytes in flight, ordered for mode; depth 0 goes back to kernel
// read-ahead hints (posix_fadvise). It must be called before the first
// Prefetch.
func (d *File) SetReadahead(depth int, maxRead int64, mode ReadaheadMode) {
	if depth <= 0 {
		d.ra = nil
		return
	}
	maxRead = min(max(maxRead, 4096), maxReadahead)
	d.ra = &readahead{f: d.f, depth: depth, maxRead: maxRead, mode: mode}
	d.ra.cond.L = &d.ra.mu
}

// ReadaheadStats returns what the read-ahead did so far (zero without
// one).
func (d *File) ReadaheadStats() ReadaheadStats {
	r := d.ra
	if r == nil {
		return ReadaheadStats{}
	}
	return ReadaheadStats{Reads: r.reads.Load(), Bytes: r.bytes.Load(), Dropped: r.dropped.Load(), Skipped: r.skipped.Load(), Busy: time.Duration(r.busy.Load())}
}

// add queues [off, off+n), split into reads of at most maxRead bytes and
// merged with the last queued range when they touch or the gap between
// them is small: one request for the merged range costs less than two
// when at least a quarter of it is wanted (xfs_repair's rule).
func (r *readahead) add(off, n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		r.dropped.Add(1)
		return
	}
	r.start()
	for n > 0 {
		k := min(n, r.maxRead)
		s := raSpan{off, k}
		off, n = off+k, n-k
		if r.warmth.Load() >= warmLevel {
			if r.sample++; r.sample%warmSample != 0 {
				r.skipped.Add(1)
				continue
			}
		}
		if last := len(r.queue) - 1; last >= r.head {
			t := &r.queue[last]
			if s.off >= t.off && s.end() <= t.end() {
				continue // already queued
			}
			if s.off >= t.off && s.end()-t.off <= r.maxRead && 4*(t.n+s.n) >= s.end()-t.off {
				t.n = s.end() - t.off
				continue
			}
		}
		if len(r.queue)-r.head >= maxQueue {
			r.dropped.Add(1)
			continue
		}
		if r.head > 0 && r.head == len(r.queue) {
			r.queue, r.head = r.queue[:0], 0
		}
		r.queue = append(r.queue, s)
		r.cond.Signal()
	}
}

// addLater queues [off, off+n) behind everything add queues. A serial
// device has no spare capacity to give a later pass: there the hint is
// ignored, and the later pass's own hints read the range when it comes.
func (r *readahead) addLater(off, n int64) {
	if r.mode == Serial {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || len(r.later)-r.laterHead >= maxQueue {
		r.dropped.Add(1)
		return
	}
	r.start()
	if r.warmth.Load() >= warmLevel {
		if r.sample++; r.sample%warmSample != 0 {
			r.skipped.Add(1)
			return
		}
	}
	for n > 0 {
		k := min(n, r.maxRead)
		if last := len(r.later) - 1; last >= r.laterHead && r.later[last].end() == off && r.later[last].n+k <= r.maxRead {
			r.later[last].n += k
		} else {
			if r.laterHead > 0 && r.laterHead == len(r.later) {
				r.later, r.laterHead = r.later[:0], 0
			}
			r.later = append(r.later, raSpan{off, k})
		}
		off, n = off+k, n-k
	}
	r.cond.Signal()
}

// promote moves the pending later ranges to the front of the queue: the
// later pass has come.
func (r *readahead) promote() {
	r.mu.Lock()
	defer r.mu.Unlock()
	pending := r.later[r.laterHead:]
	if len(pending) == 0 {
		return
	}
	q := make([]raSpan, 0, len(pending)+len(r.queue)-r.head)
	q = append(append(q, pending...), r.queue[r.head:]...)
	r.queue, r.head = q, 0
	r.later, r.laterHead = r.later[:0], 0
	r.cond.Broadcast()
}

// laterOK reports whether a worker may take a later range now: a
// quarter of the workers may.
func (r *readahead) laterOK() bool {
	return r.laterHead < len(r.later) && r.laterBusy < max(1, r.depth/4)
}

// start starts the workers on the first hint. Called with mu held.
func (r *readahead) start() {
	if r.started {
		return
	}
	r.started = true
	r.scratch = make([]byte, r.maxRead)
	r.wg.Add(r.depth)
	for i := 0; i < r.depth; i++ {
		go r.worker()
	}
}

// next returns the next range to read, waiting for one; false once the
// read-ahead is closed. later says it came from the later queue.
func (r *readahead) next() (s raSpan, later, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for !r.closed && r.head == len(r.queue) && !r.laterOK() {
		r.cond.Wait()
	}
	switch {
	case r.closed:
		return raSpan{}, false, false
	case r.head == len(r.queue):
		s := r.later[r.laterHead]
		r.laterHead++
		r.laterBusy++
		return s, true, true
	case r.mode == Parallel:
		s := r.queue[r.head]
		r.head++
		return s, false, true
	}
	return r.nextAscending(), false, true
}

// done ends a read; later says it was a later range.
func (r *readahead) done(later bool) {
	if !later {
		return
	}
	r.mu.Lock()
	r.laterBusy--
	r.mu.Unlock()
	r.cond.Signal()
}

// nextAscending takes the pending range at or after the cursor with the
// lowest offset (wrapping to the lowest of all), and merges into it the
// pending ranges that follow it within maxRead while at least a quarter of
// the merged read is wanted. Called with mu held and the queue not empty;
// the queue is at most maxQueue long and a serial device's reads are slow,
// so the linear scans cost nothing that shows.
func (r *readahead) nextAscending() raSpan {
	pending := r.queue[r.head:]
	best := -1
	for i, s := range pending {
		if s.off >= r.cursor && (best < 0 || s.off < pending[best].off) {
			best = i
		}
	}
	if best < 0 {
		for i, s := range pending {
			if best < 0 || s.off < pending[best].off {
				best = i
			}
		}
	}
	s := pending[best]
	pending[best] = pending[len(pending)-1]
	pending = pending[:len(pending)-1]
	wanted := s.n
	for merged := true; merged; {
		merged = false
		for i := 0; i < len(pending); i++ {
			t := pending[i]
			if t.off < s.off || t.end()-s.off > r.maxRead {
				continue
			}
			end := max(s.end(), t.end())
			if 4*(wanted+t.n) < end-s.off {
				continue
			}
			s.n, wanted = end-s.off, wanted+t.n
			pending[i] = pending[len(pending)-1]
			pending = pending[:len(pending)-1]
			i--
			merged = true
		}
	}
	r.queue = r.queue[:r.head+len(pending)]
	r.cursor = s.end()
	return s
}

// worker reads ranges until the read-ahead is closed. Errors are ignored:
// the checker's own read of the range meets them and reports them.
func (r *readahead) worker() {
	defer r.wg.Done()
	for {
		s, later, ok := r.next()
		if !ok {
			return
		}
		if r.inCache(s) {
			// Nothing to read: the copy would cost a pass over the
			// range's bytes (a third of pass 2's time on a warm
			// cache) for pages that are there already.
			r.skipped.Add(1)
			r.warm(true)
			r.done(later)
			continue
		}
		t := time.Now()
		// A raw pread: the workers share the buffer and never read it,
		// and os.File.ReadAt would report their overlapping writes to
		// the race detector.
		n, _, errno := syscall.Syscall6(syscall.SYS_PREAD64, r.f.Fd(), uintptr(unsafe.Pointer(&r.scratch[0])), uintptr(s.n), uintptr(s.off), 0, 0)
		took := time.Since(t)
		r.busy.Add(int64(took))
		r.reads.Add(1)
		r.warm(cachedRead(s.n, took))
		if errno == 0 {
			r.bytes.Add(uint64(n))
		}
		r.done(later)
	}
}

// inCache reports whether the first and the last page of s are in the
// page cache, without copying the range: preadv2 with RWF_NOWAIT reads one
// byte of each when it is there and fails with EAGAIN when it is not (and
// starts the kernel's own read-ahead of it).
func (r *readahead) inCache(s raSpan) bool {
	if r.noProbe.Load() {
		return false
	}
	var b [1]byte
	iov := [][]byte{b[:]}
	for _, off := range [2]int64{s.off, s.end() - 1} {
		n, err := unix.Preadv2(int(r.f.Fd()), iov, off, unix.RWF_NOWAIT)
		switch {
		case err == unix.EAGAIN:
			return false
		case err != nil:
			r.noProbe.Store(true)
			return false
		case n != 1:
			return false // past the end: let the read say so
		}
	}
	return true
}

// warm moves warmth after a read the cache served (cached) or not.
func (r *readahead) warm(cached bool) {
	for {
		w := r.warmth.Load()
		v := max(w-warmDrop, 0)
		if cached {
			v = min(w+1, maxWarmth)
		}
		if r.warmth.CompareAndSwap(w, v) {
			return
		}
	}
}

// close drops the pending ranges and waits for the reads in flight.
func (r *readahead) close() {
	r.mu.Lock()
	r.closed = true
	r.dropped.Add(uint64(len(r.queue) - r.head + len(r.later) - r.laterHead))
	r.queue, r.head, r.later, r.laterHead = nil, 0, nil, 0
	r.cond.Broadcast()
	r.mu.Unlock()
	r.wg.Wait()
}
