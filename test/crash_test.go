package test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gofsck/internal/testfs"
)

// TestCrashImagesMatchE2fsck checks gofsck against e2fsck on filesystems
// the kernel left as a power cut leaves them (testdata/crash/README: the
// crash workload of cmd/mkworkload, shut down without log flush, over
// ext4, ext2, no journal, 1 KiB blocks, fast commits, data=journal,
// bigalloc, orphan_file and ea_inode). What boot runs, -p, and -fy must
// give e2fsck's exit code, transcript and repaired image (but the
// superblock stamps testfs.MaskSuperblockStamps masks); -n must give the
// same verdict and transcript and leave the image as it was. Both
// programs run with the clock stopped at the same second
// (testfs.ClockAt).
func TestCrashImagesMatchE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	testfs.GofsckPath(t)
	images, err := filepath.Glob(filepath.Join("testdata", "crash", "*.img.gz"))
	if err != nil || len(images) < 9 {
		t.Fatalf("crash images: %v (%d found, want the 9 of testdata/crash/README)", err, len(images))
	}
	for _, gz := range images {
		name := strings.TrimSuffix(filepath.Base(gz), ".img.gz")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			orig := filepath.Join(t.TempDir(), name+".img")
			testfs.Decompress(t, gz, orig)
			for _, mode := range []string{"-fy", "-p", "-fn"} {
				if why := crashPair(t, orig, mode); why != "" {
					t.Errorf("%s: %s", mode, why)
				}
			}
		})
	}
}

// crashPair runs gofsck and e2fsck with mode on copies of img and returns
// how they disagree ("" when they do not).
func crashPair(t *testing.T, img, mode string) string {
	gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
	now := time.Now().Unix()
	done := make(chan struct{})
	var eout string
	var eexit int
	go func() {
		defer close(done)
		eout, eexit = testfs.E2fsckInPlaceAt(t, now, eimg, mode)
	}()
	gout, gexit := testfs.GofsckAt(t, now, gimg, mode)
	<-done
	g, e := transcript(gout, gimg), transcript(eout, eimg)
	if gexit != eexit || g != e {
		return fmt.Sprintf("exit %d, e2fsck %d; %s\n--- e2fsck:\n%s--- gofsck:\n%s", gexit, eexit, firstDiffLine(e, g), e, g)
	}
	if strings.Contains(mode, "n") {
		a, err := os.ReadFile(img)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(gimg)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			return "-n changed the image"
		}
		return ""
	}
	if off, ok := sameRepairedBytes(t, gimg, eimg); !ok {
		return fmt.Sprintf("repaired images differ first at byte %d (exit %d)", off, gexit)
	}
	return ""
}
