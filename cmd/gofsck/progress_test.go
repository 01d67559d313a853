package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gofsck/internal/testfs"
)

// progressLine is one line of e2fsck's -C fd protocol.
type progressLine struct {
	pass, cur, max uint64
	dev            string
}

// parseProgress reads protocol lines and fails on any malformed one.
func parseProgress(t *testing.T, who, s string) []progressLine {
	t.Helper()
	var lines []progressLine
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if l == "" && s == "" {
			break
		}
		f := strings.Split(l, " ")
		if len(f) != 4 {
			t.Fatalf("%s: line %q is not \"pass cur max device\"", who, l)
		}
		var n [3]uint64
		for i := range n {
			v, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				t.Fatalf("%s: line %q: %v", who, l, err)
			}
			n[i] = v
		}
		lines = append(lines, progressLine{n[0], n[1], n[2], f[3]})
	}
	return lines
}

// passMax checks the protocol's invariants (passes in order, cur never
// past max nor going back, every pass ending at cur == max, one max per
// pass, the device named) and returns each pass's max.
func passMax(t *testing.T, who, dev string, lines []progressLine) map[uint64]uint64 {
	t.Helper()
	maxes := map[uint64]uint64{}
	for i, l := range lines {
		if l.dev != dev {
			t.Errorf("%s: line %d names %q, want %q", who, i, l.dev, dev)
		}
		if l.cur > l.max {
			t.Errorf("%s: line %d: cur %d > max %d", who, i, l.cur, l.max)
		}
		if m, ok := maxes[l.pass]; ok && m != l.max {
			t.Errorf("%s: pass %d: max changes from %d to %d", who, l.pass, m, l.max)
		}
		maxes[l.pass] = l.max
		if i == 0 {
			continue
		}
		p := lines[i-1]
		switch {
		case l.pass < p.pass:
			t.Errorf("%s: line %d: pass %d after pass %d", who, i, l.pass, p.pass)
		case l.pass == p.pass && l.cur < p.cur:
			t.Errorf("%s: line %d: pass %d goes back from %d to %d", who, i, l.pass, p.cur, l.cur)
		case l.pass != p.pass && p.cur != p.max:
			t.Errorf("%s: pass %d ends at %d of %d", who, p.pass, p.cur, p.max)
		}
	}
	if n := len(lines); n > 0 && lines[n-1].cur != lines[n-1].max {
		t.Errorf("%s: pass %d ends at %d of %d", who, lines[n-1].pass, lines[n-1].cur, lines[n-1].max)
	}
	return maxes
}

// e2fsckProgress runs the installed e2fsck -C 3 on img with args (-fn
// when none) and returns what it wrote to fd 3.
func e2fsckProgress(t *testing.T, img string, args ...string) string {
	t.Helper()
	testfs.RequireE2fsprogs(t)
	prog, err := exec.LookPath("e2fsck")
	if err != nil {
		for _, d := range []string{"/usr/sbin", "/sbin"} {
			if _, err := os.Stat(filepath.Join(d, "e2fsck")); err == nil {
				prog = filepath.Join(d, "e2fsck")
			}
		}
	}
	fd3 := tempFile(t)
	if len(args) == 0 {
		args = []string{"-fn"}
	}
	cmd := exec.Command(prog, append(args, "-C", "3", img)...)
	cmd.Env = testfs.Env(t)
	cmd.ExtraFiles = []*os.File{fd3}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if timedOut, err := testfs.RunLimited(cmd, testfs.DefaultTimeout); timedOut {
		t.Fatalf("e2fsck did not finish: %v\n%s", err, out.String())
	} else if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("e2fsck: %v\n%s", err, out.String())
	}
	return readBack(t, fd3)
}

func tempFile(t *testing.T) *os.File {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "progress")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func readBack(t *testing.T, f *os.File) string {
	t.Helper()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runSplit calls run in process and returns stdout, stderr and the exit.
func runSplit(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(append([]string{"gofsck"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

// progressImage is a 64 MiB ext4 image with 1 KiB blocks (8 groups),
// 1200 directories (more than pass 3 reports at once) and directory
// blocks for several pass-2 units.
func progressImage(t *testing.T) string {
	testfs.RequireE2fsprogs(t)
	// Built once for the three tests that read it (never written: they
	// copy it before a repair).
	// mke2fs -d over 9,200 names takes 10-20 s: the image is stored
	// (testfs.PrebuiltLayout, rebuilt and compared in the long tier).
	return testfs.Shared(t, "progress", func(t testing.TB) string {
		spec := testfs.Spec{Size: 64 << 20, FSType: "ext4", BlockSize: 1024, Inodes: 16384}
		recipe := fmt.Sprintf("%+v\n1200 dirs d%%04d; ManyFiles(big, 8000)", spec)
		return testfs.PrebuiltLayout(t, "progress", recipe, func(t testing.TB) string {
			spec.Populate = func(tr *testfs.Tree) {
				for i := 0; i < 1200; i++ {
					tr.Dir(fmt.Sprintf("d%04d", i))
				}
				tr.ManyFiles("big", 8000)
			}
			return testfs.MkImage(t, spec)
		})
	})
}

// TestProgressFdMatchesE2fsck runs -C fd -n with 1 and 4 workers on a
// clean and a damaged image: the lines follow the protocol (cur going
// forward, as it does when nothing is fixed), each pass ends at cur ==
// max, the passes and their max are e2fsck's, and the transcript on
// stdout is the one without -C. TestProgressFdSameLinesAsE2fsck compares
// the lines themselves.
func TestProgressFdMatchesE2fsck(t *testing.T) {
	t.Parallel() // independent of the others; runs beside them on the second CPU
	clean := progressImage(t)
	damaged := filepath.Join(t.TempDir(), "damaged.img")
	testfs.Decompress(t, filepath.Join("sample", "damaged.img.gz"), damaged)
	for _, img := range []string{clean, damaged} {
		elines := parseProgress(t, "e2fsck", e2fsckProgress(t, img))
		if len(elines) == 0 {
			t.Fatal("e2fsck reported no progress")
		}
		dev := elines[0].dev // the label when there is one, else img
		want := passMax(t, "e2fsck", dev, elines)
		if len(want) != 5 {
			t.Fatalf("e2fsck reported passes %v, want 1 to 5", want)
		}
		for _, threads := range []string{"threads=1", "threads=4"} {
			t.Run(filepath.Base(img)+"/"+threads, func(t *testing.T) {
				plain, plainErr, plainCode := runSplit("-fn", "-E", threads, img)
				fd := tempFile(t)
				out, errOut, code := runSplit("-fn", "-E", threads, "-C", strconv.Itoa(int(fd.Fd())), img)
				if out != plain || errOut != plainErr || code != plainCode {
					t.Errorf("-C fd changed the transcript: exit %d, want %d\n%s%s\nwant:\n%s%s", code, plainCode, out, errOut, plain, plainErr)
				}
				glines := parseProgress(t, "gofsck", readBack(t, fd))
				t.Logf("%d lines; e2fsck's %d; max per pass %v", len(glines), len(elines), want)
				got := passMax(t, "gofsck", dev, glines)
				for pass, m := range want {
					if g, ok := got[pass]; !ok || g != m {
						t.Errorf("pass %d: max %d (reported: %v), e2fsck's %d", pass, g, ok, m)
					}
				}
				if len(got) != len(want) {
					t.Errorf("passes %v, e2fsck's %v", got, want)
				}
			})
		}
	}
}

// TestProgressFdSameLinesAsE2fsck: e2fsck writes a -C fd line for every
// unit of every pass (each group in passes 1, 4 and 5, each directory
// block in pass 2, each directory in pass 3), with no rate limit, so the
// lines are a function of the image and the answers: gofsck must write
// the same lines, one for one, whatever its worker count. Checked
// read-only, and repairing damage that makes passes 1 and 2 run again
// after a failed speculation (4 workers) and pass 5 count its groups anew
// after fixing each bitmap (the cur of pass 5 goes back, as e2fsck's).
func TestProgressFdSameLinesAsE2fsck(t *testing.T) {
	t.Parallel() // independent of the others; runs beside them on the second CPU
	clean := progressImage(t)
	damaged := filepath.Join(t.TempDir(), "damaged.img")
	testfs.Decompress(t, filepath.Join("sample", "damaged.img.gz"), damaged)
	// A file in /big cleared: a pass 2 problem late in the directory
	// blocks, then both bitmaps and the counts in pass 5.
	cleared := testfs.CopyImage(t, clean)
	testfs.Debugfs(t, cleared, "clri /big/f7000", "clri /d0600")
	for _, c := range []struct {
		name string
		img  string
		args []string
	}{
		{"clean-fn", clean, []string{"-fn"}},
		{"clean-fy", clean, []string{"-fy"}},
		{"damaged-fn", damaged, []string{"-fn"}},
		{"damaged-fy", damaged, []string{"-fy"}},
		{"cleared-fn", cleared, []string{"-fn"}},
		{"cleared-fy", cleared, []string{"-fy"}},
		{"cleared-fp", cleared, []string{"-fp"}},
	} {
		eimg := testfs.CopyImage(t, c.img)
		want := e2fsckProgress(t, eimg, c.args...)
		elines := parseProgress(t, "e2fsck", want)
		if len(elines) < 5 {
			t.Fatalf("%s: e2fsck wrote %d lines", c.name, len(elines))
		}
		for _, threads := range []string{"threads=1", "threads=4"} {
			t.Run(c.name+"/"+threads, func(t *testing.T) {
				gimg := testfs.CopyImage(t, c.img)
				fd := tempFile(t)
				// The name in the lines is the label, else the path.
				runSplit(append(c.args, "-E", threads, "-C", strconv.Itoa(int(fd.Fd())), gimg)...)
				got := strings.ReplaceAll(readBack(t, fd), gimg, eimg)
				if got != want {
					glines := parseProgress(t, "gofsck", got)
					t.Errorf("%d lines, e2fsck's %d; differ %s", len(glines), len(elines), firstLineDiff(want, got))
				}
			})
		}
	}
}

// TestProgressBar: -C 0 draws the bar on stdout, ends at 100%, and taking
// the bar out (what is between the \001 and \002 markers) leaves the
// transcript without -C.
func TestProgressBar(t *testing.T) {
	t.Parallel() // independent of the others; runs beside them on the second CPU
	img := progressImage(t)
	for _, threads := range []string{"threads=1", "threads=4"} {
		t.Run(threads, func(t *testing.T) {
			plain, _, plainCode := runSplit("-fn", "-E", threads, img)
			out, _, code := runSplit("-fn", "-E", threads, "-C", "0", img)
			if code != plainCode {
				t.Errorf("exit %d, want %d", code, plainCode)
			}
			// stdout is not a terminal: everything the bar writes is
			// between \001 and \002 (TestProgressBarLogMarkers).
			var bars []string
			var rest strings.Builder
			for s := out; ; {
				i := strings.IndexByte(s, '\001')
				if i < 0 {
					rest.WriteString(s)
					break
				}
				j := strings.IndexByte(s[i:], '\002')
				if j < 0 {
					t.Fatalf("unterminated bar in %q", s[i:])
				}
				rest.WriteString(s[:i])
				seg := s[i+1 : i+j]
				if !strings.HasSuffix(seg, "\r") {
					t.Errorf("bar output %q does not end with \\r", seg)
				}
				if seg = strings.TrimSuffix(seg, "\r"); strings.TrimSpace(seg) != "" {
					bars = append(bars, seg)
				}
				s = s[i+j+1:]
			}
			if got := rest.String(); got != plain {
				t.Errorf("transcript without the bar:\n%q\nwant:\n%q", got, plain)
			}
			if len(bars) == 0 || !strings.Contains(bars[len(bars)-1], "| 100.0%") {
				t.Errorf("last bar %q, want 100.0%%", bars)
			}
			for _, b := range bars {
				if !strings.HasPrefix(b, img+": |") || len(b) >= barCols {
					t.Errorf("bar %q", b)
				}
			}
		})
	}
}

// TestProgressFdRefused: a descriptor that is not open is refused as
// e2fsck refuses it (same messages, exit 8); a negative one starts
// quiet.
func TestProgressFdRefused(t *testing.T) {
	img := cleanImage(t)
	gout, gcode := runGofsck("-fn", "-C", "99", img)
	eout, ecode := runE2fsck(t, "-fn", "-C", "99", img)
	if gcode != 8 || ecode != 8 || normalise(gout) != normalise(eout) {
		t.Errorf("gofsck exit %d %q, e2fsck exit %d %q", gcode, gout, ecode, eout)
	}
	fd := tempFile(t)
	if _, _, code := runSplit("-fn", "-C", "-"+strconv.Itoa(int(fd.Fd())), img); code != 0 {
		t.Errorf("-C -fd: exit %d", code)
	}
	if s := readBack(t, fd); s != "" {
		t.Errorf("-C -fd wrote %q before any SIGUSR1", s)
	}
}

// TestProgressSignals: SIGUSR1 turns reporting on, SIGUSR2 off.
func TestProgressSignals(t *testing.T) {
	fd := tempFile(t)
	o := &options{progressFd: int(fd.Fd())}
	p, _ := startProgress(o, "dev", &bytes.Buffer{})
	p.Update(1, 0, 4)
	waitFor := func(on bool) {
		t.Helper()
		deadline := time.Now().Add(testfs.WallBackstop(0)) // catches a lost signal only
		for p.enabled.Load() != on {
			if time.Now().After(deadline) {
				t.Fatalf("reporting still %v", !on)
			}
			time.Sleep(time.Millisecond)
		}
	}
	syscall.Kill(os.Getpid(), syscall.SIGUSR1)
	waitFor(true)
	p.Update(1, 4, 4)
	syscall.Kill(os.Getpid(), syscall.SIGUSR2)
	waitFor(false)
	p.Update(2, 0, 9)
	p.stop()
	if got, want := readBack(t, fd), "1 4 4 dev\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

// TestProgressTick: the protocol writes a line for every Update, as
// e2fsck writes one for every call, a tick only flushing them (a repeated
// or earlier cur too: pass 5 counts its groups again after a fix); the bar
// is drawn on a tick, and waits for the end of an open line of the
// transcript.
func TestProgressTick(t *testing.T) {
	fd := tempFile(t)
	p, _ := startProgress(&options{progressFd: int(fd.Fd()), progressOn: true}, "dev", &bytes.Buffer{})
	p.Update(1, 0, 4)
	p.Update(1, 2, 4)
	p.report(false) // nothing: the bar's
	p.Update(1, 4, 4)
	p.Update(5, 0, 4)
	p.Update(5, 1, 4)
	p.Update(5, 2, 4)
	p.Update(5, 1, 4)
	p.Update(5, 4, 4)
	p.stop()
	want := "1 0 4 dev\n1 2 4 dev\n1 4 4 dev\n5 0 4 dev\n5 1 4 dev\n5 2 4 dev\n5 1 4 dev\n5 4 4 dev\n"
	if got := readBack(t, fd); got != want {
		t.Errorf("protocol %q, want %q", got, want)
	}

	var out bytes.Buffer
	p, w := startProgress(&options{progressOn: true}, "dev", &out)
	p.Update(2, 5, 10) // 80%
	io.WriteString(w, "Fix? ")
	p.report(false) // mid-line: no bar
	io.WriteString(w, "no\n")
	p.report(false)
	p.Update(5, 2, 2)
	io.WriteString(w, "done\n")
	p.stop()
	// Not a terminal: the bar's output is between log markers.
	bars := strings.Count(out.String(), "\001dev: |")
	if !strings.HasPrefix(out.String(), "Fix? no\n\001dev: |") || bars != 2 ||
		!strings.Contains(out.String(), " 80.0% ETA ") || !strings.Contains(out.String(), "100.0%") ||
		!strings.HasSuffix(out.String(), "\r\002done\n") {
		t.Errorf("bar output %q", out.String())
	}
}

// TestProgressBarLogMarkers: when stdin and stdout are not both
// terminals, e2fsck wraps everything the bar writes (drawing and
// clearing) in \001 ... \002, which logsave -s leaves out of its log;
// gofsck does the same, so that the log of `logsave -s log gofsck -C 0`
// is e2fsck's log, and holds neither the bar nor a carriage return.
func TestProgressBarLogMarkers(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	logsave, err := exec.LookPath("logsave")
	if err != nil {
		for _, d := range []string{"/usr/sbin", "/sbin"} {
			if _, e := os.Stat(filepath.Join(d, "logsave")); e == nil {
				logsave, err = filepath.Join(d, "logsave"), nil
			}
		}
	}
	if err != nil {
		t.Fatal("logsave (e2fsprogs) is needed")
	}
	e2fsck, err := exec.LookPath("e2fsck")
	if err != nil {
		e2fsck = "/usr/sbin/e2fsck"
	}
	var env []string
	for _, kv := range testfs.Env(t) {
		if k, _, _ := strings.Cut(kv, "="); k != "E2FSPROGS_FAKE_TIME" && k != "E2FSCK_FORCE_INTERACTIVE" {
			env = append(env, kv)
		}
	}
	img := cleanImage(t)
	dir := t.TempDir()
	// body is the log without logsave's header and footer (command
	// line and dates) and the version banner.
	body := func(log string) string {
		lines := strings.Split(log, "\n")
		if len(lines) < 6 {
			return log
		}
		return normalise(strings.Join(lines[3:len(lines)-3], "\n"))
	}
	var logs, outs [2]string
	for i, prog := range []string{testfs.GofsckPath(t), e2fsck} {
		log := filepath.Join(dir, fmt.Sprintf("log%d", i))
		cmd := exec.Command(logsave, "-s", log, prog, "-fn", "-C", "0", img)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("logsave %s: %v\n%s", prog, err, out.String())
		}
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		logs[i], outs[i] = body(string(b)), out.String()
	}
	if logs[0] != logs[1] {
		t.Errorf("log of gofsck:\n%q\nlog of e2fsck:\n%q", logs[0], logs[1])
	}
	if strings.ContainsAny(logs[0], "\r\001\002|") {
		t.Errorf("the bar is in gofsck's log:\n%q", logs[0])
	}
	if !strings.Contains(outs[0], "\001"+img+": |") || !strings.Contains(outs[0], "\r\002") {
		t.Errorf("gofsck's stdout has no marked bar:\n%q", outs[0])
	}
	// e2fsck draws the bar by the clock: which of its redraws carry the
	// closing marker depends on timing, not on what is checked here.
	if !strings.Contains(outs[1], "\001"+img+": |") {
		t.Errorf("e2fsck's stdout has no marked bar:\n%q", outs[1])
	}
}

// TestProgressBarFollowsWork: the bar shows the work the check's workers
// have done in the current pass (check.WorkProgress) when it is ahead of
// the pass's units, as in a pass of few large units, and ignores work
// reported for another pass; the protocol's lines stay the units.
func TestProgressBarFollowsWork(t *testing.T) {
	var out bytes.Buffer
	p, _ := startProgress(&options{progressOn: true}, "dev", &out)
	bars := func() string {
		s := out.String()
		out.Reset()
		return s
	}
	p.Update(1, 0, 8)
	p.Work(1, 50, 100) // half of pass 1: 35% of the check
	p.report(false)
	if s := bars(); !strings.Contains(s, " 35.0% ETA ") {
		t.Errorf("pass 1 half done: bar %q, want 35.0%%", s)
	}
	p.Update(1, 6, 8) // the units are ahead now: 52.5%
	p.report(false)
	if s := bars(); !strings.Contains(s, " 52.5% ETA ") {
		t.Errorf("6 of 8 groups: bar %q, want 52.5%%", s)
	}
	p.Update(2, 0, 10)
	p.Work(1, 100, 100) // a pass that is over: not pass 2's work
	p.report(false)
	if s := bars(); !strings.Contains(s, " 70.0% ETA ") {
		t.Errorf("pass 2 begun: bar %q, want 70.0%%", s)
	}
	p.Work(2, 3, 4)
	p.report(false)
	if s := bars(); !strings.Contains(s, " 85.0% ETA ") {
		t.Errorf("pass 2, work 3 of 4: bar %q, want 85.0%%", s)
	}
	p.stop()

	fd := tempFile(t)
	p, _ = startProgress(&options{progressFd: int(fd.Fd()), progressOn: true}, "dev", &bytes.Buffer{})
	p.Update(1, 0, 2)
	p.Work(1, 7, 10)
	p.Update(1, 2, 2)
	p.stop()
	if got, want := readBack(t, fd), "1 0 2 dev\n1 2 2 dev\n"; got != want {
		t.Errorf("protocol %q, want %q", got, want)
	}
}

// TestProgressTimeLeft: the rest of a pass a tenth done or more is
// estimated at the pass's own rate, the passes after it at the check's;
// before that, everything at the check's rate.
func TestProgressTimeLeft(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		el, inPass   time.Duration
		pass, tenths uint64
		want         time.Duration
	}{
		// Pass 2 half done (800 of 1000) in 3 s of 4: 3 s for its rest,
		// 100 tenths at 5 ms each for passes 3 to 5.
		{4 * s, 3 * s, 2, 800, 3500 * time.Millisecond},
		// Pass 2 barely begun: 200 tenths at 5 ms.
		{4 * s, 1 * s, 2, 710, 4 * s * 290 / 710},
		// Pass 1 at 35% in 7 s: the rest of it (350 tenths) at 20 ms,
		// 300 tenths after it at 20 ms.
		{7 * s, 7 * s, 1, 350, 13 * s},
	} {
		if got := timeLeft(c.el, c.inPass, c.pass, c.tenths); got != c.want {
			t.Errorf("timeLeft(%v, %v, pass %d, %d) = %v, want %v", c.el, c.inPass, c.pass, c.tenths, got, c.want)
		}
	}
}
