package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gofsck/internal/testfs"
)

// TestSampleRemovesItsCopy: gofsck --sample removes its temporary image
// when its reader goes away (gofsck --sample | head: SIGPIPE used to kill
// it before the removal) and on a hangup, as after a full run. (Whether
// the reader is gone before the run's last write depends on timing: the
// new code removes the copy either way, the old one only leaked it when
// the close came first; the hangup case is the deterministic one.)
func TestSampleRemovesItsCopy(t *testing.T) {
	bin := testfs.GofsckPath(t)
	for _, how := range []string{"full", "reader gone", "hangup"} {
		t.Run(how, func(t *testing.T) {
			tmp := t.TempDir()
			cmd := exec.Command(bin, "--sample")
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			first, err := bufio.NewReader(out).ReadString('\n')
			if err != nil || !strings.Contains(first, tmp) {
				t.Fatalf("first line %q: %v", first, err)
			}
			switch how {
			case "full":
				_, err = bufio.NewReader(out).ReadString(0)
			case "reader gone":
				out.Close()
			case "hangup":
				cmd.Process.Signal(syscall.SIGHUP)
				out.Close()
			}
			cmd.Wait()
			left, _ := filepath.Glob(filepath.Join(tmp, "*"))
			if len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}
