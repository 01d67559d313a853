package blockdev

import (
	"sync/atomic"
	"time"
)

// Op says what kind of I/O a trace event is.
type Op uint8

// Traced operations.
const (
	OpRead  Op = 'R'
	OpWrite Op = 'W'
)

// Event is one traced I/O: when it started (since the Tracer was made),
// how long it took, where and how much.
type Event struct {
	Start time.Duration // issue time, relative to the tracer's start
	Dur   time.Duration // time until the call returned
	Off   int64         // byte offset on the device
	Len   int32         // bytes requested
	Op    Op
}

// Tracer records I/O events from any number of goroutines without locks.
//
// Events go into fixed-size chunks allocated on first use; a slot is
// claimed with one atomic add, so concurrent readers never contend on a
// lock and never move each other's data. When Max events have been
// recorded, further events are counted in Dropped and discarded: tracing
// never grows memory without bound.
//
// Events returns a copy of what was recorded; call it after the traced
// readers have finished (after the errgroup's Wait, for example), which
// gives the happens-before edge that makes their writes visible.
type Tracer struct {
	start   time.Time
	max     uint64
	n       atomic.Uint64 // slots claimed (may exceed max)
	dropped atomic.Uint64
	chunks  []atomic.Pointer[traceChunk]
}

const (
	traceChunkBits = 14
	traceChunkLen  = 1 << traceChunkBits
)

type traceChunk [traceChunkLen]Event

// DefaultTraceEvents bounds a Tracer made with max 0: 4M events (about
// 128 MiB when full).
const DefaultTraceEvents = 4 << 20

// NewTracer returns a Tracer holding at most max events (0: the default).
func NewTracer(max int) *Tracer {
	if max <= 0 {
		max = DefaultTraceEvents
	}
	nch := (max + traceChunkLen - 1) / traceChunkLen
	return &Tracer{
		start:  time.Now(),
		max:    uint64(max),
		chunks: make([]atomic.Pointer[traceChunk], nch),
	}
}

// Now returns the time since the tracer started, for Record.
func (t *Tracer) Now() time.Duration { return time.Since(t.start) }

// Record stores one event. start is a value t.Now() returned before the
// I/O; the duration is measured up to this call.
func (t *Tracer) Record(op Op, off int64, n int, start time.Duration) {
	end := time.Since(t.start)
	i := t.n.Add(1) - 1
	if i >= t.max {
		t.dropped.Add(1)
		return
	}
	slot := &t.chunks[i>>traceChunkBits]
	c := slot.Load()
	if c == nil {
		c = new(traceChunk)
		if !slot.CompareAndSwap(nil, c) {
			c = slot.Load()
		}
	}
	c[i&(traceChunkLen-1)] = Event{Start: start, Dur: end - start, Off: off, Len: int32(min(n, 1<<31-1)), Op: op}
}

// Dropped returns the number of events discarded because the tracer was
// full.
func (t *Tracer) Dropped() uint64 { return t.dropped.Load() }

// Started returns the wall-clock time the tracer was made.
func (t *Tracer) Started() time.Time { return t.start }

// Events returns the recorded events in the order their slots were
// claimed (issue order, up to scheduling between goroutines).
func (t *Tracer) Events() []Event {
	n := min(t.n.Load(), t.max)
	out := make([]Event, 0, n)
	for i := uint64(0); i < n; i += traceChunkLen {
		c := t.chunks[i>>traceChunkBits].Load()
		k := min(n-i, traceChunkLen)
		if c == nil {
			// Claimed but the chunk is not published yet: only
			// possible while readers still run.
			continue
		}
		out = append(out, c[:k]...)
	}
	return out
}

// TracedDevice is a Device that records every ReadAt and WriteAt of the
// device it wraps in a Tracer. It works for File, Mem and any other
// Device.
type TracedDevice struct {
	Device
	T *Tracer
}

// Trace wraps d so that its I/O is recorded in t.
func Trace(d Device, t *Tracer) *TracedDevice { return &TracedDevice{Device: d, T: t} }

// ReadAt reads through the wrapped device and records the read.
func (d *TracedDevice) ReadAt(p []byte, off int64) (int, error) {
	s := d.T.Now()
	n, err := d.Device.ReadAt(p, off)
	d.T.Record(OpRead, off, len(p), s)
	return n, err
}

// WriteAt writes through the wrapped device and records the write.
func (d *TracedDevice) WriteAt(p []byte, off int64) (int, error) {
	s := d.T.Now()
	n, err := d.Device.WriteAt(p, off)
	d.T.Record(OpWrite, off, len(p), s)
	return n, err
}

var _ Device = (*TracedDevice)(nil)
