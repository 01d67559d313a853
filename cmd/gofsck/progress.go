package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"gofsck/internal/check"
)

// Progress reporting (-C fd), as e2fsck does it.
//
// The checker calls Update once per unit of work on its goroutine, as
// e2fsck calls ctx->progress. To fd > 0 e2fsck writes every call as a
// "pass cur max device" line, with no rate limit: so does Update, into a
// buffer that the reporter goroutine flushes every tick (and Update at the
// end of each pass), so that the lines are e2fsck's, one for one, without
// a write(2) each. For the bar on stdout (fd 0) Update only stores the
// numbers under a sequence counter (no lock, no allocation); the reporter
// goroutine draws, every tick, the percent of the whole check and an
// estimate of the time left, and Update draws the bar's 100%. Within
// passes 1 and 2 the checker also reports the work its workers have done
// (Work, finer than the units: a volume of 8 groups has 8 units in pass
// 1), and the bar shows whichever is further.
//
// The bar shares stdout with the problem transcript: every other write to
// stdout goes through progressWriter, which clears the bar first, and the
// bar is drawn only at the start of a line, so neither cuts the other.
// SIGUSR1 turns reporting on and SIGUSR2 off, as in e2fsck.
//
// Lock order: progress.mu is a leaf lock.

// Tick intervals: the protocol's buffer is flushed for programs, the bar
// drawn for people.
const (
	fdTick  = 100 * time.Millisecond
	barTick = 200 * time.Millisecond
	barCols = 80 // the bar line fits a terminal of this width
)

// passSpan is the share of the whole check each pass has on the bar (in
// tenths of a percent): e2fsck's 70, 20, 2, 3 and 5 %.
var passSpan = [6][2]uint64{{0, 0}, {0, 700}, {700, 900}, {900, 920}, {920, 950}, {950, 1000}}

// progress reports the check's progress; it implements check.Progress.
type progress struct {
	fd    int           // 0: bar on stdout; > 0: protocol lines
	out   io.Writer     // the protocol file or the real stdout
	file  *os.File      // the protocol file, closed by stop
	lines *bufio.Writer // over out, for the protocol lines
	name  string        // device name in lines and on the bar
	// meta wraps every bar drawn or cleared in \001 ... \002, as
	// e2fsck does unless stdin and stdout are both terminals (or
	// E2FSCK_FORCE_INTERACTIVE is set): logsave -s drops what is
	// between them, so a log of the run keeps the transcript only.
	meta    bool
	enabled atomic.Bool

	// seq is odd while Update or Work writes pass, cur and max or
	// workPass, done and total (one writer, the check's goroutine).
	seq            atomic.Uint64
	pass, cur, max atomic.Uint64
	// The work the check's workers have done in pass workPass, finer
	// than its units (check.WorkProgress): the bar follows it.
	workPass, workDone, workTotal atomic.Uint64
	// passStart is when the current pass's first Update came, since start.
	passStart atomic.Int64

	mu sync.Mutex
	// mu protects lines, lastTenths, shown, midLine, start and writes to
	// out and to stdout.
	lastTenths int64 // percent of the last bar, in tenths; -1 before the first
	shown      bool  // a bar is on the screen
	midLine    bool  // stdout's last write did not end a line
	start      time.Time

	stopc chan struct{}
	done  chan struct{}
}

var (
	_ check.Progress     = (*progress)(nil)
	_ check.WorkProgress = (*progress)(nil)
)

// parseProgressFd reads -C's argument as e2fsck does (sscanf "%d": a
// leading integer after blanks; the caller has refused an argument with
// none) and checks that a descriptor other than 0 is open. A negative fd
// starts with reporting off, until SIGUSR1.
func parseProgressFd(arg string, o *options, stderr io.Writer) (fd int, enabled bool, ok bool) {
	v, _ := scanInt(arg)
	fd = int(v)
	enabled = fd >= 0
	if fd < 0 {
		fd = -fd
	}
	if fd == 0 {
		return 0, enabled, true
	}
	dup, err := syscall.Dup(fd)
	if err != nil {
		fmt.Fprintf(stderr, "Error validating file descriptor %d: %s\n", fd, errnoText(err))
		fatalError(stderr, "Invalid completion information file descriptor")
		return fd, false, false
	}
	syscall.Close(dup)
	return fd, enabled, true
}

// errnoText is strerror's wording: Go's errno strings are lower case.
func errnoText(err error) string {
	s := err.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// startProgress starts reporting for the device called name. Unless -C
// was given reporting starts off (SIGUSR1 turns the bar on). The returned
// writer is the stdout the check must use from now on.
func startProgress(o *options, name string, stdout io.Writer) (*progress, io.Writer) {
	p := &progress{fd: o.progressFd, out: stdout, name: name, lastTenths: -1,
		start: time.Now(), stopc: make(chan struct{}), done: make(chan struct{})}
	if p.fd > 0 {
		// Write to a duplicate, so that closing it leaves fd alone.
		if dup, err := syscall.Dup(p.fd); err == nil {
			p.file = os.NewFile(uintptr(dup), "progress")
			p.out = p.file
		} else {
			p.out = io.Discard
		}
		p.lines = bufio.NewWriter(p.out)
	}
	p.meta = os.Getenv("E2FSCK_FORCE_INTERACTIVE") == "" && !interactiveTerminal()
	p.enabled.Store(o.progressOn)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGUSR2)
	tick := barTick
	if p.fd > 0 {
		tick = fdTick
	}
	go p.loop(sig, tick)
	return p, &progressWriter{p: p, w: stdout}
}

// loop prints on every tick and obeys the signals until stop.
func (p *progress) loop(sig chan os.Signal, tick time.Duration) {
	defer close(p.done)
	defer signal.Stop(sig)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-p.stopc:
			return
		case s := <-sig:
			p.enabled.Store(s == syscall.SIGUSR1)
			if s == syscall.SIGUSR2 {
				p.mu.Lock()
				p.clear()
				p.mu.Unlock()
			}
		case <-t.C:
			if p.fd > 0 {
				p.mu.Lock()
				p.lines.Flush()
				p.mu.Unlock()
			} else {
				p.report(false)
			}
		}
	}
}

// stop ends the reporter goroutine and takes the bar off the screen.
func (p *progress) stop() {
	close(p.stopc)
	<-p.done
	p.mu.Lock()
	p.clear()
	if p.lines != nil {
		p.lines.Flush()
	}
	p.mu.Unlock()
	if p.file != nil {
		p.file.Close()
	}
}

// Update records that cur of max units of pass are done: a protocol line
// (flushed at once at the end of a pass), or the numbers for the bar's
// next tick (the bar's 100% drawn at once). While reporting is off it
// only loads a flag: the checker calls it for every unit of work.
func (p *progress) Update(pass int, cur, max uint64) {
	if !p.enabled.Load() {
		// As e2fsck without ctx->progress: nothing is reported, and the
		// next Update after SIGUSR1 reports from where the check is.
		return
	}
	if p.fd > 0 {
		if pass <= 0 {
			return
		}
		p.mu.Lock()
		// e2fsck's "%d %lu %lu %s\n".
		b := p.lines.AvailableBuffer()
		b = strconv.AppendInt(b, int64(pass), 10)
		b = append(b, ' ')
		b = strconv.AppendUint(b, cur, 10)
		b = append(b, ' ')
		b = strconv.AppendUint(b, max, 10)
		b = append(b, ' ')
		b = append(b, p.name...)
		b = append(b, '\n')
		p.lines.Write(b)
		if cur == max {
			p.lines.Flush()
		}
		p.mu.Unlock()
		return
	}
	if uint64(pass) != p.pass.Load() {
		p.passStart.Store(int64(time.Since(p.start)))
	}
	p.seq.Add(1)
	p.pass.Store(uint64(pass))
	p.cur.Store(cur)
	p.max.Store(max)
	p.seq.Add(1)
	if final := cur == max && pass == 5; final {
		p.report(final)
	}
}

// Work records how much of pass's work the check's workers have done,
// for the bar's next tick; the protocol's lines are e2fsck's units only.
func (p *progress) Work(pass int, done, total uint64) {
	if p.fd > 0 || !p.enabled.Load() {
		return
	}
	p.seq.Add(1)
	p.workPass.Store(uint64(pass))
	p.workDone.Store(done)
	p.workTotal.Store(total)
	p.seq.Add(1)
}

// load returns a consistent pass, cur and max (pass 0: nothing yet), and
// the share of the pass done in tenths of a percent of the whole check:
// the units done or, when larger, the work done in the pass.
func (p *progress) load() (pass, cur, max, tenths uint64) {
	for {
		s := p.seq.Load()
		if s&1 == 0 {
			pass, cur, max = p.pass.Load(), p.cur.Load(), p.max.Load()
			wp, done, total := p.workPass.Load(), p.workDone.Load(), p.workTotal.Load()
			if p.seq.Load() == s {
				if pass == 0 || pass >= uint64(len(passSpan)) {
					return pass, cur, max, 0
				}
				tenths = passTenths(pass, cur, max)
				if w := passTenths(pass, done, total); wp == pass && total > 0 && w > tenths {
					tenths = w
				}
				return pass, cur, max, tenths
			}
		}
		runtime.Gosched()
	}
}

// passTenths is cur of max units of pass in tenths of a percent of the
// whole check (pass is 1 to 5).
func passTenths(pass, cur, max uint64) uint64 {
	span := passSpan[pass]
	tenths := span[0]
	if max > 0 {
		tenths += (span[1] - span[0]) * min(cur, max) / max
	}
	return tenths
}

// report draws the bar if the check moved on since the last one; final
// forces it to be drawn (the end of the check).
func (p *progress) report(final bool) {
	if p.fd > 0 || !p.enabled.Load() {
		return // the protocol's lines are written by Update
	}
	pass, _, _, tenths := p.load()
	if pass == 0 || pass >= uint64(len(passSpan)) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bar(pass, tenths, final)
}

// bar draws the bar at tenths of a percent of the check, in pass. p.mu
// is held.
func (p *progress) bar(pass, tenths uint64, final bool) {
	if p.midLine {
		return
	}
	// The bar only goes forward; the end of the check is always drawn.
	if int64(tenths) < p.lastTenths || (int64(tenths) == p.lastTenths && !final) {
		return
	}
	p.lastTenths = int64(tenths)
	width := barCols - len(p.name) - 24
	if width < 10 {
		width = 10
	}
	fill := width * int(tenths) / 1000
	eta := ""
	if tenths > 0 && tenths < 1000 {
		el := time.Since(p.start)
		left := timeLeft(el, el-time.Duration(p.passStart.Load()), pass, tenths)
		sec := int64(left / time.Second)
		eta = fmt.Sprintf(" ETA %d:%02d", sec/60, sec%60)
	}
	fmt.Fprintf(p.out, "%s%s: |%s%s| %3d.%d%%%s   \r%s", p.startMeta(), p.name, strings.Repeat("=", fill), strings.Repeat(" ", width-fill),
		tenths/10, tenths%10, eta, p.stopMeta())
	p.shown = true
}

// timeLeft estimates the time the check has left at tenths of it, el
// after it started and inPass after pass did. The passes do not take the
// shares of the bar e2fsck gives them (on a slow device pass 2 can take
// most of the time, not a fifth), so once a tenth of the pass is done
// its rest is estimated at the rate the pass has gone, and only the
// passes after it at the rate of the check so far.
func timeLeft(el, inPass time.Duration, pass, tenths uint64) time.Duration {
	rate := float64(el) / float64(tenths) // per tenth of the check
	span := passSpan[pass]
	if done := tenths - min(tenths, span[0]); 10*done >= span[1]-span[0] && inPass > 0 {
		passLeft := float64(inPass) * float64(span[1]-min(tenths, span[1])) / float64(done)
		return time.Duration(passLeft + rate*float64(1000-span[1]))
	}
	return time.Duration(rate * float64(1000-tenths))
}

// clear takes the bar off the screen. p.mu is held.
func (p *progress) clear() {
	if !p.shown {
		return
	}
	fmt.Fprintf(p.out, "%s%s\r%s", p.startMeta(), strings.Repeat(" ", barCols-1), p.stopMeta())
	p.shown = false
}

// startMeta and stopMeta are the log markers around the bar's output
// (empty on an interactive terminal).
func (p *progress) startMeta() string {
	if p.meta {
		return "\001"
	}
	return ""
}

func (p *progress) stopMeta() string {
	if p.meta {
		return "\002"
	}
	return ""
}

// progressWriter is stdout for the check: it clears the bar before each
// write and tells the bar whether a line is left open.
type progressWriter struct {
	p *progress
	w io.Writer
}

func (w *progressWriter) Write(b []byte) (int, error) {
	p := w.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fd == 0 {
		p.clear()
	}
	if len(b) > 0 {
		p.midLine = b[len(b)-1] != '\n'
	}
	return w.w.Write(b)
}
