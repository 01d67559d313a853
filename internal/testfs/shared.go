package testfs

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Images built once per test binary.
//
// Several tests of a package often start from the same image; building it
// (mke2fs -d over thousands of files, a long debugfs script) can cost more
// than the checks that follow. Shared builds it once, on first use, and
// hands every caller the same file, which lives until testfs.Main removes
// it after the package's tests. Callers must not write to it: copy it
// (CopyImage) before a repair or a corruption.

var (
	sharedMu     sync.Mutex
	sharedImages = map[string]*sharedImage{} // sharedMu protects sharedImages and sharedDir.
	sharedDir    string
)

type sharedImage struct {
	idx  int // its place in sharedImages, for a file name of its own
	once sync.Once
	path string
	err  string // why the build failed, for the callers after the first
}

// Shared returns the image named key, built by build (with the first
// caller's t, into that test's temp dir) the first time any test of the
// binary asks for it. A failed build fails the first caller as build
// failed it, and every later caller with a message naming that test.
func Shared(t testing.TB, key string, build func(t testing.TB) string) string {
	t.Helper()
	sharedMu.Lock()
	s := sharedImages[key]
	if s == nil {
		s = &sharedImage{idx: len(sharedImages)}
		sharedImages[key] = s
	}
	if sharedDir == "" {
		d, err := os.MkdirTemp("", "testfs-shared-")
		if err != nil {
			sharedMu.Unlock()
			t.Fatalf("testfs: shared image directory: %v", err)
		}
		sharedDir = d
	}
	dir := sharedDir
	sharedMu.Unlock()
	s.once.Do(func() {
		s.err = fmt.Sprintf("building shared image %q failed in %s", key, t.Name())
		img := build(t)
		dst := filepath.Join(dir, fmt.Sprintf("%d-%s", s.idx, filepath.Base(img)))
		if err := os.Rename(img, dst); err != nil {
			// Another filesystem: copy instead.
			copyFile(t, img, dst)
		}
		s.path, s.err = dst, ""
	})
	if s.err != "" {
		t.Fatal(s.err)
	}
	return s.path
}

// removeShared removes the shared images (from Main, after the tests).
func removeShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
}
