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
	for _, want := range []string{`data-name="seq (100 I/Os, 0 MiB)" data-n="100"`, `data-name="other (40 I/Os, 0 MiB)" data-n="40"`,
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
