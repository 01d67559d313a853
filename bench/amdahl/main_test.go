package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProjectsRealReport runs gofsck on a small image made by mke2fs with
// one worker, so that every pass is serial, and wants each pass capped at
// about 1x, and then checks the arithmetic on a report whose numbers are
// chosen: 10 s of CPU of which 1 s serial is 1 + 9/8 s on 8 CPUs and
// caps at 10x.
func TestProjectsRealReport(t *testing.T) {
	if _, err := exec.LookPath("mke2fs"); err != nil {
		t.Fatal("mke2fs is needed (e2fsprogs)")
	}
	dir := t.TempDir()
	img := filepath.Join(dir, "fs.img")
	if out, err := exec.Command("mke2fs", "-q", "-F", "-t", "ext4", img, "16M").CombinedOutput(); err != nil {
		t.Fatalf("mke2fs: %v\n%s", err, out)
	}
	report := filepath.Join(dir, "one-worker.json")
	gofsck := exec.Command("go", "run", "../../cmd/gofsck", "-fn", "-E", "threads=1,json="+report, img)
	if out, err := gofsck.CombinedOutput(); err != nil {
		t.Fatalf("gofsck: %v\n%s", err, out)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{report}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"| one-worker | Pass 1 |", "| one-worker | Pass 5 |", "| one-worker | whole run |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no row %q in\n%s", want, out.String())
		}
	}

	chosen := filepath.Join(dir, "chosen.json")
	if err := os.WriteFile(chosen, []byte(`{"duration_seconds": 2.5, "passes": [{"name": "Pass 1", "real_seconds": 2.5, "user_seconds": 9, "sys_seconds": 1, "serial_seconds": 1}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run([]string{"-cpus", "8", chosen}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if want := "| chosen | Pass 1 | 2.500 | 10.000 | 1.000 | 4.00 | 10.0 | 2.125 |"; !strings.Contains(out.String(), want) {
		t.Errorf("want %q in\n%s", want, out.String())
	}
}
