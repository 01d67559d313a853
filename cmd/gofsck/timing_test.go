package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestParallelismReport checks what -t -t and the JSON report say of the
// serial part of each pass. With one worker pass 1 checks every inode on
// the check's own goroutine, so its serial CPU time is most of the pass's
// work; with four it only replays the workers' results, a small fraction
// of that. Both are CPU times of one thread, which a busy machine does
// not change; on this image they differ about eightfold, and the test
// asks for three.
func TestParallelismReport(t *testing.T) {
	img := progressImage(t)
	dir := t.TempDir()
	pass1Serial := map[string]float64{}
	for _, threads := range []string{"1", "4"} {
		report := filepath.Join(dir, "r"+threads+".json")
		out, code := runGofsck("-fn", "-t", "-t", "-E", "threads="+threads+",json="+report, img)
		if code != 0 {
			t.Fatalf("threads=%s: exit %d\n%s", threads, code, out)
		}
		line := regexp.MustCompile(`(?m)^Pass ([1-5]): Parallel: cpu [0-9.]+ over real [0-9.]+ \([0-9.]+x\), serial cpu [0-9.]+ \([0-9]+%\)$`)
		if got := len(line.FindAllString(out, -1)); got != 5 {
			t.Errorf("threads=%s: %d \"Pass N: Parallel:\" lines, want 5\n%s", threads, got, out)
		}
		if !regexp.MustCompile(`(?m)^Parallel: cpu `).MatchString(out) {
			t.Errorf("threads=%s: no total \"Parallel:\" line\n%s", threads, out)
		}
		b, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Passes []struct {
				Name          string  `json:"name"`
				UserSeconds   float64 `json:"user_seconds"`
				SysSeconds    float64 `json:"sys_seconds"`
				SerialSeconds float64 `json:"serial_seconds"`
			} `json:"passes"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		for _, p := range r.Passes {
			// The thread's time is part of the process's: the two
			// snapshots are taken a few microseconds apart.
			if p.SerialSeconds < 0 || p.SerialSeconds > p.UserSeconds+p.SysSeconds+0.005 {
				t.Errorf("threads=%s: %s: serial %.4fs of cpu %.4fs", threads, p.Name, p.SerialSeconds, p.UserSeconds+p.SysSeconds)
			}
			if strings.HasSuffix(p.Name, " 1") {
				pass1Serial[threads] = p.SerialSeconds
			}
		}
	}
	if one, four := pass1Serial["1"], pass1Serial["4"]; one <= 0 || one < 3*four {
		t.Errorf("pass 1's serial cpu: %.4fs with one worker, %.4fs with four; want the four workers to take most of it", one, four)
	}
}
