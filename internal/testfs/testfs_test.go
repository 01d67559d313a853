package testfs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

const sampleTranscript = `e2fsck 1.47.0 (5-Feb-2023)
Superblock has an invalid journal (inode 8).
Clear? no

Pass 1: Checking inodes, blocks, and sizes
Inode 12 has illegal block(s).  Clear? no

Pass 2: Checking directory structure
Pass 3: Checking directory connectivity
Pass 4: Checking reference counts
Pass 5: Checking group summary information
Block bitmap differences:  -(1234--1240)
Fix? no


test.img: ********** WARNING: Filesystem still has errors **********

test.img: 12/2048 files (0.0% non-contiguous), 1234/8192 blocks
`

func TestParseTranscript(t *testing.T) {
	tr := ParseTranscript(sampleTranscript)
	if got, want := tr.Passes(), []string{"0", "1", "5"}; !slices.Equal(got, want) {
		t.Errorf("Passes() = %v, want %v", got, want)
	}
	if got := tr.FirstPass(); got != "0" {
		t.Errorf("FirstPass() = %q, want 0", got)
	}
	if got, want := tr.Headers, []string{"1", "2", "3", "4", "5"}; !slices.Equal(got, want) {
		t.Errorf("Headers = %v, want %v", got, want)
	}
	if got := tr.Problems["5"]; len(got) != 2 {
		t.Errorf("pass 5 lines = %q, want 2", got)
	}
	clean := "Pass 1: Checking inodes, blocks, and sizes\nPass 2: Checking directory structure\n" +
		"Pass 3: Checking directory connectivity\nPass 4: Checking reference counts\n" +
		"Pass 5: Checking group summary information\nx.img: 11/2048 files (0.0% non-contiguous), 1000/8192 blocks\n"
	if got := ProblemPasses(clean); len(got) != 0 {
		t.Errorf("clean transcript has problems in %v", got)
	}
}

func TestMkImageCorruptAndCheck(t *testing.T) {
	RequireE2fsprogs(t)
	img := MkImage(t, Spec{
		Size:   4 << 20,
		FSType: "ext4",
		Populate: func(tr *Tree) {
			tr.File("a/file", 5000)
			tr.Sparse("a/sparse", 2<<20, 1024, 8192)
			tr.Symlink("a/fast", "file")
			tr.Symlink("a/slow", strings.Repeat("x", 100))
			tr.Hardlink("a/hard", "a/file")
			tr.Fifo("a/fifo")
			tr.Device("a/null", 'c', 1, 3)
			tr.Xattr("a/file", "user.small", "hello")
			tr.XattrSize("a/file", "user.big", 600)
		},
	})
	out, exit := E2fsck(t, img, "-fn")
	if exit != 0 {
		t.Fatalf("fresh image not clean (exit %d):\n%s", exit, out)
	}
	bm := Blocks(t, img, "/a/sparse")
	if len(bm.ETB) == 0 || len(bm.Data) == 0 {
		t.Errorf("sparse file has no extent tree block: %+v", bm.ETB)
	}
	if Blocks(t, img, "/a/file").FileACL == 0 {
		t.Errorf("a/file has no EA block")
	}
	ino := Ino(t, img, "/a/file")
	if ino < 11 {
		t.Errorf("Ino(/a/file) = %d", ino)
	}
	if off := InodeOffset(t, img, "/a/file"); off <= 0 {
		t.Errorf("InodeOffset = %d", off)
	}
	if b := GroupBlock(t, img, 0, "Inode table"); b == 0 {
		t.Errorf("inode table of group 0 at block 0")
	}

	before := FileSHA256(t, img)
	Debugfs(t, img, "sif /a/file links_count 5")
	if FileSHA256(t, img) == before {
		t.Fatal("debugfs sif did not change the image")
	}
	corrupt := FileSHA256(t, img)
	out, exit = E2fsck(t, img, "-fy")
	if exit == 0 || !slices.Contains(ProblemPasses(out), "4") {
		t.Errorf("links_count corruption: exit %d passes %v\n%s", exit, ProblemPasses(out), out)
	}
	if FileSHA256(t, img) != corrupt {
		t.Error("E2fsck -fy modified the caller's image instead of a copy")
	}
}

func TestReproducible(t *testing.T) {
	RequireE2fsprogs(t)
	spec := Spec{Size: 2 << 20, FSType: "ext4", Populate: func(tr *Tree) { tr.File("f", 3000) }}
	a, b := MkImage(t, spec), MkImage(t, spec)
	if FileSHA256(t, a) != FileSHA256(t, b) {
		t.Error("two builds of the same Spec differ")
	}
}

func TestDecompress(t *testing.T) {
	RequireE2fsprogs(t)
	img := MkImage(t, Spec{Size: 1 << 20})
	dir := t.TempDir()
	gz := filepath.Join(dir, "img.gz")
	// Exercise the gzip path by compressing with the library, as
	// Prebuilt stores its images.
	storeGzip(t, img, gz)
	dst := filepath.Join(dir, "img")
	Decompress(t, gz, dst)
	if FileSHA256(t, dst) != FileSHA256(t, img) {
		t.Error("decompressed image differs")
	}
}

func TestKernelImage(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	img := KernelImage(t, 8<<20, []string{"-t", "ext4"}, func(mnt string) {
		if err := os.WriteFile(filepath.Join(mnt, "hello"), []byte("kernel\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	if out, exit := E2fsck(t, img, "-fn"); exit != 0 {
		t.Errorf("kernel-made image not clean (exit %d):\n%s", exit, out)
	}
	if Ino(t, img, "/hello") == 0 {
		t.Error("file written through the kernel is missing")
	}
}
