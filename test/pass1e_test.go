package test

import (
	"bytes"
	"encoding/binary"
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
// clean as e2fsck's own, and the same image byte for byte apart from the superblock
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
			compareRepair(t, gofsck, e2fsck, img, true)
			// -E no_optimize_extents: no question, no pass 1E.
			compareRepair(t, gofsck, e2fsck, img, false, "-E", "no_optimize_extents")
			// -E fixes_only: no statistics, so no question either.
			compareRepair(t, gofsck, e2fsck, img, false, "-E", "fixes_only")
		})
	}
}

// TestBigallocBlockMap converts block-mapped files on a bigalloc file
// system to extents in pass 1E (PR_1_NO_BIGALLOC_BLOCKMAP_FILES), as
// e2fsck -fy does: same transcript, exit code and image.
func TestBigallocBlockMap(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	gofsck := testfs.GofsckPath(t)
	e2fsck := "/usr/sbin/e2fsck"
	spec := testfs.Spec{Size: 16 << 20, FSType: "ext4", BlockSize: 1024, ClusterSize: 4096, Features: "bigalloc",
		Populate: func(tr *testfs.Tree) {
			tr.Dir("d")
			tr.File("d/f", 40<<10)
			tr.File("d/g", 7<<10)
		}}
	// blockMap rewrites file's i_block as a block map of its own data
	// blocks: direct pointers for the first 12 (skipping those in holes),
	// the 13th block turned into the indirect block naming the rest.
	blockMap := func(t *testing.T, img, file string, holes map[int]bool) {
		data := testfs.Blocks(t, img, file).Data
		cmds := []string{fmt.Sprintf("sif %s flags 0", file)}
		for i := 0; i < 12; i++ {
			v := uint64(0)
			if i < len(data) && !holes[i] {
				v = data[i]
			}
			cmds = append(cmds, fmt.Sprintf("sif %s block[%d] %d", file, i, v))
		}
		ind := uint64(0)
		if len(data) > 13 {
			ind = data[12]
		}
		cmds = append(cmds, fmt.Sprintf("sif %s block[IND] %d", file, ind),
			fmt.Sprintf("sif %s block[DIND] 0", file), fmt.Sprintf("sif %s block[TIND] 0", file))
		testfs.Debugfs(t, img, cmds...)
		if ind != 0 {
			buf := make([]byte, 1024)
			for i, b := range data[13:] {
				binary.LittleEndian.PutUint32(buf[4*i:], uint32(b))
			}
			testfs.WriteAt(t, img, int64(ind)*1024, buf)
		}
	}
	cases := []struct {
		name string
		do   func(t *testing.T, img string)
	}{
		{"direct", func(t *testing.T, img string) { blockMap(t, img, "/d/g", nil) }},
		{"direct-with-hole", func(t *testing.T, img string) { blockMap(t, img, "/d/g", map[int]bool{2: true}) }},
		{"indirect", func(t *testing.T, img string) { blockMap(t, img, "/d/f", nil) }},
		// The hole leaves a cluster half used: e2fsck's own result still
		// has errors afterwards, and gofsck's must be the same.
		{"two-files", func(t *testing.T, img string) {
			blockMap(t, img, "/d/f", map[int]bool{5: true})
			blockMap(t, img, "/d/g", nil)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			img := testfs.MkImage(t, spec)
			tc.do(t, img)
			pre, _ := testfs.E2fsck(t, img, "-fn")
			if !strings.Contains(pre, "cannot be block mapped") || strings.Contains(pre, "illegal block") {
				t.Fatalf("no block-mapped file found:\n%s", pre)
			}
			compareRepair(t, gofsck, e2fsck, img, true)
		})
	}
}

// TestBmap2Extent: -E bmap2extent turns the extents feature on and
// rebuilds every file (block-mapped or not) as an extent tree in pass 1E,
// as e2fsck does: same transcript, exit code and image.
func TestBmap2Extent(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	gofsck := testfs.GofsckPath(t)
	e2fsck := "/usr/sbin/e2fsck"
	tree := func(tr *testfs.Tree) {
		tr.Dir("d")
		for i := 1; i <= 3; i++ {
			tr.File(fmt.Sprintf("d/f%d", i), int64(i)*30000)
		}
		// One block in three: an indirect block and a tree block.
		tr.Sparse("sparse", 300<<10, 1024, 3072)
		tr.File("big", 300<<10)
		tr.ManyFiles("many", 120)
	}
	cases := map[string]testfs.Spec{
		"ext3-1k": {Size: 16 << 20, FSType: "ext3", BlockSize: 1024, Populate: tree},
		"ext2-4k": {Size: 16 << 20, FSType: "ext2", BlockSize: 4096, Populate: tree},
		"ext4":    {Size: 16 << 20, FSType: "ext4", Populate: tree},
	}
	for name, spec := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			img := testfs.MkImage(t, spec)
			compareRepair(t, gofsck, e2fsck, img, true, "-E", "bmap2extent")
		})
	}
}

// TestDeepExtentTree: chains of one-entry index nodes 5, 8 and 9 levels
// deep over a one-extent file (1k blocks: e2fsck allows 5 levels). A
// deep tree is offered as shorter; one deeper than allowed is rebuilt
// without a question. gofsck -fn and -fy must match e2fsck's.
func TestDeepExtentTree(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	gofsck := testfs.GofsckPath(t)
	e2fsck := "/usr/sbin/e2fsck"
	spec := testfs.Spec{Size: 8 << 20, FSType: "ext4", BlockSize: 1024, Features: "^metadata_csum",
		Populate: func(tr *testfs.Tree) { tr.File("f", 5000) }}
	for _, depth := range []int{5, 8, 9} {
		t.Run(fmt.Sprint(depth), func(t *testing.T) {
			t.Parallel()
			img := testfs.MkImage(t, spec)
			data := testfs.Blocks(t, img, "/f").Data
			first := uint64(4000) // free: the file system uses its first 2 MiB
			node := func(entries, depth int) []byte {
				b := make([]byte, 1024)
				binary.LittleEndian.PutUint16(b[0:], 0xF30A)
				binary.LittleEndian.PutUint16(b[2:], uint16(entries))
				binary.LittleEndian.PutUint16(b[4:], 84)
				binary.LittleEndian.PutUint16(b[6:], uint16(depth))
				return b
			}
			for i := 0; i < depth; i++ {
				b := node(1, depth-1-i)
				if i == depth-1 {
					binary.LittleEndian.PutUint16(b[16:], uint16(len(data)))
					binary.LittleEndian.PutUint32(b[20:], uint32(data[0]))
				} else {
					binary.LittleEndian.PutUint32(b[16:], uint32(first+uint64(i)+1))
				}
				testfs.WriteAt(t, img, int64(first+uint64(i))*1024, b)
			}
			root := node(1, depth)[:60]
			binary.LittleEndian.PutUint16(root[4:], 4)
			binary.LittleEndian.PutUint32(root[16:], uint32(first))
			var cmds []string
			for i := 0; i < 15; i++ {
				cmds = append(cmds, fmt.Sprintf("sif /f block[%d] %d", i, binary.LittleEndian.Uint32(root[4*i:])))
			}
			// The IND/DIND/TIND names address i_block[12..14].
			cmds[12], cmds[13], cmds[14] = fmt.Sprintf("sif /f block[IND] %d", binary.LittleEndian.Uint32(root[48:])),
				fmt.Sprintf("sif /f block[DIND] %d", binary.LittleEndian.Uint32(root[52:])),
				fmt.Sprintf("sif /f block[TIND] %d", binary.LittleEndian.Uint32(root[56:]))
			testfs.Debugfs(t, img, cmds...)
			eout, eexit, _ := runSplit(t, 60*time.Second, e2fsck, "-fn", img)
			if !strings.Contains(eout, "could be") {
				t.Fatalf("e2fsck -fn does not see the deep tree:\n%s", eout)
			}
			gout, _, gexit, _ := runSplit2(t, 60*time.Second, gofsck, "-fn", img)
			if en, gn := normPath(eout, img), normPath(gout, img); en != gn || eexit != gexit {
				t.Fatalf("-fn transcripts differ:\n--- e2fsck (exit %d):\n%s--- gofsck (exit %d):\n%s", eexit, en, gexit, gn)
			}
			compareRepair(t, gofsck, e2fsck, img, true)
		})
	}
}

// compareRepair repairs copies of img with gofsck -fy and e2fsck -fy
// (and args) and requires the same transcript (with pass 1E or without,
// as pass1E says), exit code and image, and
// a result e2fsck -fn judges as it judges e2fsck's own.
func compareRepair(t *testing.T, gofsck, e2fsck, img string, pass1E bool, args ...string) {
	t.Helper()
	dir := t.TempDir()
	eimg, gimg := filepath.Join(dir, "e.img"), filepath.Join(dir, "g.img")
	copyTo(t, img, eimg)
	copyTo(t, img, gimg)
	eout, eexit, _ := runSplit(t, 60*time.Second, e2fsck, append(append([]string{"-fy"}, args...), eimg)...)
	gout, _, gexit, _ := runSplit2(t, 60*time.Second, gofsck, append(append([]string{"-fy"}, args...), gimg)...)
	en, gn := normPath(eout, eimg), normPath(gout, gimg)
	if en != gn || eexit != gexit {
		t.Fatalf("transcripts differ:\n--- e2fsck -fy (exit %d):\n%s--- gofsck -fy (exit %d):\n%s", eexit, en, gexit, gn)
	}
	if strings.Contains(en, "Pass 1E: Optimizing extent trees") != pass1E {
		t.Fatalf("pass 1E expected %v:\n%s", pass1E, en)
	}
	_, refExit, _ := runSplit(t, 60*time.Second, e2fsck, "-fn", eimg)
	if out, exit, _ := runSplit(t, 60*time.Second, e2fsck, "-fn", gimg); exit != refExit {
		t.Fatalf("e2fsck -fn after gofsck -fy exits %d (after e2fsck -fy %d):\n%s", exit, refExit, out)
	}
	sameImages(t, eimg, gimg)
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
	testfs.MaskSuperblockStamps(da[sb:])
	testfs.MaskSuperblockStamps(db[sb:])
	// Rewritten quota files get each program's clock in their inodes'
	// times (and the inode checksum over them).
	for _, f := range []int{0x240, 0x244, 0x26C} { // s_{usr,grp,prj}_quota_inum
		ino := binary.LittleEndian.Uint32(da[sb+f:])
		if ino == 0 {
			continue
		}
		off := int(testfs.InodeOffset(t, a, fmt.Sprintf("<%d>", ino)))
		isz := int(binary.LittleEndian.Uint16(da[sb+0x58:]))
		// (i_crtime and its extra too: a re-created quota file is new.)
		for _, r := range [][2]int{{0x08, 12}, {0x7C, 2}, {0x82, 2}, {0x84, 12}, {0x90, 8}} {
			if r[0]+r[1] <= isz && off+r[0]+r[1] <= len(da) {
				clear(da[off+r[0] : off+r[0]+r[1]])
				clear(db[off+r[0] : off+r[0]+r[1]])
			}
		}
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
