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

// TestExtentRebuild repairs images whose extent trees e2fsck offers to
// narrow or shorten (pass 1E) with gofsck -fy and e2fsck -fy, and
// requires the same transcript and exit code, a result e2fsck -fn finds
// clean, and the same image byte for byte apart from the superblock
// fields each program stamps for itself: the rebuilt trees (new tree
// blocks, their placement, the stale entries a new root keeps, the
// checksums), i_blocks, the bitmaps, the group counts and the quota
// files must all be e2fsck's.
//
// The trees come from mke2fs -d (a sparse file with one extent per
// chunk) and debugfs punch, which empties entries without merging
// nodes; fallocate adds uninitialised extents.
func TestExtentRebuild(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	gofsck := testfs.GofsckPath(t)
	e2fsck := "/usr/sbin/e2fsck"
	// sparse: n one-block extents, one every other block of size bs.
	sparse := func(n int, bs int64) func(*testfs.Tree) {
		return func(tr *testfs.Tree) {
			tr.Dir("d")
			tr.Sparse("d/big", int64(n)*2*bs, bs, 2*bs)
			tr.File("d/small", 3000)
		}
	}
	// punch removes len blocks every step blocks of /d/big up to end.
	punch := func(end, step, n int) []string {
		var cmds []string
		for i := 0; i < end; i += step {
			cmds = append(cmds, fmt.Sprintf("punch /d/big %d %d", i, i+n-1))
		}
		return cmds
	}
	cases := []struct {
		name string
		spec testfs.Spec
	}{
		// Depth 2, leaves half emptied: narrower (new leaves and a new
		// index level above them).
		{"1k-csum-narrow", testfs.Spec{Size: 16 << 20, FSType: "ext4", BlockSize: 1024, Features: "metadata_csum",
			Populate: sparse(1500, 1024), Debugfs: punch(3000, 6, 3)}},
		{"1k-nocsum-narrow", testfs.Spec{Size: 16 << 20, FSType: "ext4", BlockSize: 1024, Features: "^metadata_csum",
			Populate: sparse(1500, 1024), Debugfs: punch(3000, 8, 4)}},
		// One extent left per 40 blocks: 75 extents, one leaf.
		{"1k-few-left", testfs.Spec{Size: 16 << 20, FSType: "ext4", BlockSize: 1024,
			Populate: sparse(1500, 1024), Debugfs: punch(3000, 40, 38)}},
		// A handful left: the tree fits in the inode again.
		{"1k-into-inode", testfs.Spec{Size: 16 << 20, FSType: "ext4", BlockSize: 1024,
			Populate: sparse(1500, 1024), Debugfs: punch(3000, 400, 398)}},
		{"4k-csum-narrow", testfs.Spec{Size: 64 << 20, FSType: "ext4", BlockSize: 4096,
			Populate: sparse(2000, 4096), Debugfs: punch(4000, 8, 4)}},
		{"1k-bigalloc", testfs.Spec{Size: 32 << 20, FSType: "ext4", BlockSize: 1024, ClusterSize: 4096, Features: "bigalloc",
			Populate: sparse(800, 1024), Debugfs: punch(1600, 16, 8)}},
		// The freed and added tree blocks are charged to the quota.
		{"1k-quota", testfs.Spec{Size: 16 << 20, FSType: "ext4", BlockSize: 1024, Features: "quota",
			Populate: sparse(1500, 1024), Debugfs: punch(3000, 4, 1)}},
		// Uninitialised extents, some past i_size.
		{"1k-uninit", testfs.Spec{Size: 64 << 20, FSType: "ext4", BlockSize: 1024,
			Populate: sparse(1500, 1024), Debugfs: append(punch(3000, 6, 3), "fallocate /d/big 3000 3600", "fallocate /d/big 5000 40000")}},
		// HUGE_FILE_FL: i_blocks counts file system blocks.
		{"1k-huge-file-flag", testfs.Spec{Size: 16 << 20, FSType: "ext4", BlockSize: 1024, Features: "huge_file",
			Populate: sparse(1500, 1024), Debugfs: append(punch(3000, 6, 3), "sif /d/big flags 0xC0000")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			img := testfs.MkImage(t, tc.spec)
			pre, _ := testfs.E2fsck(t, img, "-fn")
			if !strings.Contains(pre, "could be narrower") && !strings.Contains(pre, "could be shorter") {
				t.Fatalf("the image does not need pass 1E:\n%s", pre)
			}
			dir := t.TempDir()
			eimg, gimg := filepath.Join(dir, "e.img"), filepath.Join(dir, "g.img")
			copyTo(t, img, eimg)
			copyTo(t, img, gimg)
			eout, eexit, _ := runSplit(t, 60*time.Second, e2fsck, "-fy", eimg)
			gout, _, gexit, _ := runSplit2(t, 60*time.Second, gofsck, "-fy", gimg)
			en, gn := normPath(eout, eimg), normPath(gout, gimg)
			if en != gn || eexit != gexit {
				t.Fatalf("transcripts differ:\n--- e2fsck -fy (exit %d):\n%s--- gofsck -fy (exit %d):\n%s", eexit, en, gexit, gn)
			}
			if !strings.Contains(en, "Pass 1E: Optimizing extent trees") {
				t.Fatalf("no pass 1E:\n%s", en)
			}
			if out, exit, _ := runSplit(t, 60*time.Second, e2fsck, "-fn", gimg); exit != 0 {
				t.Fatalf("e2fsck -fn after gofsck -fy exits %d:\n%s", exit, out)
			}
			sameImages(t, eimg, gimg)
		})
	}
}

// normPath drops the version banner and names the image IMG.
func normPath(out, img string) string {
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "e2fsck 1.") || strings.HasPrefix(l, "gofsck 0.") {
			continue
		}
		b.WriteString(strings.ReplaceAll(l, img, "IMG") + "\n")
	}
	return b.String()
}

// sameImages requires two repaired images to be equal apart from the
// superblock fields each program stamps from its own clock or counters
// (s_wtime, s_lastcheck, s_kbytes_written, the times' high bytes, and
// the checksum over them).
func sameImages(t *testing.T, a, b string) {
	t.Helper()
	da, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(da) != len(db) {
		t.Fatalf("image sizes differ: %d and %d", len(da), len(db))
	}
	const sb = 1024
	for _, r := range [][2]int{{0x30, 4}, {0x40, 4}, {0x178, 8}, {0x274, 4}, {0x3FC, 4}} {
		clear(da[sb+r[0] : sb+r[0]+r[1]])
		clear(db[sb+r[0] : sb+r[0]+r[1]])
	}
	if bytes.Equal(da, db) {
		return
	}
	bs := int(testfs.BlockSize(t, a))
	var diff []int
	for blk := 0; blk*bs < len(da) && len(diff) < 20; blk++ {
		if !bytes.Equal(da[blk*bs:(blk+1)*bs], db[blk*bs:(blk+1)*bs]) {
			diff = append(diff, blk)
		}
	}
	t.Fatalf("images differ in blocks %v (block size %d)", diff, bs)
}
