package testfs

import (
	"errors"
	"os/exec"
	"testing"
	"time"
)

// TestRunLimitedStopsBySpinningCPU: a program that spins is stopped by the
// CPU-time limit, whatever else the machine is doing (the wall-clock
// backstop, ten minutes at least, is far beyond any load), and one that
// exits in time keeps its exit status.
func TestRunLimitedStopsBySpinningCPU(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
	start := time.Now()
	timedOut, err := RunLimited(cmd, time.Second)
	if !timedOut || !cpuKilled(err) {
		t.Fatalf("a spinning program: timed out %v, err %v", timedOut, err)
	}
	if el := time.Since(start); el >= WallBackstop(time.Second) {
		t.Errorf("stopped by the wall-clock backstop after %v, not by the CPU limit", el)
	}
	if ps := cmd.ProcessState; ps == nil || ps.UserTime()+ps.SystemTime() < 500*time.Millisecond {
		t.Errorf("killed before it used most of its second of CPU time: %v user %v sys %v", ps, ps.UserTime(), ps.SystemTime())
	}

	timedOut, err = RunLimited(exec.Command("/bin/sh", "-c", "exit 3"), time.Second)
	var ee *exec.ExitError
	if timedOut || !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("a program that exits 3: timed out %v, err %v", timedOut, err)
	}
	// Sleeping uses no CPU time: a second's limit does not stop a
	// two-second sleep.
	if timedOut, err := RunLimited(exec.Command("sleep", "2"), time.Second); timedOut || err != nil {
		t.Errorf("a sleeping program: timed out %v, err %v", timedOut, err)
	}
}

func TestWallBackstop(t *testing.T) {
	if WallBackstop(time.Second) != 10*time.Minute || WallBackstop(time.Hour) != 20*time.Hour {
		t.Errorf("WallBackstop: %v, %v", WallBackstop(time.Second), WallBackstop(time.Hour))
	}
}
