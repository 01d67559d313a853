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
