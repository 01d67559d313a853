package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gofsck/internal/blockdev"
	"gofsck/internal/iotrace"
)

func TestTwoTracesOverlaid(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, n int, stride int64) string {
		tr := &iotrace.Trace{Name: name}
		for i := 0; i < n; i++ {
			tr.Events = append(tr.Events, iotrace.Event{Start: time.Duration(i) * 10 * time.Millisecond,
				Off: int64(i) * stride, Len: 4096, Op: blockdev.OpRead})
		}
		p := filepath.Join(dir, name+".iotrace")
		if err := tr.Save(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := mk("seq", 100, 1<<20), mk("other", 40, 3<<20)
	out := filepath.Join(dir, "o.svg")
	var so, se bytes.Buffer
	if code := run([]string{"iowatch", "-o", out, a, b}, &so, &se); code != 0 {
		t.Fatalf("exit %d: %s", code, se.String())
	}
	svg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := string(svg)
	for _, want := range []string{`data-name="seq (100 I/Os, 400 KiB)" data-n="100"`, `data-name="other (40 I/Os, 160 KiB)" data-n="40"`,
		"disk offset (MiB)", "throughput (MiB/s)", "seeks per second", "time (ms)"} {
		if !strings.Contains(s, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if n := strings.Count(s, `<circle cx=`); n != 140+2 { // points + 2 legend dots
		t.Errorf("%d circles, want 142", n)
	}
	if !strings.Contains(so.String(), "seq: 100 I/Os") {
		t.Errorf("summary: %s", so.String())
	}
	if code := run([]string{"iowatch", "-s", "-o", out, a, b}, &so, &se); code != 0 {
		t.Fatalf("side by side: exit %d", code)
	}
	if code := run([]string{"iowatch", "-o", out}, &so, &se); code != 2 {
		t.Errorf("no trace: exit %d", code)
	}
}

// TestNotATrace: a file that is no trace (a disk image given by mistake,
// a text with a line longer than any trace has) is named as such, not
// with the scanner's internals ("bufio.Scanner: token too long").
func TestNotATrace(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "big.img")
	if err := os.WriteFile(img, append([]byte("\x53\xef"), make([]byte, 1<<20)...), 0o644); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, "long.txt")
	if err := os.WriteFile(long, []byte(strings.Repeat("x", 200000)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{img, long} {
		var so, se bytes.Buffer
		code := run([]string{"iowatch", "-o", filepath.Join(dir, "out.svg"), p}, &so, &se)
		if want := "iowatch: " + p + ": not an iotrace, blkparse or strace trace\n"; code != 1 || se.String() != want {
			t.Errorf("%s: exit %d, stderr %q, want %q", filepath.Base(p), code, se.String(), want)
		}
	}
}

// TestDefaultBinAndLegend: a run of about a second gets 50 ms bins (1/120
// of it, 10 ms, made the throughput and seek panels spiky), and the
// legend gives 1.3 MiB as "1.3 MiB", not "1 MiB".
func TestDefaultBinAndLegend(t *testing.T) {
	for _, c := range []struct {
		dur, want time.Duration
	}{
		{1200 * time.Millisecond, 50 * time.Millisecond},
		{10 * time.Second, 100 * time.Millisecond},
		{200 * time.Millisecond, 10 * time.Millisecond},
		{10 * time.Minute, 10 * time.Second},
	} {
		if got := defaultBin(c.dur); got != c.want {
			t.Errorf("defaultBin(%v) = %v, want %v", c.dur, got, c.want)
		}
	}
	tr := &iotrace.Trace{Name: "run"}
	for i := 0; i < 13; i++ { // 13 reads of 104 KiB over 1.2 s: 1.3 MiB
		tr.Events = append(tr.Events, iotrace.Event{Start: time.Duration(i) * 100 * time.Millisecond,
			Off: int64(i) << 20, Len: 104 << 10, Op: blockdev.OpRead})
	}
	fig := Figure([]*iotrace.Trace{tr}, "t", false, 0)
	if name := fig.Panels[0].Series[0].Name; name != "run (13 I/Os, 1.3 MiB)" {
		t.Errorf("legend %q", name)
	}
	if title := fig.Panels[1].Title; !strings.Contains(title, "(per 50ms)") {
		t.Errorf("throughput panel %q", title)
	}
	for b, want := range map[int64]string{512 << 10: "512 KiB", 1363149: "1.3 MiB", 25 << 20: "25 MiB"} {
		if got := sizeText(b); got != want {
			t.Errorf("sizeText(%d) = %q, want %q", b, got, want)
		}
	}
}
