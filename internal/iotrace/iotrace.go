// Package iotrace records, saves, loads and summarises block I/O traces:
// from gofsck's own reads (through blockdev.Tracer) or from the kernel's
// block layer (blkparse's text output), so both can be plotted on the same
// axes by cmd/iowatch.
//
// # Recording
//
//	rec := iotrace.New(dev)        // dev is any blockdev.Device
//	f, err := fs.Open(rec, opts)   // rec is itself a blockdev.Device
//	... run the check ...
//	err = rec.Save("check.iotrace")
//
// # File format (version 1)
//
// A text file, one record per line, '#' lines are comments:
//
//	# iotrace 1
//	# name <free text, rest of line>
//	# device-size <bytes>
//	# dropped <events not recorded>
//	<start_ns> <dur_ns> <op> <offset_bytes> <length_bytes>
//
// op is R or W. Events are in issue order; start is nanoseconds since
// recording began. Unknown '#' keys are ignored so the header can grow.
package iotrace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"gofsck/internal/blockdev"
)

// Event is one I/O: blockdev.Event's fields.
type Event = blockdev.Event

// Trace is a recorded run.
type Trace struct {
	Name       string // label for legends (file name, command)
	DeviceSize int64  // bytes; 0 when unknown
	Dropped    uint64 // events lost because the recorder was full
	Events     []Event
}

// Recorder is a blockdev.Device that records the I/O of the device it
// wraps.
type Recorder struct {
	*blockdev.TracedDevice
	Name string
}

// New wraps dev for recording with the default event limit.
func New(dev blockdev.Device) *Recorder { return NewLimit(dev, 0) }

// NewLimit wraps dev keeping at most max events (0: the default).
func NewLimit(dev blockdev.Device, max int) *Recorder {
	return &Recorder{TracedDevice: blockdev.Trace(dev, blockdev.NewTracer(max))}
}

// Trace returns what was recorded so far (call it once the readers have
// finished).
func (r *Recorder) Trace() *Trace {
	return &Trace{Name: r.Name, DeviceSize: r.Size(), Dropped: r.T.Dropped(), Events: r.T.Events()}
}

// Save writes the trace to path.
func (r *Recorder) Save(path string) error {
	t := r.Trace()
	if t.Name == "" {
		t.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return t.Save(path)
}

// Save writes t to path in the iotrace format.
func (t *Trace) Save(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := t.Write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Write writes t in the iotrace format.
func (t *Trace) Write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, "# iotrace 1\n")
	if t.Name != "" {
		fmt.Fprintf(bw, "# name %s\n", strings.ReplaceAll(t.Name, "\n", " "))
	}
	fmt.Fprintf(bw, "# device-size %d\n# dropped %d\n", t.DeviceSize, t.Dropped)
	var b []byte
	for _, e := range t.Events {
		b = b[:0]
		b = strconv.AppendInt(b, int64(e.Start), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(e.Dur), 10)
		b = append(b, ' ', byte(e.Op), ' ')
		b = strconv.AppendInt(b, e.Off, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(e.Len), 10)
		b = append(b, '\n')
		bw.Write(b)
	}
	return bw.Flush()
}

// ErrFormat is a file that is neither an iotrace file nor blkparse output.
var ErrFormat = errors.New("iotrace: unrecognised trace format")

// maxLine bounds one input line.
const maxLine = 1 << 16

// scanError is a bufio.Scanner's error in words a user can act on: a
// line longer than any trace has (a binary file, a disk image given by
// mistake) is not a trace at all, ErrFormat.
func scanError(err error, line int) error {
	if errors.Is(err, bufio.ErrTooLong) {
		if line > 0 {
			return fmt.Errorf("%w (line %d is longer than %d bytes)", ErrFormat, line, maxLine)
		}
		return fmt.Errorf("%w (a line is longer than %d bytes)", ErrFormat, maxLine)
	}
	return err
}

// isBinary reports whether the start of a file holds a NUL byte, which
// no text trace has.
func isBinary(head []byte) bool { return bytes.IndexByte(head, 0) >= 0 }

// Read parses an iotrace file.
func Read(r io.Reader) (*Trace, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxLine)
	t := &Trace{}
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if line == 1 {
			if strings.TrimSpace(s) != "# iotrace 1" {
				return nil, ErrFormat
			}
			continue
		}
		if strings.HasPrefix(s, "#") {
			key, val, _ := strings.Cut(strings.TrimSpace(s[1:]), " ")
			switch key {
			case "name":
				t.Name = val
			case "device-size":
				t.DeviceSize, _ = strconv.ParseInt(val, 10, 64)
			case "dropped":
				t.Dropped, _ = strconv.ParseUint(val, 10, 64)
			}
			continue
		}
		f := strings.Fields(s)
		if len(f) == 0 {
			continue
		}
		if len(f) != 5 || len(f[2]) != 1 {
			return nil, fmt.Errorf("iotrace: line %d: want 5 fields: %q", line, s)
		}
		start, err1 := strconv.ParseInt(f[0], 10, 64)
		dur, err2 := strconv.ParseInt(f[1], 10, 64)
		off, err3 := strconv.ParseInt(f[3], 10, 64)
		n, err4 := strconv.ParseInt(f[4], 10, 32)
		if err := errors.Join(err1, err2, err3, err4); err != nil || n < 0 || off < 0 {
			return nil, fmt.Errorf("iotrace: line %d: %q: bad number", line, s)
		}
		t.Events = append(t.Events, Event{Start: time.Duration(start), Dur: time.Duration(dur),
			Op: blockdev.Op(f[2][0]), Off: off, Len: int32(n)})
	}
	if err := sc.Err(); err != nil {
		return nil, scanError(err, line+1)
	}
	if line == 0 {
		return nil, ErrFormat
	}
	return t, nil
}

// Load reads a trace file: the iotrace format, or blkparse's default text
// output (recognised by content). The trace is named after the file.
func Load(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	head, _ := br.Peek(512)
	if isBinary(head) {
		return nil, fmt.Errorf("%s: %w", path, ErrFormat)
	}
	var t *Trace
	if len(head) >= 11 && string(head[:11]) == "# iotrace 1" {
		t, err = Read(br)
	} else {
		t, err = ParseBlkparse(br)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if t.Name == "" {
		t.Name = filepath.Base(path)
	}
	return t, nil
}

// ParseBlkparse reads `blkparse -i dev` default output, e.g.
//
//	8,0    1       12     0.000123456  4242  D   R 2048 + 8 [e2fsck]
//
// keeping reads (RWBS containing R) of action D (issued to the driver),
// or of action Q (queued) when the trace has no D lines — some traces are
// taken with a filter. Offsets and lengths are in 512-byte sectors in the
// text and in bytes in the result; times become relative to the first
// kept event. Lines that are not events (the per-CPU summary blkparse
// prints at the end, plugs, unplugs, completions) are skipped.
func ParseBlkparse(r io.Reader) (*Trace, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxLine)
	var q, d []Event
	events := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// dev cpu seq time pid action rwbs sector + n [proc]
		if len(f) < 10 || !strings.Contains(f[0], ",") || f[8] != "+" {
			continue
		}
		act, rwbs := f[5], f[6]
		if act != "Q" && act != "D" || !strings.Contains(rwbs, "R") {
			continue
		}
		ts, err := parseSeconds(f[3])
		if err != nil {
			continue
		}
		sector, err1 := strconv.ParseInt(f[7], 10, 64)
		n, err2 := strconv.ParseInt(f[9], 10, 64)
		if err1 != nil || err2 != nil || sector < 0 || n <= 0 || sector > 1<<53 || n > 1<<22 {
			continue
		}
		e := Event{Start: ts, Off: sector * 512, Len: int32(n * 512), Op: blockdev.OpRead}
		events++
		if act == "D" {
			d = append(d, e)
		} else {
			q = append(q, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, scanError(err, 0)
	}
	ev := d
	if len(ev) == 0 {
		ev = q
	}
	if events == 0 {
		return nil, fmt.Errorf("%w: no blkparse read events (Q or D with R)", ErrFormat)
	}
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].Start < ev[j].Start })
	t0 := ev[0].Start
	for i := range ev {
		ev[i].Start -= t0
	}
	return &Trace{Events: ev}, nil
}

// parseSeconds reads blkparse's "seconds.nanoseconds" time stamp.
func parseSeconds(s string) (time.Duration, error) {
	sec, frac, _ := strings.Cut(s, ".")
	v, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || v < 0 || v > 1<<32 {
		return 0, ErrFormat
	}
	ns := int64(0)
	if frac != "" {
		if len(frac) > 9 {
			frac = frac[:9]
		}
		for len(frac) < 9 {
			frac += "0"
		}
		if ns, err = strconv.ParseInt(frac, 10, 64); err != nil {
			return 0, ErrFormat
		}
	}
	return time.Duration(v)*time.Second + time.Duration(ns), nil
}

// Duration returns the end of the last I/O.
func (t *Trace) Duration() time.Duration {
	var end time.Duration
	for _, e := range t.Events {
		end = max(end, e.Start+e.Dur)
	}
	return end
}

// Reads returns the read events only.
func (t *Trace) Reads() []Event {
	var out []Event
	for _, e := range t.Events {
		if e.Op == blockdev.OpRead {
			out = append(out, e)
		}
	}
	return out
}

// Totals sums the bytes and counts the operations of the trace.
func (t *Trace) Totals() (bytes int64, ops int) {
	for _, e := range t.Events {
		bytes += int64(e.Len)
	}
	return bytes, len(t.Events)
}

// Seeks counts the I/Os that do not start where the previous one (in
// issue order) ended: the head (or, on flash, the read-ahead) had to move.
func Seeks(ev []Event) int {
	n := 0
	var next int64 = -1
	for _, e := range ev {
		if e.Off != next {
			n++
		}
		next = e.Off + int64(e.Len)
	}
	return n
}

// Bins are per-interval totals of a trace.
type Bins struct {
	Width time.Duration // interval length
	Bytes []int64       // bytes issued in each interval
	Ops   []int         // operations issued
	Seeks []int         // operations that were seeks (see Seeks)
}

// Bin sums the trace over intervals of width w (w > 0) from time 0 to the
// trace's end; at most maxBins intervals (w grows to fit).
func (t *Trace) Bin(w time.Duration, maxBins int) Bins {
	end := t.Duration()
	if w <= 0 {
		w = time.Millisecond
	}
	if maxBins <= 0 {
		maxBins = 10000
	}
	for int64(end/w)+1 > int64(maxBins) {
		w *= 2
	}
	n := int(end/w) + 1
	b := Bins{Width: w, Bytes: make([]int64, n), Ops: make([]int, n), Seeks: make([]int, n)}
	var next int64 = -1
	for _, e := range t.Events {
		i := int(e.Start / w)
		b.Bytes[i] += int64(e.Len)
		b.Ops[i]++
		if e.Off != next {
			b.Seeks[i]++
		}
		next = e.Off + int64(e.Len)
	}
	return b
}
