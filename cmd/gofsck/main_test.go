package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gofsck/internal/testfs"
)

// runGofsck calls run in process with stdout and stderr interleaved in one
// buffer, as a terminal would show them.
func runGofsck(args ...string) (string, int) {
	var out bytes.Buffer
	code := run(append([]string{"gofsck"}, args...), &out, &out)
	return out.String(), code
}

// checkPair runs gofsck (in process) on gimg and the installed e2fsck
// (testfs.E2fsckInPlace) on eimg with the same args, side by side: on
// small images each program keeps about one CPU busy, so the pair takes
// the time of the slower one.
func checkPair(t *testing.T, gimg, eimg string, args ...string) (gout string, gcode int, eout string, ecode int) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		eout, ecode = testfs.E2fsckInPlace(t, eimg, args...)
	}()
	gout, gcode = runGofsck(append(args, gimg)...)
	<-done
	return gout, gcode, eout, ecode
}

// runE2fsck runs the installed e2fsck as "e2fsck" (so that its messages
// name it like that) with the test environment, bounded in CPU time.
func runE2fsck(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return runE2fsckEnv(t, nil, args...)
}

// runE2fsckEnv is runE2fsck with the variables of env ("NAME=value")
// replacing the test environment's.
func runE2fsckEnv(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	testfs.RequireE2fsprogs(t)
	cmd := exec.Command("e2fsck", args...)
	env = append([]string(nil), env...)
	override := make(map[string]bool)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		override[k] = true
	}
	for _, kv := range testfs.Env(t) {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case override[k], k == "E2FSPROGS_FAKE_TIME":
		case k == "PATH":
			env = append(env, kv+":/usr/sbin:/sbin")
		default:
			env = append(env, kv)
		}
	}
	cmd.Env = env
	if p, err := exec.LookPath("e2fsck"); err != nil || p == "" {
		for _, d := range []string{"/usr/sbin", "/sbin"} {
			if _, err := os.Stat(filepath.Join(d, "e2fsck")); err == nil {
				cmd.Path = filepath.Join(d, "e2fsck")
			}
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	timedOut, err := testfs.RunLimited(cmd, testfs.DefaultTimeout)
	var ee *exec.ExitError
	switch {
	case timedOut:
		t.Fatalf("e2fsck %v did not finish: %v", args, err)
	case err == nil:
		return out.String(), 0
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	}
	t.Fatalf("running e2fsck: %v", err)
	return "", 0
}

// normalise drops version banners and renames e2fsck to gofsck, so that
// the two programs' messages compare line for line.
func normalise(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "e2fsck 1.") || strings.HasPrefix(l, "gofsck "+buildVersion().String()) ||
			strings.HasPrefix(l, "\tUsing EXT2FS Library") {
			continue
		}
		out = append(out, strings.ReplaceAll(l, "e2fsck", "gofsck"))
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n")
}

// cleanImage returns a fresh copy of a small clean ext4 image (see
// internal/check/testdata/mkfuzzimages.sh).
func cleanImage(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "clean.img")
	testfs.Decompress(t, filepath.Join("..", "..", "internal", "check", "testdata", "ext4.img.gz"), p)
	return p
}

// TestBadInputMatchesE2fsck runs both checkers on inputs that never reach
// a check and wants the same messages and exit codes.
func TestBadInputMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	dir := t.TempDir()
	zeros := filepath.Join(dir, "zeros.img")
	if err := os.WriteFile(zeros, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	clean := cleanImage(t)
	truncated := filepath.Join(dir, "truncated.img")
	head := make([]byte, 2048)
	f, err := os.Open(clean)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAt(head, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile(truncated, head, 0o644); err != nil {
		t.Fatal(err)
	}
	// A swap area: both name what the device holds instead.
	swap := filepath.Join(dir, "swap.img")
	if err := os.WriteFile(swap, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkswap", "-L", "spare", swap).CombinedOutput(); err != nil {
		t.Fatalf("mkswap (util-linux): %v\n%s", err, out)
	}
	for _, c := range []struct {
		name string
		args []string
		exit int
	}{
		{"swap area", []string{"-fn", swap}, 8},
		{"missing file", []string{"-fn", filepath.Join(dir, "does-not-exist")}, 8},
		{"directory", []string{"-fn", dir}, 8},
		{"zeros", []string{"-fn", zeros}, 8},
		{"truncated after the superblock", []string{"-fn", truncated}, 8},
		{"bad option", []string{"-Q", "-n", clean}, 16},
		{"no device", []string{"-fn"}, 16},
		{"two devices", []string{"-fn", clean, clean}, 16},
		{"-p and -n", []string{"-pn", clean}, 8},
		{"-n and -y", []string{"-n", "-y", clean}, 8},
		{"-a and -n", []string{"-a", "-n", clean}, 8},
		{"clean without -f", []string{"-n", clean}, 0},
		{"clean with -fn", []string{"-fn", clean}, 0},
		// -F flushes the device's buffers first: an image file takes no
		// BLKFLSBUF, which ends the run before the banner.
		{"-F on an image file", []string{"-F", "-fn", clean}, 8},
		{"-F on a missing file", []string{"-F", "-fn", filepath.Join(dir, "does-not-exist")}, 8},
		// Character devices are read as files, as libext2fs reads them:
		// a short read, and a bad magic number with the backups tried.
		{"/dev/null", []string{"-fn", "/dev/null"}, 8},
		{"/dev/null -fy", []string{"-fy", "/dev/null"}, 8},
		{"/dev/zero", []string{"-fn", "/dev/zero"}, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			gout, gcode := runGofsck(c.args...)
			eout, ecode := runE2fsck(t, c.args...)
			if gcode != c.exit || ecode != c.exit {
				t.Errorf("exit: gofsck %d, e2fsck %d, want %d", gcode, ecode, c.exit)
			}
			if g, e := normalise(gout), normalise(eout); g != e {
				t.Errorf("output differs\ngofsck:\n%s\ne2fsck:\n%s", g, e)
			}
		})
	}
}

// TestSummaryLineMatchesE2fsck compares the last line of a forced check
// of a clean image with e2fsck's.
func TestSummaryLineMatchesE2fsck(t *testing.T) {
	img := cleanImage(t)
	gout, gcode := runGofsck("-fn", img)
	eout, ecode := runE2fsck(t, "-fn", img)
	last := func(s string) string {
		l := strings.Split(strings.TrimSpace(s), "\n")
		return l[len(l)-1]
	}
	if gcode != 0 || ecode != 0 || last(gout) != last(eout) {
		t.Errorf("gofsck exit %d %q, e2fsck exit %d %q", gcode, last(gout), ecode, last(eout))
	}
	if !strings.Contains(last(gout), "172/256 files") {
		t.Errorf("summary %q", last(gout))
	}
}

// TestReadOnlyNeverWrites runs -n (with and without -f) on a clean image
// and on damaged ones and wants the image unchanged, byte for byte.
func TestReadOnlyNeverWrites(t *testing.T) {
	dir := t.TempDir()
	clean := cleanImage(t)
	damaged := filepath.Join(dir, "damaged.img")
	testfs.Decompress(t, filepath.Join("..", "..", "internal", "check", "testdata", "regress", "dir_hole_before_2M_lblk.img.gz"), damaged)
	// Superblock marked not clean and with errors, so that -n without -f
	// runs the whole check too.
	dirty := filepath.Join(dir, "dirty.img")
	testfs.Decompress(t, filepath.Join("..", "..", "internal", "check", "testdata", "ext2.img.gz"), dirty)
	testfs.WriteAt(t, dirty, 1024+0x3A, []byte{2, 0})         // s_state = ERROR_FS
	testfs.WriteAt(t, dirty, 5*1024+11*128, make([]byte, 64)) // inode 12 (/a), table at block 5
	for _, img := range []string{clean, damaged, dirty} {
		for _, args := range [][]string{{"-n"}, {"-fn"}, {"-fnv"}, {"-fn", "-b", "8193"}} {
			before := testfs.FileSHA256(t, img)
			fi, _ := os.Stat(img)
			out, code := runGofsck(append(args, img)...)
			after := testfs.FileSHA256(t, img)
			fi2, _ := os.Stat(img)
			if before != after || !fi.ModTime().Equal(fi2.ModTime()) {
				t.Errorf("%s %v modified the image (exit %d)\n%s", filepath.Base(img), args, code, out)
			}
			if img != clean && args[0] != "-n" && code == 0 {
				t.Errorf("%s %v: exit 0 on a damaged image\n%s", filepath.Base(img), args, out)
			}
		}
	}
}

// TestProgramName: run as fsck.ext4, messages from e2fsck's com_err calls
// name the program as run, those from its fatal_error name the program
// itself (e2fsck there, gofsck here); the version banner comes before the
// terminal check, as in e2fsck's main.
func TestProgramName(t *testing.T) {
	img := cleanImage(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-fn", "-p", img}, "gofsck: Only one of the options -p/-a, -n or -y may be specified.\n"},
		{[]string{"-f", img}, "gofsck " + buildVersion().String() + "\ngofsck: need terminal for interactive repairs\n"},
		{[]string{"-n", "-D", img}, "fsck.ext4: The -n and -D options are incompatible.\n"},
		{[]string{"-fn", "/nonexistent/x"}, "fsck.ext4: No such file or directory while trying to open /nonexistent/x\n"},
	} {
		var out bytes.Buffer
		run(append([]string{"fsck.ext4"}, c.args...), &out, &out)
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("fsck.ext4 %v: %q, want %q in it", c.args, out.String(), c.want)
		}
	}
}

// TestNumericOptions: -b, -B, -I and -P take the numbers e2fsck's sscanf
// and atoi take ("0x2001" is 0, so the primary superblock; a leading
// space or plus sign is fine; -B's garbage is 0), and a -b, -I or -P
// without a number gets e2fsck's message and exit 1.
func TestNumericOptions(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{Size: 16 << 20, BlockSize: 1024})
	for _, args := range [][]string{
		{"-b", "x"}, {"-b", "0x2001"}, {"-b", " 8193"}, {"-b", "+8193"}, {"-b", "8193xyz"},
		{"-B", "abc", "-b", "8193"}, {"-b", "8193", "-B", "1024"},
		{"-I", "x"}, {"-I", "5"}, {"-P", "1z"}, {"-P", "z"},
		// -C: no number is a usage error (exit 1), a leading one is the
		// descriptor (99: not open, exit 8).
		{"-C", "abc"}, {"-C", ""}, {"-C", "-abc"}, {"-C", "-"}, {"-C", "99abc"}, {"-C", " +99"},
	} {
		a := append([]string{"-fn"}, append(args, img)...)
		eout, ecode := runE2fsck(t, a...)
		gout, gcode := runGofsck(a...)
		if ecode != gcode || normalise(eout) != normalise(gout) {
			t.Errorf("%q:\ne2fsck (exit %d):\n%s\ngofsck (exit %d):\n%s", args, ecode, eout, gcode, gout)
		}
	}
}

func TestCNumbers(t *testing.T) {
	for _, c := range []struct {
		in   string
		u64  uint64
		ok   bool
		atoi int32
	}{
		{"8193", 8193, true, 8193}, {" \t+12abc", 12, true, 12}, {"010", 10, true, 10},
		{"0x2001", 0, true, 0}, {"x", 0, false, 0}, {"", 0, false, 0}, {"-1", 1<<64 - 1, true, -1},
		{"99999999999999999999", 1<<64 - 1, true, -1}, {"4294967296", 4294967296, true, 0},
	} {
		if v, ok := scanUint64(c.in); v != c.u64 || ok != c.ok {
			t.Errorf("scanUint64(%q) = %d, %v; want %d, %v", c.in, v, ok, c.u64, c.ok)
		}
		if v := cAtoi(c.in); v != c.atoi {
			t.Errorf("cAtoi(%q) = %d, want %d", c.in, v, c.atoi)
		}
	}
}

// TestTimingOutputIsASCII: -t -t prints only ASCII, as e2fsck's does
// (the read-ahead line spelt microseconds "µs", Go's way, which a log in
// the C locale shows as mojibake).
func TestTimingOutputIsASCII(t *testing.T) {
	img := cleanImage(t)
	eout, _ := runE2fsck(t, "-fn", "-t", "-t", img)
	gout, gcode := runGofsck("-fn", "-t", "-t", img)
	for name, out := range map[string]string{"e2fsck": eout, "gofsck": gout} {
		for i, r := range out {
			if r >= 0x80 || r == '\uFFFD' {
				t.Errorf("%s -t -t: non-ASCII %q at %d in\n%s", name, r, i, out)
				break
			}
		}
	}
	if gcode != 0 || !strings.Contains(gout, "Read-ahead: ") {
		t.Errorf("gofsck -t -t: exit %d\n%s", gcode, gout)
	}
}
