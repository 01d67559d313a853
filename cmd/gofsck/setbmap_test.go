package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// Repairs that change one block's mapping in an extent tree
// (ext2fs_extent_set_bmap, internal/ext2fs/setbmap.go) where the
// change needs more room than the node has: a new extent cut out of
// another, a full root moved down into a new leaf, a full leaf split.
// Each case wants e2fsck -fy's transcript, exit code and bytes
// (except the times each program stamps), and e2fsck -fn to find the
// same in both images afterwards.

// setBmapLikeE2fsck damages a copy of a new image (1 KiB blocks), repairs
// copies of it with gofsck -fy and e2fsck -fy and compares; want must be
// in the transcript (the repair really took the path under test).
func setBmapLikeE2fsck(t *testing.T, spec testfs.Spec, damage []string, newInodes []string, want string) (gimg, eimg string) {
	t.Helper()
	img := testfs.MkImage(t, spec)
	testfs.Debugfs(t, img, damage...)
	gimg, eimg = testfs.CopyImage(t, img), testfs.CopyImage(t, img)
	gout, gcode := runGofsck("-fy", gimg)
	eout, ecode := testfs.E2fsckInPlace(t, eimg, "-fy")
	if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
		t.Errorf("exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, e, g)
	}
	if !strings.Contains(eout, want) {
		t.Errorf("e2fsck's repair does not contain %q:\n%s", want, eout)
	}
	// e2fsck's own repair may leave errors (a recreated orphan file's
	// i_blocks does not count its tree blocks): both images must check
	// the same afterwards.
	gafter, gc := testfs.E2fsck(t, gimg, "-fn")
	eafter, ec := testfs.E2fsck(t, eimg, "-fn")
	if g, e := norm(gafter, gimg), norm(eafter, eimg); g != e || gc != ec {
		t.Errorf("e2fsck -fn after the repairs: exit %d vs %d:\n--- after e2fsck\n%s--- after gofsck\n%s", gc, ec, e, g)
	}
	compareMiscImages(t, gimg, eimg, newInodes)
	return gimg, eimg
}

// hostFile writes a file of n bytes for debugfs' write command.
func hostFile(t *testing.T, n int) string {
	p := filepath.Join(t.TempDir(), fmt.Sprintf("f%d", n))
	if err := os.WriteFile(p, []byte(strings.Repeat("x", n)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// extentLines counts the lines of debugfs' extent listing of file that
// start with prefix, a level and the tree's depth: " 0/ 1 " for the root
// entries of a depth-1 tree, " 1/ 1 " for its leaf extents.
func extentLines(t *testing.T, img, file, prefix string) int {
	n := 0
	for _, l := range strings.Split(testfs.DebugfsRO(t, img, "ex "+file), "\n") {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// TestOrphanFileSetBmapMatchesE2fsck: a corrupted orphan file is
// recreated block by block from the bitmap pass 5 left. With the free
// blocks scattered, the new file's extents do not fit in the inode: the
// root moves into a leaf block (16 MiB, 32 blocks), and with 128 blocks
// that leaf fills up and splits at the end of the file (512 MiB).
func TestOrphanFileSetBmapMatchesE2fsck(t *testing.T) {
	t.Parallel() // independent of the others; runs beside them on the second CPU
	testfs.RequireE2fsprogs(t)
	t.Run("root-split", func(t *testing.T) {
		one := hostFile(t, 1000)
		var damage []string
		// Every other block of the old file is freed and taken by a
		// new file: the recreated file gets the blocks between them.
		for i := 1; i < 32; i += 2 {
			damage = append(damage, fmt.Sprintf("punch <12> %d %d", i, i))
		}
		for i := 0; i < 16; i++ {
			damage = append(damage, fmt.Sprintf("write %s f%d", one, i))
		}
		spec := testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 1024, Features: "orphan_file"}
		gimg, _ := setBmapLikeE2fsck(t, spec, damage, []string{"<12>"}, "Creating orphan file (32 blocks):  Done.")
		if n := extentLines(t, gimg, "<12>", " 1/ 1 "); n < 5 {
			t.Errorf("the new orphan file has %d extents, want more than the root holds", n)
		}
	})
	t.Run("leaf-split", func(t *testing.T) {
		one, big := hostFile(t, 1000), hostFile(t, 127*1024)
		var damage []string
		// 100 one-block holes after the old file, whose blocks but the
		// first are taken by another file.
		for i := 0; i < 200; i++ {
			damage = append(damage, fmt.Sprintf("write %s g%d", one, i))
		}
		for i := 1; i < 200; i += 2 {
			damage = append(damage, fmt.Sprintf("rm g%d", i))
		}
		damage = append(damage, "punch <12> 1 127", "write "+big+" big")
		spec := testfs.Spec{FSType: "ext4", Size: 512 << 20, BlockSize: 1024, Features: "orphan_file"}
		gimg, _ := setBmapLikeE2fsck(t, spec, damage, []string{"<12>"}, "Creating orphan file (128 blocks):  Done.")
		if n := extentLines(t, gimg, "<12>", " 0/ 1 "); n < 2 {
			t.Errorf("the new orphan file's root has %d entries, want a split leaf", n)
		}
	})
}

// TestCloneSetBmapMatchesE2fsck: pass 1D clones one block in the middle
// of an extent of a file whose extents fill most of a leaf below the
// root. The block's extent is cut in three, so the leaf needs two more
// entries than it has room for and splits in half; with the root's four
// index entries in use the root moves down first and the tree grows to
// depth 2. 1 KiB blocks with metadata_csum, 4 KiB without.
func TestCloneSetBmapMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	cases := []struct {
		name   string
		bs     int64
		chunks int64 // extents of three blocks, eight blocks apart
		// the extent whose middle block is shared
		extent   int64
		features string
		size     int64
		// a level of index entries afterwards, as debugfs prints it
		depth string
	}{
		{"leaf-split-1k", 1024, 84, 10, "", 16 << 20, " 0/ 1 "},
		{"root-grows-1k", 1024, 250, 10, "", 16 << 20, " 1/ 2 "},
		{"leaf-split-4k", 4096, 340, 200, "^metadata_csum", 64 << 20, " 0/ 1 "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := testfs.Spec{FSType: "ext4", Size: tc.size, BlockSize: int(tc.bs), Features: tc.features,
				Populate: func(tr *testfs.Tree) {
					tr.Sparse("a/big", tc.chunks*8*tc.bs, 3*tc.bs, 8*tc.bs)
				}}
			img := testfs.MkImage(t, spec)
			// The other file is made after the populated ones: its
			// inode number is higher and pass 1D clones /a/big.
			testfs.Debugfs(t, img, "write "+hostFile(t, 1000)+" small")
			shared := testfs.Bmap(t, img, "/a/big", uint64(tc.extent*8+1))
			testfs.Debugfs(t, img, fmt.Sprintf("sif /small block[5] %d", shared))
			out := repairLikeE2fsck(t, tc.name, img, true)
			if !strings.Contains(out, "Clone multiply-claimed blocks? yes") {
				t.Errorf("no clone:\n%s", out)
			}
			gimg := testfs.CopyImage(t, img)
			runGofsck("-fy", gimg)
			if extentLines(t, gimg, "/a/big", tc.depth) < 2 {
				t.Errorf("the cloned file's tree has no split node at %q:\n%s", tc.depth, testfs.DebugfsRO(t, gimg, "ex /a/big"))
			}
		})
	}
}

// TestOrphanTruncateSetBmapMatchesE2fsck: an orphan with links is
// truncated before pass 1 by the library's iterator, every released
// block unmapped by ext2fs_extent_set_bmap. The new end falls in the
// middle of an extent, which is cut: in a tree of depth 1 (the leaves
// after it emptied and freed), and in a root whose four extents leave no
// room (the root moves into a new leaf allocated from the on-disk
// bitmap).
func TestOrphanTruncateSetBmapMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	cases := []struct {
		name   string
		chunks int64 // extents of three blocks, eight blocks apart
		cut    int64 // the extent whose middle block becomes the end
		bs     int64
	}{
		{"depth1-1k", 100, 40, 1024},
		{"depth1-4k", 400, 300, 4096},
		{"root-full-1k", 4, 1, 1024},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := testfs.Spec{FSType: "ext4", Size: 32 << 20, BlockSize: int(tc.bs),
				Populate: func(tr *testfs.Tree) {
					tr.Sparse("a/big", tc.chunks*8*tc.bs, 3*tc.bs, 8*tc.bs)
				}}
			img := testfs.MkImage(t, spec)
			ino := testfs.Ino(t, img, "/a/big")
			// The new size ends inside the extent's middle block.
			size := tc.cut*8*tc.bs + 100
			testfs.Debugfs(t, img, fmt.Sprintf("sif /a/big size %d", size), fmt.Sprintf("ssv last_orphan %d", ino))
			out := repairLikeE2fsck(t, tc.name, img, true)
			if !strings.Contains(out, "Truncating orphaned inode") {
				t.Errorf("no truncation:\n%s", out)
			}
		})
	}
}

// TestCloneUninitSetBmapMatchesE2fsck: pass 1D clones two blocks in the
// middle of an uninitialised (fallocated) extent; each cut gives two more
// uninitialised extents, and the second no longer fits in the inode: the
// root moves into a new leaf.
func TestCloneUninitSetBmapMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 1024})
	one := hostFile(t, 1000)
	testfs.Debugfs(t, img, "write "+one+" big", "fallocate big 0 299", "write "+one+" s1", "write "+one+" s2")
	// debugfs prints "N (uninit)", which testfs.Bmap does not take.
	bmap := func(l int) string {
		lines := strings.Split(strings.TrimSpace(testfs.DebugfsRO(t, img, fmt.Sprintf("bmap /big %d", l))), "\n")
		f := strings.Fields(lines[len(lines)-1])
		if len(f) != 2 || f[1] != "(uninit)" {
			t.Fatalf("bmap /big %d: %q", l, lines)
		}
		return f[0]
	}
	testfs.Debugfs(t, img, "sif s1 block[5] "+bmap(100), "sif s2 block[5] "+bmap(200))
	out := repairLikeE2fsck(t, "uninit", img, true)
	if !strings.Contains(out, "Clone multiply-claimed blocks? yes") {
		t.Errorf("no clone:\n%s", out)
	}
	gimg := testfs.CopyImage(t, img)
	runGofsck("-fy", gimg)
	ex := testfs.DebugfsRO(t, gimg, "ex /big")
	if extentLines(t, gimg, "/big", " 1/ 1 ") < 6 || !strings.Contains(ex, "Uninit") {
		t.Errorf("the cloned file's tree did not grow:\n%s", ex)
	}
}
