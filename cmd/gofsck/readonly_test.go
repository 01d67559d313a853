package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// TestReadOnlyDeviceMatchesE2fsck: a repair of a device that cannot be
// written is refused at open, as e2fsck refuses it, before any fix is
// announced: a read-only loop device (libext2fs checks BLKROGET and
// returns EPERM) and an immutable image file (open(O_RDWR) fails with
// EPERM). Both say "Operation not permitted" and exit 8; -fn checks.
func TestReadOnlyDeviceMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	if os.Geteuid() != 0 {
		if testfs.InCI() {
			t.Fatal("needs root for losetup and chattr")
		}
		t.Skip("needs root for losetup and chattr")
	}
	for _, tool := range []string{"losetup", "chattr"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s (util-linux, e2fsprogs): %v", tool, err)
		}
	}
	img := cleanImage(t)
	out, err := exec.Command("losetup", "-r", "-f", "--show", img).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup -r: %v\n%s", err, out)
	}
	loop := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "-d", loop).Run() })

	imm := cleanImage(t)
	if out, err := exec.Command("chattr", "+i", imm).CombinedOutput(); err != nil {
		t.Fatalf("chattr +i %s: %v\n%s", imm, err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", imm).Run() })

	for _, c := range []struct {
		dev  string
		args []string
		exit int
	}{
		{loop, []string{"-fy"}, 8},
		{loop, []string{"-p"}, 8},
		{loop, []string{"-f", "-p"}, 8},
		{loop, []string{"-fn"}, 0},
		{imm, []string{"-fy"}, 8},
		{imm, []string{"-p"}, 8},
		{imm, []string{"-fn"}, 0},
	} {
		args := append(c.args, c.dev)
		gout, gcode := runGofsck(args...)
		eout, ecode := runE2fsck(t, args...)
		if gcode != c.exit || ecode != c.exit {
			t.Errorf("%v: exit gofsck %d, e2fsck %d, want %d", args, gcode, ecode, c.exit)
		}
		if g, e := normalise(gout), normalise(eout); g != e {
			t.Errorf("%v: output differs\ngofsck:\n%s\ne2fsck:\n%s", args, g, e)
		}
		if c.exit == 8 && !strings.Contains(gout, "Operation not permitted while trying to open "+c.dev) {
			t.Errorf("%v: %s", args, gout)
		}
	}
}
