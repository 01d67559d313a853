package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gofsck/internal/blockdev"
	"gofsck/internal/testfs"
	"gofsck/internal/undo"
)

// undoTool returns the path of an e2fsprogs program; a missing one fails
// the test: these tests compare with e2undo and need e2fsck's undo files.
func undoTool(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range []string{"/usr/sbin", "/sbin"} {
		if _, err := os.Stat(filepath.Join(d, name)); err == nil {
			return filepath.Join(d, name)
		}
	}
	t.Fatalf("%s is required (install e2fsprogs)", name)
	return ""
}

// runTool runs an e2fsprogs program with the test environment and returns
// its stdout, stderr and exit status.
func runUndoTool(t *testing.T, env []string, name string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(undoTool(t, name), args...)
	cmd.Env = append(testfs.Env(t), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errb.String(), 0
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	}
	t.Fatalf("%s: %v", name, err)
	return "", "", 0
}

func runUndoCmd(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = runUndo(args, &out, &errb)
	return out.String(), errb.String(), code
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// repairedImage makes an ext4 image, damages it with debugfs and repairs it
// with e2fsck -fy -z. It returns the image, the bytes e2fsck started from
// and the undo file.
func repairedImage(t *testing.T, env ...string) (img string, before []byte, undoFile string) {
	t.Helper()
	for _, n := range []string{"mke2fs", "debugfs", "e2fsck", "e2undo"} {
		undoTool(t, n)
	}
	img = testfs.MkImage(t, testfs.Spec{FSType: "ext4", Populate: func(tr *testfs.Tree) {
		for i := range 8 {
			tr.File(fmt.Sprintf("f%d", i), int64(1+i*9000))
		}
	}})
	testfs.Debugfs(t, img, "clri f2", "freeb 400 30")
	before = mustRead(t, img)
	undoFile = filepath.Join(t.TempDir(), "fsck.e2undo")
	if out, errs, code := runUndoTool(t, env, "e2fsck", "-fy", "-z", undoFile, img); code != 1 {
		t.Fatalf("e2fsck -fy -z: exit %d\n%s%s", code, out, errs)
	}
	if bytes.Equal(mustRead(t, img), before) {
		t.Fatal("e2fsck changed nothing")
	}
	return img, before, undoFile
}

// TestUndoRestores: gofsck undo puts back the image e2fsck started from,
// silently and with exit 0; for an unfinished file (e2fsck interrupted) it
// says so as e2undo does, and still restores it byte for byte.
func TestUndoRestores(t *testing.T) {
	for _, unfinished := range []bool{false, true} {
		t.Run(fmt.Sprint("unfinished=", unfinished), func(t *testing.T) {
			var env []string
			if unfinished {
				env = []string{"UNDO_IO_SIMULATE_UNFINISHED=1"}
			}
			img, before, u := repairedImage(t, env...)
			out, errs, code := runUndoCmd(u, img)
			wantErr := ""
			if unfinished {
				wantErr = "Incomplete undo record; run e2fsck.\n"
			}
			if code != 0 || out != "" || errs != wantErr {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 0, nothing, %q", code, out, errs, wantErr)
			}
			if !bytes.Equal(mustRead(t, img), before) {
				t.Fatal("the image is not what e2fsck started from")
			}
		})
	}
}

// TestUndoDryRunMatchesE2undo: -n -v lists the blocks it would replay
// exactly as e2undo -n -v does, and writes nothing (the device is opened
// read-only).
func TestUndoDryRunMatchesE2undo(t *testing.T) {
	img, _, u := repairedImage(t)
	after := mustRead(t, img)
	want, wantErr, wantCode := runUndoTool(t, nil, "e2undo", "-n", "-v", u, img)
	got, gotErr, code := runUndoCmd("-n", "-v", u, img)
	if code != wantCode || got != want || gotErr != wantErr {
		t.Errorf("gofsck undo -n -v: exit %d\n%s%s\ne2undo -n -v: exit %d\n%s%s", code, got, gotErr, wantCode, want, wantErr)
	}
	if !strings.Contains(got, "Replayed block of size ") {
		t.Errorf("no block listed:\n%s", got)
	}
	if !bytes.Equal(mustRead(t, img), after) {
		t.Fatal("a dry run changed the image")
	}
}

// TestUndoHeaderDump: -h prints the header as e2undo -h does (and exits 1,
// as e2undo does).
func TestUndoHeaderDump(t *testing.T) {
	img, _, u := repairedImage(t)
	want, _, wantCode := runUndoTool(t, nil, "e2undo", "-h", u, img)
	got, _, code := runUndoCmd("-h", u, img)
	if got != want || code != wantCode || code != 1 {
		t.Errorf("gofsck undo -h: exit %d\n%s\ne2undo -h: exit %d\n%s", code, got, wantCode, want)
	}
}

// TestUndoWrongDevice: an undo file is refused for another file system
// (another UUID) with e2undo's message and status, the device untouched;
// -f applies it anyway.
func TestUndoWrongDevice(t *testing.T) {
	img, _, u := repairedImage(t)
	other := filepath.Join(t.TempDir(), "other.img")
	data := mustRead(t, img)
	copy(data[1024+0x68:], bytes.Repeat([]byte{0x5a}, 16)) // s_uuid
	if err := os.WriteFile(other, data, 0o600); err != nil {
		t.Fatal(err)
	}
	want, wantErr, wantCode := runUndoTool(t, nil, "e2undo", u, other)
	if !bytes.Equal(mustRead(t, other), data) {
		t.Fatal("e2undo changed the other file system")
	}
	got, gotErr, code := runUndoCmd(u, other)
	if code != 1 || code != wantCode || got != want || gotErr != wantErr {
		t.Errorf("gofsck undo: exit %d\n%s%s\ne2undo: exit %d\n%s%s", code, got, gotErr, wantCode, want, wantErr)
	}
	if !strings.Contains(got, "UUID does not match.") {
		t.Errorf("no UUID line:\n%s", got)
	}
	if !bytes.Equal(mustRead(t, other), data) {
		t.Fatal("a refused undo changed the device")
	}
	if _, errs, code := runUndoCmd("-f", u, other); code != 0 {
		t.Errorf("-f: exit %d\n%s", code, errs)
	}
	if bytes.Equal(mustRead(t, other), data) {
		t.Error("-f wrote nothing")
	}
}

// TestUndoRefusals: bad command lines and bad undo files, each with
// e2undo's message and exit 1, and the device untouched. Where e2undo
// prints the same text (it names itself only in usage and com_err lines)
// the outputs are compared.
func TestUndoRefusals(t *testing.T) {
	img, _, u := repairedImage(t)
	after := mustRead(t, img)
	dir := t.TempDir()
	notUndo := filepath.Join(dir, "not-undo")
	if err := os.WriteFile(notUndo, bytes.Repeat([]byte("x"), 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	badHeader := filepath.Join(dir, "bad-header")
	b := mustRead(t, u)
	b[100] ^= 1 // header padding: only the checksum notices
	if err := os.WriteFile(badHeader, b, 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := undo.ReadHeader(u)
	if err != nil {
		t.Fatal(err)
	}
	badData := filepath.Join(dir, "bad-data")
	b = mustRead(t, u)
	b[int(h.BlockSize())*3+7] ^= 1 // first saved block
	if err := os.WriteFile(badData, b, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	bs := int(h.BlockSize())
	firstBlk := binary.LittleEndian.Uint64(b[2*bs+16:]) // the first key's fsblk

	for _, tc := range []struct {
		name       string
		args       []string
		wantErr    string // gofsck undo's stderr
		sameAsE2u  bool   // e2undo prints exactly this too
		wantStdout string
	}{
		{"no-operands", nil, "Usage: gofsck undo [-f] [-h] [-n] [-o offset] [-v] <transaction file> <filesystem>\n", false, ""},
		{"one-operand", []string{u}, "Usage: gofsck undo [-f] [-h] [-n] [-o offset] [-v] <transaction file> <filesystem>\n", false, ""},
		{"bad-option", []string{"-x", u, img}, "gofsck undo: invalid option -- 'x'\nUsage: gofsck undo [-f] [-h] [-n] [-o offset] [-v] <transaction file> <filesystem>\n", false, ""},
		{"bad-offset", []string{"-o", "12k", u, img}, "gofsck undo: illegal offset - 12k\n", false, ""},
		{"missing-undo-file", []string{missing, img}, "gofsck undo: No such file or directory while opening undo file `" + missing + "'\n", false, ""},
		{"missing-device", []string{u, missing}, "gofsck undo: No such file or directory while opening `" + missing + "'\n", false, ""},
		{"not-an-undo-file", []string{notUndo, img}, notUndo + ": Not an undo file.\n", true, ""},
		{"header-checksum", []string{badHeader, img}, badHeader + ": Header checksum doesn't match.\n", true, ""},
		{"block-checksum", []string{badData, img}, fmt.Sprintf("checksum error in filesystem block %d (undo blk 3)\n", firstBlk), true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runUndoCmd(tc.args...)
			if code != 1 || errs != tc.wantErr || out != tc.wantStdout {
				t.Errorf("exit %d, stdout %q, stderr %q\nwant exit 1, stdout %q, stderr %q", code, out, errs, tc.wantStdout, tc.wantErr)
			}
			if tc.sameAsE2u {
				eout, eerr, ecode := runUndoTool(t, nil, "e2undo", tc.args...)
				if ecode != code || eout != out || eerr != errs {
					t.Errorf("e2undo: exit %d, stdout %q, stderr %q", ecode, eout, eerr)
				}
			}
			if !bytes.Equal(mustRead(t, img), after) {
				t.Fatal("the device changed")
			}
		})
	}
}

// TestUndoWriterFile: an undo file written by gofsck's own writer (as the
// repair will) is replayed by gofsck undo, and e2undo reads it the same way
// (the same -n -v listing).
func TestUndoWriterFile(t *testing.T) {
	undoTool(t, "e2undo")
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", BlockSize: 1024})
	before := mustRead(t, img)
	u := filepath.Join(t.TempDir(), "gofsck.e2undo")
	dev, err := blockdev.Open(img, false, true)
	if err != nil {
		t.Fatal(err)
	}
	w, err := undo.Create(u, dev, 1024, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, off := range []int64{1024 + 0x0C, 5000, 300 << 10, 2 << 20} {
		if _, err := w.WriteAt(bytes.Repeat([]byte{byte(i + 1)}, 3000), off); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	dev.Close()
	want, _, _ := runUndoTool(t, nil, "e2undo", "-n", "-v", u, img)
	got, errs, code := runUndoCmd("-v", u, img)
	if code != 0 || got != want || errs != "" {
		t.Errorf("gofsck undo -v: exit %d\n%s%s\ne2undo -n -v:\n%s", code, got, errs, want)
	}
	if !bytes.Equal(mustRead(t, img), before) {
		t.Fatal("not restored")
	}
}

// TestUndoHint: with -z, e2fsck's e2fsck_setup_tdb prints how to undo the
// run before opening the device, in every mode (even -n and a clean
// preen), naming the device as given, and again when the check restarts
// after a journal recovery; gofsck's output is e2fsck's, line for line.
func TestUndoHint(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	damaged := testfs.MkImage(t, testfs.Spec{Populate: func(tr *testfs.Tree) {
		tr.Dir("d")
		tr.File("d/f", 5000)
	}})
	testfs.Debugfs(t, damaged, "sif /d/f links_count 5")
	// A committed transaction in the journal: needs_recovery.
	journaled := testfs.MkImage(t, testfs.Spec{FSType: "ext4"})
	data := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(data, bytes.Repeat([]byte("j"), 1024), 0o644); err != nil {
		t.Fatal(err)
	}
	testfs.Debugfs(t, journaled, "jo", "jw -b 333 "+data, "jc")
	if sb := testfs.Superblock(t, journaled); !strings.Contains(sb["Filesystem features"], "needs_recovery") {
		t.Fatalf("no journal to recover: %q", sb["Filesystem features"])
	}
	dir := t.TempDir()
	img := filepath.Join(dir, "fs.img")
	undoFile := filepath.Join(dir, "fix.undo")
	for _, c := range []struct {
		name string
		args []string
		dev  string
		src  string
	}{
		{"fy", []string{"-fy"}, img, damaged},
		{"fn", []string{"-fn"}, img, damaged},
		{"p", []string{"-p"}, img, damaged},
		{"N", []string{"-fy", "-N", "root"}, img, damaged},
		{"no-device", []string{"-fy"}, filepath.Join(dir, "missing"), damaged},
		{"journal", []string{"-fy"}, img, journaled},
	} {
		t.Run(c.name, func(t *testing.T) {
			var outs [2]string
			var codes [2]int
			for i := range 2 {
				if err := os.WriteFile(img, mustRead(t, c.src), 0o644); err != nil {
					t.Fatal(err)
				}
				os.Remove(undoFile)
				args := append(append([]string{}, c.args...), "-z", undoFile, c.dev)
				if i == 0 {
					outs[i], codes[i] = runE2fsck(t, args...)
				} else {
					outs[i], codes[i] = runGofsck(args...)
				}
			}
			hint := "Overwriting existing filesystem; this can be undone using the command:\n    e2undo " + undoFile + " " + c.dev + "\n\n"
			if !strings.HasPrefix(normalise(outs[1]), strings.TrimRight(hint, "\n")) {
				t.Errorf("gofsck does not start with the hint:\n%s", outs[1])
			}
			if c.src == journaled && strings.Count(outs[1], hint) != 2 {
				t.Errorf("the hint is not printed again after the journal recovery:\n%s", outs[1])
			}
			if normalise(outs[0]) != normalise(outs[1]) || codes[0] != codes[1] {
				t.Errorf("e2fsck (exit %d):\n%s\ngofsck (exit %d):\n%s", codes[0], outs[0], codes[1], outs[1])
			}
		})
	}
}

// TestUndoFileOfCleanRun: a writable run that writes nothing (-p on a
// clean filesystem) still leaves an undo file, as e2fsck does, so that
// the e2undo command it printed works: e2undo and gofsck undo accept it
// and leave the image as it was.
func TestUndoFileOfCleanRun(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4"})
	before := mustRead(t, img)
	for _, prog := range []string{"e2fsck", "gofsck"} {
		undoFile := filepath.Join(t.TempDir(), prog+".undo")
		var out string
		var code int
		if prog == "e2fsck" {
			out, code = runE2fsck(t, "-p", "-z", undoFile, img)
		} else {
			out, code = runGofsck("-p", "-z", undoFile, img)
		}
		if code != 0 {
			t.Fatalf("%s -p -z: exit %d\n%s", prog, code, out)
		}
		if eout, eerr, ecode := runUndoTool(t, nil, "e2undo", undoFile, img); ecode != 0 {
			t.Errorf("e2undo of %s's undo file: exit %d\n%s%s", prog, ecode, eout, eerr)
		}
		if gout, gerr, gcode := runUndoCmd(undoFile, img); gcode != 0 {
			t.Errorf("gofsck undo of %s's undo file: exit %d\n%s%s", prog, gcode, gout, gerr)
		}
		if !bytes.Equal(mustRead(t, img), before) {
			t.Fatalf("%s: the image changed", prog)
		}
	}
}
