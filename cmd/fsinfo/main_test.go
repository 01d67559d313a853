package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// runFsinfo runs fsinfo in process as "fsinfo".
func runFsinfo(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = run(append([]string{"fsinfo"}, args...), &o, &e)
	return o.String(), e.String(), code
}

// runDumpe2fs runs dumpe2fs and returns its stdout and stderr without
// the version banner, its program name replaced by fsinfo's.
func runDumpe2fs(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command("dumpe2fs", args...)
	cmd.Env = testfs.Env(t)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.Run() // its exit status is the error code's low byte: not compared
	var lines []string
	for _, l := range strings.SplitAfter(e.String(), "\n") {
		if !strings.HasPrefix(l, "dumpe2fs 1.") {
			lines = append(lines, strings.Replace(l, "dumpe2fs: ", "fsinfo: ", 1))
		}
	}
	return o.String(), strings.Join(lines, "")
}

// TestOpenErrorsMatchDumpe2fs: a file that holds no filesystem is
// reported in dumpe2fs's words (com_err's, not Go's error chain), and
// exit 1.
func TestOpenErrorsMatchDumpe2fs(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	dir := t.TempDir()
	zeros := filepath.Join(dir, "zeros.img")
	if err := os.WriteFile(zeros, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short.img")
	if err := os.WriteFile(short, make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{zeros, short, filepath.Join(dir, "missing")} {
		gout, gerr, code := runFsinfo("-h", p)
		eout, eerr := runDumpe2fs(t, "-h", p)
		if code != 1 || gout != eout || gerr != eerr {
			t.Errorf("%s: exit %d\nfsinfo:   %q %q\ndumpe2fs: %q %q", filepath.Base(p), code, gout, gerr, eout, eerr)
		}
		if strings.Contains(gerr, "ondisk") || strings.Contains(gerr, "fs: ") {
			t.Errorf("%s: Go internals in %q", filepath.Base(p), gerr)
		}
	}
}

// TestBadBlocksAndSuperblockLikeDumpe2fs: -b lists the bad blocks, one a
// line, as dumpe2fs -b does (it used to mean "use this superblock"), and
// -o superblock=/blocksize= pick a backup, as dumpe2fs's do.
func TestBadBlocksAndSuperblockLikeDumpe2fs(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{Size: 16 << 20, BlockSize: 1024})
	list := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(list, []byte("500\n501\n7000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := testfs.E2fsckInPlace(t, img, "-fy", "-l", list); code&^1 != 0 {
		t.Fatalf("e2fsck -l: exit %d\n%s", code, out)
	}
	gout, gerr, code := runFsinfo("-b", img)
	eout, eerr := runDumpe2fs(t, "-b", img)
	if code != 0 || gout != eout || gerr != eerr || gout != "500\n501\n7000\n" {
		t.Errorf("-b: exit %d\nfsinfo:   %q %q\ndumpe2fs: %q %q", code, gout, gerr, eout, eerr)
	}
	gout, _, code = runFsinfo("-h", "-o", "superblock=8193", "-o", "blocksize=1024", img)
	eout, _ = runDumpe2fs(t, "-h", "-o", "superblock=8193", "-o", "blocksize=1024", img)
	// fsinfo -h prints dumpe2fs -h's lines, the bad-block one included,
	// in order (and the journal superblock's fields after them).
	rest, ok := gout, true
	for _, l := range strings.SplitAfter(eout, "\n") {
		i := strings.Index(rest, l)
		if i < 0 {
			ok = false
			break
		}
		rest = rest[i+len(l):]
	}
	if code != 0 || !ok || !strings.Contains(gout, "\nBad blocks: 500, 501, 7000\n") {
		t.Errorf("-o superblock=8193: exit %d\nfsinfo:\n%s\ndumpe2fs:\n%s", code, gout, eout)
	}
	if _, gerr, code := runFsinfo("-h", "-o", "superblock=99", "-o", "blocksize=1024", img); code != 1 ||
		gerr != "fsinfo: Bad magic number in super-block while trying to open "+img+"\n" {
		t.Errorf("-o superblock=99: exit %d, %q", code, gerr)
	}
}
