package testfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// KernelImage makes an image with mke2fs (size bytes, extra mkfsArgs such as
// "-t", "ext4"), loop-mounts it, lets populate write into the mount point
// through the kernel's ext4 driver, unmounts it and returns the image path.
// It needs root (mount -o loop): without it the test is skipped, or fails
// in CI.
func KernelImage(t testing.TB, size int64, mkfsArgs []string, populate func(mountDir string)) string {
	t.Helper()
	RequireE2fsprogs(t)
	skipOrFail := func(format string, args ...any) {
		t.Helper()
		if InCI() {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	if os.Geteuid() != 0 {
		skipOrFail("testfs: KernelImage needs root for mount -o loop")
	}
	mountPath, err := exec.LookPath("mount")
	if err != nil {
		skipOrFail("testfs: mount not found: %v", err)
	}
	dir := t.TempDir()
	img := filepath.Join(dir, "kernel.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	args := append([]string{"-F", "-q", "-U", UUID, "-E", "hash_seed=" + UUID}, mkfsArgs...)
	args = append(args, img)
	mustRun(t, "mke2fs", nil, args...)

	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mountPath, "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		skipOrFail("testfs: mount -o loop %s: %v\n%s", img, err, out)
	}
	mounted := true
	umount := func() {
		if !mounted {
			return
		}
		out, err := exec.Command("umount", mnt).CombinedOutput()
		if err != nil {
			t.Errorf("testfs: umount %s: %v\n%s", mnt, err, out)
			return
		}
		mounted = false
	}
	t.Cleanup(umount)
	populate(mnt)
	if out, err := exec.Command("sync", "-f", mnt).CombinedOutput(); err != nil && !strings.Contains(string(out), "invalid option") {
		t.Logf("testfs: sync: %v %s", err, out)
	}
	umount()
	return img
}
