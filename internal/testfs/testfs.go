// Package testfs builds, corrupts and checks ext2/3/4 images for tests.
//
// It drives the installed e2fsprogs (mke2fs, debugfs, e2fsck) as the image
// factory and as the oracle, and builds and runs the gofsck binary. It is
// imported only from _test.go files; every helper takes a testing.TB and
// fails the test on operational errors instead of returning them.
//
// Reproducibility: every tool runs with a private mke2fs.conf (MKE2FS_CONFIG),
// an empty e2fsck.conf (E2FSCK_CONFIG), E2FSPROGS_FAKE_TIME and TZ=UTC, and
// MkImage passes a fixed UUID and hash seed, so the same Spec gives the same
// image on every machine with the same e2fsprogs version.
//
// Tools missing: RequireE2fsprogs skips the test, except when the CI
// environment variable is set, where it installs e2fsprogs with apt-get or
// fails. Tests built on this package never skip silently in CI.
package testfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// FakeTime is the clock (seconds since the epoch, 2020-09-13) mke2fs and
// debugfs see through E2FSPROGS_FAKE_TIME. It lies in the past so that no
// checker complains about times in the future.
const FakeTime = 1600000000

// UUID is the fixed file system UUID (and directory hash seed) of every image
// MkImage builds.
const UUID = "6f1c2b4e-3a5d-4e7f-9a1b-2c3d4e5f6a7b"

// DefaultTimeout bounds the CPU time of every run of e2fsck, gofsck or
// another e2fsprogs tool (see RunLimited); the wall-clock backstop is
// WallBackstop(DefaultTimeout).
const DefaultTimeout = 60 * time.Second

// mke2fsConf pins the defaults that /etc/mke2fs.conf would otherwise supply,
// so that CI images (whatever the distribution's file says) equal local ones.
const mke2fsConf = `[defaults]
	base_features = sparse_super,large_file,filetype,resize_inode,dir_index,ext_attr
	default_mntopts = acl,user_xattr
	enable_periodic_fsck = 0
	blocksize = 4096
	inode_size = 256
	inode_ratio = 16384

[fs_types]
	ext3 = {
		features = has_journal
	}
	ext4 = {
		features = has_journal,extent,huge_file,flex_bg,metadata_csum,64bit,dir_nlink,extra_isize
	}
	small = {
		blocksize = 1024
		inode_ratio = 4096
	}
	floppy = {
		blocksize = 1024
		inode_ratio = 8192
	}
	big = {
		inode_ratio = 32768
	}
	huge = {
		inode_ratio = 65536
	}
	news = {
		inode_ratio = 4096
	}
	largefile = {
		inode_ratio = 1048576
		blocksize = -1
	}
	largefile4 = {
		inode_ratio = 4194304
		blocksize = -1
	}
	hurd = {
	     blocksize = 4096
	     inode_size = 128
	     warn_y2038_dates = 0
	}
`

var (
	toolsOnce sync.Once
	toolsErr  error
	toolPath  map[string]string // set once by toolsOnce

	envOnce sync.Once
	envDir  string // holds mke2fs.conf and e2fsck.conf; set once by envOnce
	envErr  error
)

// e2fsprogsTools are the programs RequireE2fsprogs insists on.
var e2fsprogsTools = []string{"mke2fs", "debugfs", "e2fsck"}

// InCI reports whether the tests run under continuous integration, where
// nothing may be skipped.
func InCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "0" && v != "false"
}

func lookTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("testfs: %s not found in PATH or sbin directories", name)
}

func findTools() (map[string]string, error) {
	m := make(map[string]string)
	var missing []string
	for _, n := range e2fsprogsTools {
		p, err := lookTool(n)
		if err != nil {
			missing = append(missing, n)
			continue
		}
		m[n] = p
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("testfs: e2fsprogs tools missing: %s", strings.Join(missing, ", "))
	}
	return m, nil
}

func aptInstall() ([]byte, error) {
	var out bytes.Buffer
	for _, args := range [][]string{
		{"apt-get", "update"},
		{"apt-get", "install", "-y", "e2fsprogs"},
	} {
		if os.Geteuid() != 0 {
			if _, err := exec.LookPath("sudo"); err == nil {
				args = append([]string{"sudo", "-n"}, args...)
			}
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return out.Bytes(), fmt.Errorf("%s: %w", strings.Join(args, " "), err)
		}
	}
	return out.Bytes(), nil
}

// RequireE2fsprogs makes sure mke2fs, debugfs and e2fsck are installed.
// Outside CI it skips the test when they are not; in CI (env CI set) it runs
// apt-get update and apt-get install -y e2fsprogs and fails the test when
// the tools are still missing.
func RequireE2fsprogs(t testing.TB) {
	t.Helper()
	toolsOnce.Do(func() {
		toolPath, toolsErr = findTools()
		if toolsErr != nil && InCI() {
			out, err := aptInstall()
			toolPath, toolsErr = findTools()
			if toolsErr != nil {
				toolsErr = fmt.Errorf("%w (apt-get install failed: %v)\n%s", toolsErr, err, out)
			}
		}
	})
	if toolsErr == nil {
		return
	}
	if InCI() {
		t.Fatalf("CI is set, so not skipping: %v", toolsErr)
	}
	t.Skipf("skipping: %v (install e2fsprogs, or set CI=1 to install it and fail instead of skipping)", toolsErr)
}

// tool returns the absolute path of an e2fsprogs program.
func tool(t testing.TB, name string) string {
	t.Helper()
	RequireE2fsprogs(t)
	if p, ok := toolPath[name]; ok {
		return p
	}
	p, err := lookTool(name)
	if err != nil {
		if InCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return p
}

// Env is the environment every tool (and gofsck) runs with.
func Env(t testing.TB) []string {
	t.Helper()
	envOnce.Do(func() {
		envDir, envErr = os.MkdirTemp("", "testfs-env-")
		if envErr != nil {
			return
		}
		envErr = os.WriteFile(filepath.Join(envDir, "mke2fs.conf"), []byte(mke2fsConf), 0o644)
		if envErr == nil {
			envErr = os.WriteFile(filepath.Join(envDir, "e2fsck.conf"), nil, 0o644)
		}
	})
	if envErr != nil {
		t.Fatalf("testfs: environment: %v", envErr)
	}
	env := make([]string, 0, len(os.Environ())+6)
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "MKE2FS_CONFIG", "E2FSCK_CONFIG", "E2FSPROGS_FAKE_TIME", "TZ", "LANG", "LC_ALL",
			"MKE2FS_DEVICE_SECTSIZE", "MKE2FS_DEVICE_PHYS_SECTSIZE", "MKE2FS_SYNC", "MKE2FS_FIRST_META_BG",
			"E2FSPROGS_LIBMAGIC_SUPPRESS", "DEBUGFS_PAGER", "PAGER", "EXT2FS_NO_MTAB_OK":
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"MKE2FS_CONFIG="+filepath.Join(envDir, "mke2fs.conf"),
		"E2FSCK_CONFIG="+filepath.Join(envDir, "e2fsck.conf"),
		fmt.Sprintf("E2FSPROGS_FAKE_TIME=%d", FakeTime),
		"E2FSPROGS_LIBMAGIC_SUPPRESS=1",
		"DEBUGFS_PAGER=__none__",
		"EXT2FS_NO_MTAB_OK=1",
		"TZ=UTC", "LC_ALL=C",
	)
}

// checkerEnv is Env without the fake clock: checkers see the real time, as
// they would in production, and FakeTime lies in the past.
func checkerEnv(t testing.TB) []string {
	env := Env(t)
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "E2FSPROGS_FAKE_TIME=") {
			out = append(out, kv)
		}
	}
	return out
}

// runResult is the outcome of one program run.
type runResult struct {
	out      string // stdout and stderr, interleaved as written
	exit     int    // exit status; TimeoutExit when killed by the timeout
	timedOut bool
}

// TimeoutExit is the exit status reported for a run that the timeout killed
// (the value timeout(1) uses, and VERDICTS.tsv's marker for non-termination).
const TimeoutExit = 124

// run executes prog with args and env, bounded to timeout of CPU time
// (RunLimited: a loaded machine does not shorten it). It fails the test
// only when the program cannot be started at all.
func run(t testing.TB, timeout time.Duration, env []string, prog string, args ...string) runResult {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	timedOut, err := RunLimited(cmd, timeout)
	res := runResult{out: buf.String()}
	var ee *exec.ExitError
	switch {
	case timedOut:
		res.exit, res.timedOut = TimeoutExit, true
		res.out += fmt.Sprintf("\n*** testfs: killed after %v of CPU time (or %v of wall-clock time)\n", timeout, WallBackstop(timeout))
	case err == nil:
		res.exit = 0
	case errors.As(err, &ee):
		res.exit = ee.ExitCode()
		if res.exit < 0 { // killed by a signal
			res.exit = 128 + 9
			res.out += fmt.Sprintf("\n*** testfs: %v\n", err)
		}
	default:
		t.Fatalf("testfs: running %s %s: %v", prog, strings.Join(args, " "), err)
	}
	return res
}

// mustRun runs an e2fsprogs tool and fails the test unless its exit status is
// one of ok (default: 0).
func mustRun(t testing.TB, name string, ok []int, args ...string) string {
	t.Helper()
	res := run(t, DefaultTimeout, Env(t), tool(t, name), args...)
	if len(ok) == 0 {
		ok = []int{0}
	}
	for _, e := range ok {
		if res.exit == e {
			return res.out
		}
	}
	t.Fatalf("testfs: %s %s: exit %d\n%s", name, strings.Join(args, " "), res.exit, res.out)
	return ""
}

// superblockStamps are the (offset, length) of the superblock fields each
// program stamps with its own clock or counters when it writes a
// superblock: s_wtime, s_lastcheck, s_kbytes_written, the _hi bytes of
// the times (s_wtime_hi, s_mtime_hi, s_mkfs_time_hi, s_lastcheck_hi) and
// s_checksum over them.
var superblockStamps = [][2]int{{0x30, 4}, {0x40, 4}, {0x178, 8}, {0x274, 4}, {0x3FC, 4}}

// MaskSuperblockStamps zeroes the self-stamped fields of the superblock
// that starts at sb[0], so that superblocks (primary or backup) written by
// two programs, or in two different seconds, compare equal.
func MaskSuperblockStamps(sb []byte) {
	for _, r := range superblockStamps {
		clear(sb[r[0] : r[0]+r[1]])
	}
}
