package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// optimizeTree has directories of every size: one spanning many blocks
// (indexed by -D when the filesystem has dir_index), one of a few blocks,
// small and empty ones, and a deep one.
func optimizeTree(tr *testfs.Tree) {
	tr.ManyFiles("big", 700)
	tr.ManyFiles("mid", 70)
	tr.File("small/a", 10)
	tr.File("small/sub/b", 5000)
	tr.Dir("empty")
	tr.File("d1/d2/d3/d4/leaf", 1)
}

// TestOptimizeDirsMatchesE2fsck: gofsck -fyD rebuilds every directory in
// pass 3A as e2fsck -fyD does (htree for the big ones with dir_index,
// packed linear blocks otherwise): same transcript, exit status and bytes,
// except the superblock fields each program stamps. -D with a damaged
// directory and with -p too.
func TestOptimizeDirsMatchesE2fsck(t *testing.T) {
	t.Parallel() // independent of the others; runs beside them on the second CPU
	testfs.RequireE2fsprogs(t)
	specs := map[string]testfs.Spec{
		"ext4":        {FSType: "ext4", Size: 16 << 20, Populate: optimizeTree},
		"ext4-1k":     {FSType: "ext4", Size: 16 << 20, BlockSize: 1024, Populate: optimizeTree},
		"ext2":        {FSType: "ext2", Size: 16 << 20, BlockSize: 1024, Populate: optimizeTree},
		"ext3":        {FSType: "ext3", Size: 16 << 20, BlockSize: 1024, Populate: optimizeTree},
		"ext4-nocsum": {FSType: "ext4", Size: 16 << 20, Features: "^metadata_csum,uninit_bg", Populate: optimizeTree},
		"no-dirindex": {FSType: "ext4", Size: 16 << 20, Features: "^dir_index", Populate: optimizeTree},
		"inline":      {FSType: "ext4", Size: 16 << 20, Features: "inline_data", Populate: optimizeTree},
		"largedir":    {FSType: "ext4", Size: 16 << 20, BlockSize: 1024, Features: "large_dir", Populate: optimizeTree},
	}
	damages := map[string][]string{
		"clean":     nil,
		"dir-links": {"sif /mid links_count 9"},
		"unlinked":  {"unlink /small/a"},
	}
	for name, spec := range specs {
		base := testfs.MkImage(t, spec)
		for dname, dmg := range damages {
			img := testfs.CopyImage(t, base)
			if dmg != nil {
				testfs.Debugfs(t, img, dmg...)
			}
			for _, mode := range []string{"-fyD", "-fpD"} {
				compareOptimize(t, fmt.Sprintf("%s/%s %s", name, dname, mode), img, mode)
			}
		}
	}
}

// TestOptimizeDirsKernelImage: the same on directories the kernel made
// (an htree grown by ext4, entries deleted from it, leaving holes).
func TestOptimizeDirsKernelImage(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.KernelImage(t, 32<<20, []string{"-t", "ext4", "-b", "1024"}, func(mnt string) {
		for _, d := range []string{"big", "few", "gone"} {
			if err := os.MkdirAll(filepath.Join(mnt, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 900 {
			p := filepath.Join(mnt, "big", fmt.Sprintf("entry-%04d-%s", i, strings.Repeat("x", i%40)))
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if i%3 == 0 {
				os.WriteFile(filepath.Join(mnt, "gone", fmt.Sprintf("g%d", i)), nil, 0o644)
			}
		}
		for i := range 900 {
			if i%2 == 0 {
				os.Remove(filepath.Join(mnt, "big", fmt.Sprintf("entry-%04d-%s", i, strings.Repeat("x", i%40))))
			}
			if i%3 == 0 {
				os.Remove(filepath.Join(mnt, "gone", fmt.Sprintf("g%d", i)))
			}
		}
		os.WriteFile(filepath.Join(mnt, "few", "one"), []byte("1"), 0o644)
	})
	compareOptimize(t, "kernel -fyD", img, "-fyD")
}

// compareOptimize runs gofsck and e2fsck with mode on copies of img and
// requires the same transcript, exit status and image.
func compareOptimize(t *testing.T, name, img, mode string) {
	t.Helper()
	gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
	gout, gcode := runGofsck(mode, gimg)
	eout, ecode := testfs.E2fsckInPlace(t, eimg, mode)
	if !strings.Contains(eout, "Pass 3A: Optimizing directories") && !strings.Contains(mode, "p") {
		t.Fatalf("%s: e2fsck did not optimize:\n%s", name, eout)
	}
	if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
		t.Errorf("%s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", name, gcode, ecode, e, g)
		return
	}
	compareImages(t, name, gimg, eimg)
}

// TestOptimizeDirsRefused: -D with -n, or with -E fixes_only, is refused
// with e2fsck's message and exit status, before the device is opened.
func TestOptimizeDirsRefused(t *testing.T) {
	img := cleanImage(t)
	before := testfs.FileSHA256(t, img)
	for _, args := range [][]string{{"-fnD"}, {"-n", "-D"}, {"-fyD", "-E", "fixes_only"}, {"-pD", "-E", "discard,fixes_only"}} {
		gout, gcode := runGofsck(append(args, img)...)
		eout, ecode := runE2fsck(t, append(args, img)...)
		if g, e := strings.ReplaceAll(gout, "gofsck", "e2fsck"), eout; g != e || gcode != ecode {
			t.Errorf("%v: exit %d vs e2fsck %d; output %q vs %q", args, gcode, ecode, g, e)
		}
	}
	if testfs.FileSHA256(t, img) != before {
		t.Error("image changed")
	}
}

// TestOptimizeDirsDeepExtentTree: -D on large fragmented directories
// whose extent trees the rebuild must extend: one of depth 2, and one of
// depth 1 whose last leaf is full, so that the first block appended
// splits the leaf and the tree grows a level (the library's
// ext2fs_extent_set_bmap under its block iterator); and ones the rebuild
// shrinks, whose tails are punched (ext2fs_punch) across leaves and
// index blocks, or within the last leaf. debugfs builds them; a
// 1-block file written after every 24 names keeps each directory block an
// extent of its own.
func TestOptimizeDirsDeepExtentTree(t *testing.T) {
	t.Parallel() // independent of the others; runs beside them on the second CPU
	testfs.RequireE2fsprogs(t)
	onek := filepath.Join(t.TempDir(), "onek")
	if err := os.WriteFile(onek, []byte(strings.Repeat("x", 1024)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		names        int
		depth        int
		lastLeafFull bool
		// keepEvery > 1: only every keepEvery-th name stays (rm the
		// others), so the rebuilt directory needs fewer blocks and its
		// tail is punched; removeTail: the last removeTail names go.
		keepEvery, removeTail int
		// bigalloc: 4-block clusters, so the punch frees partial
		// clusters only when no other block of them stays mapped.
		bigalloc bool
	}{
		{"leaf-split", 7970, 1, true, 0, 0, false},
		{"depth-2", 8600, 2, false, 0, 0, false},
		{"depth-1-shrink", 5000, 1, false, 3, 0, false},
		{"depth-2-shrink", 8600, 2, false, 3, 0, false},
		{"depth-2-shrink-last-leaf", 8600, 2, false, 0, 1765, false},
		{"bigalloc-shrink", 5000, 1, false, 3, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := testfs.Spec{FSType: "ext4", Size: 32 << 20, BlockSize: 1024, Inodes: 12000}
			if tc.bigalloc {
				spec.Size, spec.ClusterSize, spec.Features = 64<<20, 4096, "bigalloc"
			}
			cmds := []string{"mkdir d", "cd d"}
			for i := range tc.names {
				cmds = append(cmds, fmt.Sprintf("write /dev/null f%05d-%s", i, strings.Repeat("q", 30)))
				if i%24 == 0 || i == tc.names-1 {
					cmds = append(cmds, fmt.Sprintf("write ONEK z%05d", i))
				}
			}
			for i := range tc.names {
				if tc.keepEvery > 1 && i%tc.keepEvery != 0 || i >= tc.names-tc.removeTail {
					cmds = append(cmds, fmt.Sprintf("rm f%05d-%s", i, strings.Repeat("q", 30)))
				}
			}
			// Thousands of debugfs commands take 10-30 s: the image is
			// stored (testfs.Prebuilt) and rebuilt in the long tier.
			recipe := fmt.Sprintf("%+v\nONEK=1024 x\n%s", spec, strings.Join(cmds, "\n"))
			img := testfs.Prebuilt(t, "deep-dir-"+tc.name, recipe, func(t testing.TB) string {
				img := testfs.MkImage(t, spec)
				run := make([]string, len(cmds))
				for i, c := range cmds {
					run[i] = strings.Replace(c, "ONEK", onek, 1)
				}
				testfs.Debugfs(t, img, run...)
				return img
			})
			depth, entries, max := extentShape(t, img, "d")
			if depth != tc.depth || tc.depth == 1 && tc.keepEvery == 0 && (entries == max) != tc.lastLeafFull {
				t.Fatalf("the directory's extent tree has depth %d and a last leaf of %d/%d entries; want depth %d, last leaf full %v",
					depth, entries, max, tc.depth, tc.lastLeafFull)
			}
			compareOptimize(t, tc.name+" -fyD", img, "-fyD")
			if tc.keepEvery > 1 || tc.removeTail > 0 {
				// The rebuild must have shrunk the directory (e2fsck's
				// htree leaves keep 20% free, so it needs fewer names).
				after := testfs.CopyImage(t, img)
				testfs.E2fsckInPlace(t, after, "-fyD")
				before, now := dirBlocks(t, img, "d"), dirBlocks(t, after, "d")
				if now >= before {
					t.Errorf("e2fsck -fyD left /d with %d blocks (before: %d)", now, before)
				}
				t.Logf("/d: %d blocks before, %d after", before, now)
			}
		})
	}
}

// dirBlocks is the number of blocks debugfs's blocks command lists for
// file (data and tree blocks of an extent-mapped file).
func dirBlocks(t *testing.T, img, file string) int {
	t.Helper()
	return len(strings.Fields(testfs.DebugfsRO(t, img, "blocks "+file)))
}

// extentShape returns the depth of file's extent tree and the entries and
// capacity of its last node just above the data (debugfs "ex"): the last
// leaf of a depth-1 tree.
func extentShape(t *testing.T, img, file string) (depth, entries, max int) {
	t.Helper()
	for _, line := range strings.Split(testfs.DebugfsRO(t, img, "ex "+file), "\n") {
		var lvl, maxLvl, e, m int
		if n, _ := fmt.Sscanf(strings.TrimSpace(line), "%d/ %d %d/ %d", &lvl, &maxLvl, &e, &m); n != 4 {
			continue
		}
		depth = maxLvl
		if lvl == maxLvl-1 {
			entries, max = e, m
		}
	}
	return depth, entries, max
}
