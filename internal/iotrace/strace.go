package iotrace

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"gofsck/internal/blockdev"
)

// StraceArgs are the strace options whose output ParseStrace reads: follow
// threads, show fd paths, no buffer contents, absolute µs time stamps and
// call durations, positional reads and writes only.
var StraceArgs = []string{"-f", "-y", "-s", "0", "-ttt", "-T", "-qq", "-e", "trace=pread64,pwrite64"}

// ParseStrace reads the output of `strace StraceArgs... -o FILE cmd`,
// keeping the pread64 and pwrite64 calls made on a descriptor whose path
// (printed by -y) is device. It is how iowatch records a program that has
// no tracing of its own, e2fsck for instance. Calls split across lines by
// other threads ("<unfinished ...>" / "<... resumed>") are joined. Times
// become relative to the first kept call.
func ParseStrace(r io.Reader, device string) (*Trace, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxLine)
	type pending struct {
		ts   time.Duration
		text string
	}
	open := map[string]pending{} // pid -> unfinished call
	var ev []Event
	want := "<" + device + ">"
	for sc.Scan() {
		line := sc.Text()
		f := strings.SplitN(line, " ", 3)
		pid := ""
		if len(f) == 3 && !strings.Contains(f[0], ".") {
			pid, f = f[0], f[1:]
		} else {
			f = strings.SplitN(line, " ", 2)
		}
		if len(f) < 2 {
			continue
		}
		ts, err := parseSeconds(f[0])
		if err != nil {
			continue
		}
		call := strings.TrimSpace(f[1])
		switch {
		case strings.HasSuffix(call, "<unfinished ...>"):
			open[pid] = pending{ts, strings.TrimSuffix(call, "<unfinished ...>")}
			continue
		case strings.HasPrefix(call, "<... "):
			p, ok := open[pid]
			delete(open, pid)
			_, rest, found := strings.Cut(call, " resumed>")
			if !ok || !found {
				continue
			}
			ts, call = p.ts, strings.TrimSpace(p.text)+" "+strings.TrimSpace(rest)
		}
		var op blockdev.Op
		switch {
		case strings.HasPrefix(call, "pread64("):
			op = blockdev.OpRead
		case strings.HasPrefix(call, "pwrite64("):
			op = blockdev.OpWrite
		default:
			continue
		}
		e, ok := parseCall(call, want, device == "")
		if !ok {
			continue
		}
		e.Start, e.Op = ts, op
		ev = append(ev, e)
	}
	if err := sc.Err(); err != nil {
		return nil, scanError(err, 0)
	}
	if len(ev) == 0 {
		return nil, fmt.Errorf("%w: no pread64/pwrite64 calls on %s", ErrFormat, device)
	}
	t0 := ev[0].Start
	for i := range ev {
		ev[i].Start -= t0
	}
	return &Trace{Events: ev}, nil
}

// parseCall reads `pread64(3</path>, ""..., 4096, 1024) = 4096 <0.000006>`.
func parseCall(call, want string, any bool) (Event, bool) {
	open := strings.IndexByte(call, '(')
	closeArgs := strings.LastIndex(call, ") = ")
	if open < 0 || closeArgs < open {
		return Event{}, false
	}
	args := strings.Split(call[open+1:closeArgs], ",")
	if len(args) < 4 || (!any && !strings.HasSuffix(strings.TrimSpace(args[0]), want)) {
		return Event{}, false
	}
	n, err1 := strconv.ParseInt(strings.TrimSpace(args[len(args)-2]), 10, 64)
	off, err2 := strconv.ParseInt(strings.TrimSpace(args[len(args)-1]), 10, 64)
	if err1 != nil || err2 != nil || n < 0 || off < 0 || n > 1<<31-1 {
		return Event{}, false
	}
	var dur time.Duration
	if i := strings.LastIndex(call, "<"); i > closeArgs && strings.HasSuffix(call, ">") {
		if d, err := parseSeconds(call[i+1 : len(call)-1]); err == nil {
			dur = d
		}
	}
	return Event{Off: off, Len: int32(n), Dur: dur}, true
}
