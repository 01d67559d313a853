package freefrag_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"gofsck/internal/blockdev"
	"gofsck/internal/freefrag"
	"gofsck/internal/fs"
	"gofsck/internal/testfs"
)

// e2freefrag returns the path of the installed e2freefrag, failing in CI
// and skipping elsewhere when it is missing.
func e2freefrag(t *testing.T) string {
	t.Helper()
	testfs.RequireE2fsprogs(t)
	for _, p := range []string{"e2freefrag", "/usr/sbin/e2freefrag", "/sbin/e2freefrag"} {
		if q, err := exec.LookPath(p); err == nil {
			return q
		}
	}
	if testfs.InCI() {
		t.Fatal("e2freefrag not installed")
	}
	t.Skip("e2freefrag not installed")
	return ""
}

// ours renders the report for img the way cmd/freefrag does.
func ours(t *testing.T, img string, chunkKB uint64) string {
	t.Helper()
	dev, err := blockdev.Open(img, true, false)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	f, err := fs.Open(dev, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	freefrag.WriteHeader(&b, img, f.BlockSize)
	bm, err := freefrag.ReadBlockBitmap(f)
	if err != nil {
		t.Fatal(err)
	}
	r, err := freefrag.Scan(f, bm, chunkKB*1024)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// compare runs e2freefrag and ours on img for several chunk sizes.
func compare(t *testing.T, img string, blockSize int) {
	t.Helper()
	tool := e2freefrag(t)
	for _, kb := range []uint64{0, uint64(blockSize) / 1024, 64, 1024, 16384} {
		if kb*1024 < uint64(blockSize) && kb != 0 {
			continue
		}
		args := []string{img}
		if kb != 0 {
			args = []string{"-c", strconv.FormatUint(kb, 10), img}
		}
		want, err := exec.Command(tool, args...).Output()
		if err != nil {
			t.Fatalf("e2freefrag %v: %v", args, err)
		}
		if got := ours(t, img, kb); got != string(want) {
			t.Errorf("-c %d: output differs\n--- e2freefrag\n%s--- freefrag\n%s", kb, want, got)
		}
	}
}

func populate(n int, seed uint64) func(*testfs.Tree) {
	return func(tr *testfs.Tree) {
		r := rand.New(rand.NewPCG(seed, 1))
		tr.Dir("d")
		for i := 0; i < n; i++ {
			tr.File(fmt.Sprintf("d/f%d", i), int64(r.IntN(200_000)))
		}
		tr.Sparse("sparse", 40<<20, 8192, 1<<20)
	}
}

func TestMatchesE2freefragMkfs(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec testfs.Spec
	}{
		{"ext4-4k", testfs.Spec{Size: 256 << 20, FSType: "ext4", Populate: populate(150, 1)}},
		{"ext4-fresh", testfs.Spec{Size: 512 << 20, FSType: "ext4"}},
		{"ext2-1k", testfs.Spec{Size: 64 << 20, FSType: "ext2", BlockSize: 1024, Populate: populate(100, 2)}},
		{"ext3-1k", testfs.Spec{Size: 48 << 20, FSType: "ext3", BlockSize: 1024}},
		{"uninit_bg", testfs.Spec{Size: 256 << 20, FSType: "ext4", Features: "^metadata_csum,uninit_bg", Populate: populate(80, 3)}},
		{"no-flex", testfs.Spec{Size: 256 << 20, FSType: "ext4", Features: "^flex_bg", Populate: populate(80, 4)}},
		{"meta_bg", testfs.Spec{Size: 256 << 20, FSType: "ext4", Features: "meta_bg,^resize_inode", Populate: populate(80, 5)}},
		{"sparse_super2", testfs.Spec{Size: 256 << 20, FSType: "ext4", Features: "sparse_super2", Populate: populate(80, 6)}},
		{"32bit", testfs.Spec{Size: 256 << 20, FSType: "ext4", Features: "^64bit", Populate: populate(80, 7)}},
		{"bigalloc-4k", testfs.Spec{Size: 512 << 20, FSType: "ext4", Features: "bigalloc", ClusterSize: 65536, Populate: populate(60, 8)}},
		{"bigalloc-1k", testfs.Spec{Size: 64 << 20, FSType: "ext4", BlockSize: 1024, Features: "bigalloc", ClusterSize: 4096, Populate: populate(60, 9)}},
		{"64k-blocks", testfs.Spec{Size: 512 << 20, FSType: "ext4", BlockSize: 65536, Populate: populate(40, 10)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := testfs.MkImage(t, tc.spec)
			bs := tc.spec.BlockSize
			if bs == 0 {
				bs = 4096
			}
			compare(t, img, bs)
		})
	}
}

// fragment writes files of random sizes through the kernel, then deletes
// every other one and some more, leaving free space in pieces.
func fragment(seed uint64, files int) func(string) {
	return func(mnt string) {
		r := rand.New(rand.NewPCG(seed, 7))
		buf := make([]byte, 1<<20)
	write:
		for i := 0; i < files; i++ {
			dir := filepath.Join(mnt, fmt.Sprintf("d%d", i%7))
			os.MkdirAll(dir, 0o755)
			n := (r.IntN(96) + 1) * 4096
			for n > len(buf) {
				n -= len(buf)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), buf[:n], 0o644); err != nil {
				break write // full: enough
			}
		}
		for i := 0; i < files; i++ {
			if i%2 == 0 || r.IntN(5) == 0 {
				os.Remove(filepath.Join(mnt, fmt.Sprintf("d%d", i%7), fmt.Sprintf("f%d", i)))
			}
		}
		// Refill part of the holes with growing appends (interleaved).
		fs := make([]*os.File, 4)
		for k := range fs {
			fs[k], _ = os.Create(filepath.Join(mnt, fmt.Sprintf("grow%d", k)))
		}
		for j := 0; j < 50; j++ {
			for _, f := range fs {
				if f != nil {
					f.Write(buf[:12288])
					f.Sync()
				}
			}
		}
		for _, f := range fs {
			if f != nil {
				f.Close()
			}
		}
	}
}

func TestMatchesE2freefragKernel(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int64
		mkfs []string
		bs   int
	}{
		{"ext4-aged", 256 << 20, []string{"-t", "ext4", "-b", "4096"}, 4096},
		{"ext4-1k", 96 << 20, []string{"-t", "ext4", "-b", "1024"}, 1024},
		{"ext3", 128 << 20, []string{"-t", "ext3", "-b", "4096"}, 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := testfs.KernelImage(t, tc.size, tc.mkfs, fragment(uint64(len(tc.name)), 1500))
			compare(t, img, tc.bs)
			if out := ours(t, img, 0); extentCount(out) < 50 {
				t.Errorf("image not fragmented:\n%s", out)
			}
		})
	}
}

// TestMinMax checks the arithmetic on a hand-made bitmap shape: a fresh
// filesystem has few large extents, and the sum of the histogram equals
// the free blocks the bitmap shows.
func TestHistogramSums(t *testing.T) {
	img := testfs.MkImage(t, testfs.Spec{Size: 128 << 20, FSType: "ext4", Populate: populate(50, 11)})
	dev, err := blockdev.Open(img, true, false)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	f, err := fs.Open(dev, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bm, err := freefrag.ReadBlockBitmap(f)
	if err != nil {
		t.Fatal(err)
	}
	r, err := freefrag.Scan(f, bm, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ext, blks uint64
	for _, h := range r.Hist {
		ext += h.Extents
		blks += h.Blocks
	}
	used := bm.Count(f.FirstDataBlock, f.BlocksCount-f.FirstDataBlock)
	if free := f.BlocksCount - f.FirstDataBlock - used; blks != free || ext != r.Extents || blks != r.Sum {
		t.Errorf("histogram: %d extents %d blocks; report %d extents %d blocks; bitmap free %d", ext, blks, r.Extents, r.Sum, free)
	}
	if r.FreeBlocks != blks {
		t.Errorf("s_free_blocks_count %d, bitmap %d", r.FreeBlocks, blks)
	}
}

func TestScanRejectsSmallChunk(t *testing.T) {
	img := testfs.MkImage(t, testfs.Spec{Size: 32 << 20, FSType: "ext4", BlockSize: 4096})
	dev, err := blockdev.Open(img, true, false)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	f, err := fs.Open(dev, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bm, err := freefrag.ReadBlockBitmap(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := freefrag.Scan(f, bm, 1024); err == nil {
		t.Error("1 KiB chunks on a 4 KiB filesystem accepted")
	}
}

// extentCount reads "Num. free extent: N" from a report.
func extentCount(report string) int {
	var n int
	for _, line := range bytes.Split([]byte(report), []byte("\n")) {
		if _, err := fmt.Sscanf(string(line), "Num. free extent: %d", &n); err == nil {
			return n
		}
	}
	return -1
}
