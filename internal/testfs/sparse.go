package testfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// SparseDir returns a directory on a tmpfs of the given size mounted for
// the test (unmounted at its end), where files of many TiB can be made
// sparse: ext4 caps a file at 16 TiB and a copy there would write it
// whole. It needs root for the mount: without it the test is skipped, or
// fails in CI.
func SparseDir(t testing.TB, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if InCI() {
			t.Fatal("testfs: SparseDir needs root to mount a tmpfs")
		}
		t.Skip("testfs: SparseDir needs root to mount a tmpfs")
	}
	dir := filepath.Join(t.TempDir(), "sparse")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("testfs: mount tmpfs: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("testfs: umount %s: %v\n%s", dir, err, out)
		}
	})
	return dir
}

// CopySparse copies a sparse image next to itself (cp --sparse=always,
// which skips the holes without reading them) and returns the copy's
// path.
func CopySparse(t testing.TB, img, name string) string {
	t.Helper()
	dst := filepath.Join(filepath.Dir(img), name)
	if out, err := exec.Command("cp", "--sparse=always", img, dst).CombinedOutput(); err != nil {
		t.Fatalf("testfs: cp --sparse=always: %v\n%s", err, out)
	}
	t.Cleanup(func() { os.Remove(dst) })
	return dst
}
