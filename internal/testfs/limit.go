package testfs

import (
	"errors"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Bounding a program run without letting load decide the verdict.
//
// A test that runs e2fsck, gofsck or mke2fs bounds it so that a hang
// fails instead of stalling the suite. The bound is CPU time: the kernel
// counts only the time the program itself ran (RLIMIT_CPU), so a machine
// busy with other work stretches the wall-clock time of a run but not
// the verdict. A program blocked without spinning (a read that never
// returns, a lock) is caught by a wall-clock backstop far above any run
// a loaded machine makes: WallBackstop(cpu).

// wallBackstopFactor and minWallBackstop size the wall-clock backstop: the
// suite's slowest bounded run, measured on a 2-CPU machine with both CPUs
// kept busy by other programs, takes well under a tenth of either.
const (
	wallBackstopFactor = 20
	minWallBackstop    = 10 * time.Minute
)

// WallBackstop is the wall-clock time a run bounded to cpu of CPU time
// may take before it counts as hung: twenty times cpu, and at least ten
// minutes.
func WallBackstop(cpu time.Duration) time.Duration {
	return max(wallBackstopFactor*cpu, minWallBackstop)
}

// RunLimited runs cmd (not yet started) with at most cpu of CPU time, and
// WallBackstop(cpu) of wall-clock time. timedOut reports that either
// bound stopped it; err is what cmd.Wait returned otherwise (an
// *exec.ExitError for a non-zero exit).
//
// The CPU limit is set on the child right after it starts (prlimit), soft
// and hard alike, so the kernel kills it with SIGKILL once it has used
// cpu; the few instructions it ran before the limit was set count too.
// The limit is inherited by anything the program itself starts.
func RunLimited(cmd *exec.Cmd, cpu time.Duration) (timedOut bool, err error) {
	if err := cmd.Start(); err != nil {
		return false, err
	}
	secs := uint64((cpu + time.Second - 1) / time.Second)
	lim := unix.Rlimit{Cur: secs, Max: secs}
	// An error here means the child has already exited; Wait tells how.
	_ = unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_CPU, &lim, nil)

	wallHit := make(chan struct{})
	timer := time.AfterFunc(WallBackstop(cpu), func() {
		close(wallHit)
		cmd.Process.Kill()
	})
	err = cmd.Wait()
	stopped := timer.Stop()
	if !stopped {
		<-wallHit
		return true, err
	}
	if cpuKilled(err) {
		return true, err
	}
	return false, err
}

// cpuKilled reports whether err says the process died of SIGKILL or
// SIGXCPU, the signals of RLIMIT_CPU.
func cpuKilled(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	st, ok := ee.Sys().(syscall.WaitStatus)
	return ok && st.Signaled() && (st.Signal() == syscall.SIGKILL || st.Signal() == syscall.SIGXCPU)
}

// ProcessCPU is the CPU time this process has used so far, user and
// system: the bound of a check run in process (RunLimited's CPU limit
// for code that cannot run as a child).
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
