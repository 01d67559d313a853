package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"gofsck/internal/testfs"
)

// mountedFault is the preen-safe damage of the mounted-filesystem tests:
// a wrong link count (pass 4 fixes it when preening) and a superblock not
// marked clean (so that -p checks without -f).
func mountedFault(t *testing.T, img, file string) {
	t.Helper()
	testfs.Debugfs(t, img, "sif "+file+" links_count 3", "ssv state 0")
}

// TestMountedPretendMatchesE2fsck uses the library's test switches
// EXT2FS_PRETEND_RO_MOUNT, EXT2FS_PRETEND_RW_MOUNT and
// EXT2FS_PRETEND_ROOTFS, which make ext2fs_check_if_mounted answer without
// a mount, to compare check_mount's decisions with e2fsck's in every mode:
// same transcript, same exit code, same image afterwards. With ROOTFS the
// library answers "root" but not "mounted", so a repair goes on and ends
// with REBOOT SYSTEM and exit 3.
func TestMountedPretendMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	base := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 8 << 20, Populate: populate})
	mountedFault(t, base, "/a/one")
	for _, env := range [][]string{
		{"EXT2FS_PRETEND_RO_MOUNT"},
		{"EXT2FS_PRETEND_RW_MOUNT"},
		{"EXT2FS_PRETEND_RO_MOUNT", "EXT2FS_PRETEND_ROOTFS"},
		{"EXT2FS_PRETEND_RW_MOUNT", "EXT2FS_PRETEND_ROOTFS"},
	} {
		t.Run(strings.Join(env, "+"), func(t *testing.T) {
			for _, k := range env {
				t.Setenv(k, "1")
			}
			for _, args := range [][]string{{"-p"}, {"-fp"}, {"-n"}, {"-fn"}, {"-y"}, {"-fy"}, {"-f"}} {
				gimg, eimg := testfs.CopyImage(t, base), testfs.CopyImage(t, base)
				gout, gcode := runGofsck(append(args, gimg)...)
				eout, ecode := runE2fsck(t, append(args, eimg)...)
				if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
					t.Errorf("%v: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", args, gcode, ecode, e, g)
					continue
				}
				compareImages(t, strings.Join(args, " "), gimg, eimg)
			}
		})
	}
}

// TestMountedPromptMatchesE2fsck: on a terminal, a mounted filesystem
// that is not busy (EXT2FS_PRETEND_RW_MOUNT here; an image file whose
// loop device is mounted in practice) is warned about with bells and a
// question, as e2fsck does: "n" ends with "check aborted." and exit 0,
// "y" checks, and "a" answers yes to the check's questions too.
func TestMountedPromptMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	base := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 8 << 20, Populate: populate})
	testfs.Debugfs(t, base, "sif /a/one links_count 5", "sif /a/two size 1")
	t.Setenv("EXT2FS_PRETEND_RW_MOUNT", "1") // after mke2fs, which refuses too
	for _, answers := range []string{"n", "yyy", "ynn", "a"} {
		eout, _ := interactiveAgree(t, base, answers)
		if !strings.Contains(eout, "Do you really want to continue") {
			t.Errorf("%q: e2fsck did not ask:\n%s", answers, eout)
		}
	}
}

// mountCase is one run of a checker on a filesystem mounted in a private
// mount namespace.
type mountCase struct {
	name   string
	opts   string   // mount options: "ro" or "rw"; "" for a device not mounted but held open with O_EXCL
	chroot bool     // the mount is the root of a chroot the checker runs in
	file   bool     // the checker is given the image file, not the loop device
	args   []string // the checker's options, before the device
}

// TestMountedMatchesE2fsck checks mounted filesystems as systemd does at
// boot and as an administrator might by mistake, with gofsck and e2fsck
// side by side, each on its own copy of the image attached to a loop
// device and mounted inside `unshare -m` (nothing leaks to the host):
//   - the read-only root: a chroot into the mounted filesystem, holding a
//     static gofsck and e2fsck with its libraries, proc and devtmpfs;
//     -p (systemd-fsck-root's fsck -a) repairs it without opening the
//     device exclusively, prints REBOOT SYSTEM and exits 3;
//   - a read-write root, and read-write mounts seen from outside, by
//     device and by image file, are refused ("is mounted." and "Cannot
//     continue, aborting.", exit 8) except with -n, which warns and
//     checks;
//   - a read-only mount that is not the root is refused without -f and
//     repaired with it;
//   - a device no one mounted but another program holds open with O_EXCL
//     is "in use": refused, or checked with a warning with -n.
//
// Same stdout, stderr and exit code (the program's name, the loop device
// and the image path aside), and after the unmount the same verdict from
// e2fsck -fn and, for the read-only mounts, the same image.
func TestMountedMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	if os.Geteuid() != 0 {
		if testfs.InCI() {
			t.Fatal("needs root for losetup, mount and unshare")
		}
		t.Skip("needs root for losetup, mount and unshare")
	}
	for _, tool := range []string{"losetup", "unshare", "mount", "chroot"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
	}
	base := chrootImage(t)
	for _, c := range []mountCase{
		{name: "ro-root-p", opts: "ro", chroot: true, args: []string{"-p"}},
		{name: "ro-root-a", opts: "ro", chroot: true, args: []string{"-a"}},
		{name: "ro-root-n", opts: "ro", chroot: true, args: []string{"-n"}},
		{name: "ro-root-fy", opts: "ro", chroot: true, args: []string{"-fy"}},
		{name: "ro-root-Fp", opts: "ro", chroot: true, args: []string{"-F", "-p"}}, // BLKFLSBUF first
		{name: "rw-root-p", opts: "rw", chroot: true, args: []string{"-p"}},
		{name: "rw-root-n", opts: "rw", chroot: true, args: []string{"-n"}},
		{name: "rw-p", opts: "rw", args: []string{"-p"}},
		{name: "rw-y", opts: "rw", args: []string{"-fy"}},
		{name: "rw-n", opts: "rw", args: []string{"-n"}},
		{name: "rw-f-interactive", opts: "rw", args: []string{"-f"}},
		{name: "rw-file-p", opts: "rw", file: true, args: []string{"-p"}},
		{name: "rw-file-n", opts: "rw", file: true, args: []string{"-n"}},
		{name: "ro-p", opts: "ro", args: []string{"-p"}},
		{name: "ro-fp", opts: "ro", args: []string{"-fp"}},
		{name: "busy-p", args: []string{"-p"}},
		{name: "busy-n", args: []string{"-n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			gimg, eimg := testfs.CopyImage(t, base), testfs.CopyImage(t, base)
			gout, gerr, gcode := runMounted(t, c, gimg, "gofsck")
			eout, eerr, ecode := runMounted(t, c, eimg, "e2fsck")
			if gout != eout || gerr != eerr || gcode != ecode {
				t.Errorf("exit %d vs e2fsck %d; output differs:\n--- e2fsck stdout\n%s--- gofsck stdout\n%s--- e2fsck stderr\n%s--- gofsck stderr\n%s",
					gcode, ecode, eout, gout, eerr, gerr)
			}
			if c.name == "ro-root-p" && (ecode != 3 || !strings.Contains(eout, "***** REBOOT SYSTEM *****")) {
				t.Errorf("e2fsck did not repair the read-only root as expected (exit %d):\n%s", ecode, eout)
			}
			if c.opts != "rw" {
				// A read-write mount writes to the image itself (times,
				// and the file the root's check creates and removes).
				compareImages(t, c.name, gimg, eimg)
			}
			gv, gc := testfs.E2fsck(t, gimg, "-fn")
			ev, ec := testfs.E2fsck(t, eimg, "-fn")
			if gc != ec {
				t.Errorf("e2fsck -fn after the run exits %d, %d after e2fsck's:\n%s\n---\n%s", gc, ec, gv, ev)
			}
		})
	}
}

// chrootImage builds the image of the chroot tests: a root filesystem
// with a static gofsck and e2fsck (with the libraries it loads) in /sbin,
// empty /proc and /dev to mount on, and mountedFault on /sbin/gofsck.
func chrootImage(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	static := filepath.Join(dir, "gofsck")
	root, err := testfs.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", static, "gofsck/cmd/gofsck")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("static build: %v\n%s", err, out)
	}
	e2fsck := e2fsckPath(t)
	files := map[string]string{"sbin/gofsck": static, "sbin/e2fsck": e2fsck}
	for _, lib := range sharedLibraries(t, e2fsck) {
		files[strings.TrimPrefix(lib, "/")] = lib
	}
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 64 << 20, Populate: func(tr *testfs.Tree) {
		tr.Dir("proc")
		tr.Dir("dev")
		for dst, src := range files {
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			tr.FileData(dst, data)
			if err := os.Chmod(filepath.Join(tr.Root, dst), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}})
	mountedFault(t, img, "/sbin/gofsck")
	return img
}

func e2fsckPath(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("e2fsck"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/e2fsck", "/sbin/e2fsck"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatal("no e2fsck")
	return ""
}

var lddPath = regexp.MustCompile(`(?m)(?:=>\s*|^\s*)(/\S+)\s+\(0x`)

// sharedLibraries lists the absolute paths of the libraries prog loads
// (ldd), the dynamic loader included; none for a static program.
func sharedLibraries(t *testing.T, prog string) []string {
	t.Helper()
	out, err := exec.Command("ldd", prog).CombinedOutput()
	if err != nil {
		if bytes.Contains(out, []byte("not a dynamic executable")) {
			return nil
		}
		t.Fatalf("ldd %s: %v\n%s", prog, err, out)
	}
	var libs []string
	for _, m := range lddPath.FindAllSubmatch(out, -1) {
		libs = append(libs, string(m[1]))
	}
	return libs
}

// mountScript runs in a new mount namespace: it mounts the loop device
// ($2) with options $1 on $3, and runs the checker (the rest) on the
// device, or on the image file $5 when $4 is "file"; with $4 "chroot" the
// mount becomes the root of a chroot with /proc and /dev. A failed setup
// exits 125.
const mountScript = `
opts=$1 loop=$2 mnt=$3 how=$4 img=$5
shift 5
fail() { echo "setup: $*" >&2; exit 125; }
mount --make-rprivate / || fail "make-rprivate"
mount -o "$opts" "$loop" "$mnt" || fail "mount $loop"
case $how in
chroot)
	mount -t proc proc "$mnt/proc" || fail "mount proc"
	mount -t devtmpfs devtmpfs "$mnt/dev" || fail "mount devtmpfs"
	exec chroot "$mnt" "$@" "$loop" ;;
file)
	exec "$@" "$img" ;;
*)
	exec "$@" "$loop" ;;
esac
`

// runMounted attaches img to a loop device, mounts it as c says in a new
// mount namespace and runs prog ("gofsck" or "e2fsck") on it there. It
// returns stdout and stderr with the banner left out and the program's
// name, the loop device and the image path made the same for both
// programs, and the exit status.
func runMounted(t *testing.T, c mountCase, img, prog string) (stdout, stderr string, code int) {
	t.Helper()
	out, err := exec.Command("losetup", "-f", "--show", img).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup: %v\n%s", err, out)
	}
	loop := strings.TrimSpace(string(out))
	defer func() {
		if out, err := exec.Command("losetup", "-d", loop).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v\n%s", loop, err, out)
		}
	}()
	how, path := "device", ""
	env := testfs.Env(t)
	switch {
	case c.chroot:
		how, path = "chroot", "/sbin/"+prog
		env = []string{"PATH=/sbin:/bin", "LC_ALL=C", "TZ=UTC"}
	case prog == "gofsck":
		path = testfs.GofsckPath(t)
	default:
		path = e2fsckPath(t)
	}
	if c.file {
		how = "file"
	}
	cmd := exec.Command("unshare", append([]string{"-m", "sh", "-c", mountScript, "sh", c.opts, loop, t.TempDir(), how, img, path}, c.args...)...)
	if c.opts == "" {
		fd, err := syscall.Open(loop, syscall.O_RDONLY|syscall.O_EXCL, 0)
		if err != nil {
			t.Fatalf("holding %s: %v", loop, err)
		}
		defer syscall.Close(fd)
		cmd = exec.Command(path, append(c.args, loop)...)
	}
	cmd.Env = withoutFakeTime(env)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("unshare: %v", err)
	}
	if code == 125 {
		t.Fatalf("mount namespace setup failed:\n%s", e.String())
	}
	clean := func(s string) string {
		s = strings.ReplaceAll(s, loop, "LOOP")
		s = strings.ReplaceAll(s, img, "IMG")
		return normProg(norm(s, img))
	}
	return clean(o.String()), clean(e.String()), code
}

// withoutFakeTime drops E2FSPROGS_FAKE_TIME: checkers run on the real
// clock, as in production.
func withoutFakeTime(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "E2FSPROGS_FAKE_TIME=") {
			out = append(out, kv)
		}
	}
	return out
}
