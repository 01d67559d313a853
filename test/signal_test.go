package test

import (
	"bufio"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"gofsck/internal/testfs"
)

// TestInterruptedCheck: SIGINT during a check stops it cleanly with
// e2fsck's words and exit code (32 canceled | 4 errors left: the check did
// not finish, so the filesystem is not known to be clean).
func TestInterruptedCheck(t *testing.T) {
	img := testfs.MkImage(t, testfs.Spec{
		Size: 64 << 20, BlockSize: 1024, FSType: "ext4", Inodes: 30000,
		Populate: func(tr *testfs.Tree) {
			for _, d := range []string{"a", "b", "c", "d"} {
				tr.ManyFiles(d, 5000)
			}
		},
	})
	cmd := exec.Command(testfs.GofsckPath(t), "-fn", "-E", "threads=1", img)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var out []string
	for sc.Scan() {
		out = append(out, sc.Text())
		if strings.HasPrefix(sc.Text(), "Pass 1:") {
			// Freeze the checker, queue the interrupt, let it go on: the
			// signal is handled while pass 1 still has thousands of
			// inodes to check.
			cmd.Process.Signal(syscall.SIGSTOP)
			cmd.Process.Signal(syscall.SIGINT)
			cmd.Process.Signal(syscall.SIGCONT)
			break
		}
	}
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 36 {
		t.Fatalf("exit %v, want 36 (canceled, errors left)\n%s", err, strings.Join(out, "\n"))
	}
	text := strings.Join(out, "\n")
	if !strings.Contains(text, img+": e2fsck canceled.") || strings.Contains(text, "Pass 5:") {
		t.Errorf("output of an interrupted check:\n%s", text)
	}
}
