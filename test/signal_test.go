package test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gofsck/internal/testfs"
)

// TestInterruptedCheck: SIGINT in the middle of a check stops it as
// e2fsck's signal handler does (unix.c: "e2fsck canceled.", FSCK_CANCELED;
// the "still has errors" warning, and FSCK_UNCORRECTED with it, only when
// a problem was left unfixed so far or the superblock has EXT2_ERROR_FS;
// no summary line). Both checkers are interrupted at the same point, their
// "Pass 2" header, and must end alike.
func TestInterruptedCheck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	e2fsck, err := exec.LookPath("e2fsck")
	if err != nil {
		t.Fatal(err)
	}
	// mke2fs -d over 20,000 names takes 10-20 s: the image is stored
	// (testfs.PrebuiltLayout, rebuilt and compared in the long tier).
	spec := testfs.Spec{Size: 64 << 20, BlockSize: 1024, FSType: "ext4", Inodes: 30000}
	base := testfs.PrebuiltLayout(t, "interrupt", fmt.Sprintf("%+v\nManyFiles(a|b|c|d, 5000)", spec), func(t testing.TB) string {
		spec.Populate = func(tr *testfs.Tree) {
			for _, d := range []string{"a", "b", "c", "d"} {
				tr.ManyFiles(d, 5000)
			}
		}
		return testfs.MkImage(t, spec)
	})
	cases := []struct {
		name     string
		args     []string
		damage   []string // debugfs commands
		exit     int
		stillErr bool
	}{
		// Nothing found before the signal: cancelled, and only that.
		{name: "clean", args: []string{"-fn"}, exit: 32},
		// Pass 1 left a problem unfixed (-n): the filesystem is not valid.
		{name: "unfixed", args: []string{"-fn"}, damage: []string{"sif /a/entry-with-a-long-name-00001 dtime 12345"}, exit: 36, stillErr: true},
		// Nothing found, but the superblock says the kernel saw errors.
		{name: "error-state", args: []string{"-fn"}, damage: []string{"ssv state 3"}, exit: 36, stillErr: true},
		// A writable run that has found nothing yet.
		{name: "clean-y", args: []string{"-fy"}, exit: 32},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := testfs.CopyImage(t, base)
			if len(c.damage) > 0 {
				testfs.Debugfs(t, img, c.damage...)
			}
			for _, prog := range []string{e2fsck, testfs.GofsckPath(t)} {
				name := filepath.Base(prog)
				out, exit := interruptAtPass2(t, prog, append(c.args, img)...)
				if exit != c.exit {
					t.Errorf("%s: exit %d, want %d\n%s", name, exit, c.exit, out)
				}
				if !strings.Contains(out, img+": e2fsck canceled.\n") {
					t.Errorf("%s: no \"e2fsck canceled.\" line\n%s", name, out)
				}
				warn := "\n" + img + ": ********** WARNING: Filesystem still has errors **********\n\n"
				if got := strings.HasSuffix(out, "canceled.\n"+warn); got != c.stillErr {
					t.Errorf("%s: output ends with the \"still has errors\" warning: %v, want %v\n%s", name, got, c.stillErr, out)
				}
				if c.stillErr == false && !strings.HasSuffix(out, "canceled.\n") {
					t.Errorf("%s: output goes on after \"e2fsck canceled.\"\n%s", name, out)
				}
				if strings.Contains(out, "Pass 5:") || strings.Contains(out, "files (") {
					t.Errorf("%s: the check went on to the end\n%s", name, out)
				}
			}
		})
	}
}

// interruptAtPass2 runs prog with args and interrupts it while it writes
// the "Pass 2" header, deterministically: a first run measures the output
// written before the header; the second run's stdout is a one-page pipe
// filled beforehand so that exactly that output fits, which blocks the
// checker in write(2) on the header's first byte. Once it is settled
// there, it gets SIGINT, and the pipe is drained only when the signal has
// been delivered and the process has settled again: for gofsck, whose
// handler is a goroutine (os/signal) that cancels the check's context,
// every thread asleep means that goroutine has run. It returns stdout
// (the filler removed) and the exit status.
func interruptAtPass2(t *testing.T, prog string, args ...string) (string, int) {
	t.Helper()
	env := checkerEnv(t)
	full := exec.Command(prog, args...)
	full.Env = env
	whole, _ := full.Output()
	before := bytes.Index(whole, []byte("Pass 2: "))
	if before < 0 {
		t.Fatalf("%s %v: no Pass 2 header\n%s", prog, args, whole)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, os.Getpagesize()); err != nil {
		t.Fatal(err)
	}
	capacity, err := unix.FcntlInt(w.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	if before >= capacity {
		t.Fatalf("%d bytes before Pass 2, more than the pipe's %d", before, capacity)
	}
	filler := capacity - before
	if _, err := w.Write(bytes.Repeat([]byte{'#'}, filler)); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog, args...)
	cmd.Env = env
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	pid := cmd.Process.Pid
	if !waitSettled(pid) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%s never blocked writing its Pass 2 header", prog)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if !waitFor(func() bool { return !sigintPending(pid) }) || !waitSettled(pid) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%s: SIGINT not handled", prog)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	exit := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		exit = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	if len(out) < filler || !bytes.Equal(out[:filler], bytes.Repeat([]byte{'#'}, filler)) {
		t.Fatalf("%s: the filler was not read back first", prog)
	}
	return string(out[filler:]), exit
}

// waitFor polls cond until it holds, or testfs's wall-clock backstop
// for a run that hangs passes.
func waitFor(cond func() bool) bool {
	for deadline := time.Now().Add(testfs.WallBackstop(0)); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}

// writeSyscall is write(2)'s number, as /proc/PID/syscall shows it.
func writeSyscall() string {
	switch runtime.GOARCH {
	case "amd64":
		return "1"
	case "arm64", "riscv64", "loong64":
		return "64"
	case "386":
		return "4"
	}
	panic("writeSyscall: unknown architecture " + runtime.GOARCH)
}

// settled reports whether process pid has a thread in write(2) on fd 1
// and no thread running or runnable.
func settled(pid int) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	writing := false
	for _, task := range tasks {
		st, err := os.ReadFile(filepath.Join(task, "stat"))
		if err != nil {
			return false
		}
		// The state follows the parenthesised command name.
		i := bytes.LastIndexByte(st, ')')
		if i < 0 || i+2 >= len(st) || (st[i+2] != 'S' && st[i+2] != 'D') {
			return false
		}
		sc, err := os.ReadFile(filepath.Join(task, "syscall"))
		if err == nil && strings.HasPrefix(string(sc), writeSyscall()+" 0x1 ") {
			writing = true
		}
	}
	return writing
}

// waitSettled waits until process pid has been settled (see settled) on
// ten polls in a row, a millisecond apart.
func waitSettled(pid int) bool {
	n := 0
	return waitFor(func() bool {
		if settled(pid) {
			n++
		} else {
			n = 0
		}
		return n >= 10
	})
}

// sigintPending reports whether SIGINT waits for delivery to process pid
// (or any of its threads).
func sigintPending(pid int) bool {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	files = append(files, fmt.Sprintf("/proc/%d/status", pid))
	bit := uint64(1) << (uint(syscall.SIGINT) - 1)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(l, ":")
			if !ok || (k != "SigPnd" && k != "ShdPnd") {
				continue
			}
			var mask uint64
			fmt.Sscanf(strings.TrimSpace(v), "%x", &mask)
			if mask&bit != 0 {
				return true
			}
		}
	}
	return false
}

// checkerEnv is testfs.Env without the fake clock, as testfs runs the
// checkers.
func checkerEnv(t *testing.T) []string {
	var env []string
	for _, kv := range testfs.Env(t) {
		if !strings.HasPrefix(kv, "E2FSPROGS_FAKE_TIME=") {
			env = append(env, kv)
		}
	}
	return env
}
