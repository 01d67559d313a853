package testfs

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Prebuilt images: built once by the tools, stored compressed in the
// package's testdata, rebuilt and compared in the long tier.
//
// Some images take a long debugfs script to make (thousands of names
// interleaved with data blocks, so that a directory's extent tree grows
// deep). Every tool that builds them runs with a fixed clock and UUID, so
// the same recipe gives the same bytes: the default tier decompresses the
// stored copy; the long tier builds the image again and fails if the
// bytes differ (the recipe changed, or e2fsprogs builds another image:
// regenerate). UpdatePrebuiltEnv=1 rewrites the stored copies.

// UpdatePrebuiltEnv names the environment variable that, set to 1, makes
// Prebuilt build every image it is asked for and store it.
const UpdatePrebuiltEnv = "GOFSCK_UPDATE_PREBUILT"

// prebuiltDir is where Prebuilt keeps its images, relative to the test's
// package directory.
const prebuiltDir = "testdata/prebuilt"

// Prebuilt returns a fresh copy (in t.TempDir()) of the image that build
// makes from recipe, named name: decompressed from
// testdata/prebuilt/NAME.img.gz when that was stored for the same recipe,
// else built. recipe is everything the build depends on (the Spec and
// the commands, as text): the stored copy records its digest, and a copy
// stored for another recipe is not used (in CI, that fails the test: a
// recipe changed without its image). In the long tier the image is built
// whatever is stored and must equal the stored bytes.
func Prebuilt(t testing.TB, name, recipe string, build func(t testing.TB) string) string {
	t.Helper()
	return prebuilt(t, name, recipe, build, sameBytes)
}

// PrebuiltLayout is Prebuilt for an image that the tools cannot build
// twice to the same bytes (mke2fs -d copies each file's ctime, which no
// one can set): in the long tier the stored copy and the new build must
// have the same layout, dumpe2fs's whole report (every group's
// descriptors, free counts and bitmaps) but the superblock's checksum,
// rather than the same bytes.
func PrebuiltLayout(t testing.TB, name, recipe string, build func(t testing.TB) string) string {
	t.Helper()
	return prebuilt(t, name, recipe, build, sameLayout)
}

func prebuilt(t testing.TB, name, recipe string, build func(t testing.TB) string, same func(testing.TB, string, string) bool) string {
	t.Helper()
	sum := sha256.Sum256([]byte(recipe))
	digest := hex.EncodeToString(sum[:8])
	gz := filepath.Join(prebuiltDir, name+".img.gz")
	stamp := filepath.Join(prebuiltDir, name+".recipe")
	stored, _ := os.ReadFile(stamp)
	fresh := strings.TrimSpace(string(stored)) == digest && fileExists(gz)

	if os.Getenv(UpdatePrebuiltEnv) == "1" {
		img := build(t)
		storeGzip(t, img, gz)
		if err := os.WriteFile(stamp, []byte(digest+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("stored %s (recipe %s)", gz, digest)
		return img
	}
	if !fresh {
		msg := fmt.Sprintf("%s is missing or was stored for another recipe (want %s): regenerate with %s=1 go test -run '%s'",
			gz, digest, UpdatePrebuiltEnv, t.Name())
		if InCI() {
			t.Error(msg)
		} else {
			t.Log(msg)
		}
		return build(t)
	}
	img := filepath.Join(t.TempDir(), name+".img")
	Decompress(t, gz, img)
	if Long() {
		if !same(t, build(t), img) {
			t.Errorf("%s differs from the image its recipe builds now: regenerate with %s=1 go test -run '%s'",
				gz, UpdatePrebuiltEnv, t.Name())
		}
	}
	return img
}

// sameBytes reports whether images a and b hold the same bytes.
func sameBytes(t testing.TB, a, b string) bool {
	t.Helper()
	da, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(da, db)
}

// sameLayout reports whether dumpe2fs says the same of images a and b,
// but for the superblock's checksum.
func sameLayout(t testing.TB, a, b string) bool {
	t.Helper()
	dump := func(img string) string {
		res := run(t, DefaultTimeout, Env(t), filepath.Join(filepath.Dir(tool(t, "mke2fs")), "dumpe2fs"), img)
		if res.exit != 0 {
			t.Fatalf("testfs: dumpe2fs %s: exit %d\n%s", img, res.exit, res.out)
		}
		var keep []string
		for _, l := range strings.Split(res.out, "\n") {
			if !strings.HasPrefix(l, "Checksum:") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	return dump(a) == dump(b)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// storeGzip writes src, compressed, to dst.
func storeGzip(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(out, gzip.BestCompression)
	zw.Header.Name = filepath.Base(src) // no ModTime: the same image gives the same bytes
	if _, err := io.Copy(zw, in); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
