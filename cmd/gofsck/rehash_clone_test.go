package main

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// repairLikeE2fsck repairs copies of img with gofsck -fy and e2fsck -fy
// and wants the same transcript and exit code, an image e2fsck -fn finds
// clean, and (when exact) the same bytes.
func repairLikeE2fsck(t *testing.T, name, img string, exact bool) string {
	t.Helper()
	gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
	gout, gcode := runGofsck("-fy", gimg)
	eout, ecode := testfs.E2fsckInPlace(t, eimg, "-fy")
	if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
		t.Errorf("%s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", name, gcode, ecode, e, g)
	}
	if out, code := testfs.E2fsck(t, gimg, "-fn"); code != 0 {
		t.Errorf("%s: not clean after repair:\n%s", name, out)
	}
	if exact {
		compareImages(t, name, gimg, eimg)
	}
	return gout
}

// TestRehashMatchesE2fsck: with dir_index, a writable run rebuilds every
// unindexed directory of three blocks or more in pass 3A. gofsck must lay
// out the same htree (root, interior nodes, leaves with 20 % slack) in the
// same blocks and punch the same ones, byte for byte, on 1k and 4k blocks
// with and without metadata_csum, block-mapped and extent-mapped (one
// extent, or many under an index block).
func TestRehashMatchesE2fsck(t *testing.T) {
	t.Parallel() // independent of the others; runs beside them on the second CPU
	testfs.RequireE2fsprogs(t)
	big := func(n int) func(tr *testfs.Tree) {
		return func(tr *testfs.Tree) {
			tr.File("a/one", 5000)
			tr.ManyFiles("big", n)
			tr.ManyFiles("small", 30)
		}
	}
	// Files with data between the directory's blocks leave it in many
	// extents (a tree of depth 1), which the rebuild must grow.
	fragmented := func(tr *testfs.Tree) {
		tr.Dir("big")
		for i := 0; i < 1500; i++ {
			tr.File(fmt.Sprintf("big/file-with-a-longer-name-%04d", i), 10)
		}
	}
	specs := map[string]testfs.Spec{
		"ext4-frag":   {FSType: "ext4", Size: 32 << 20, BlockSize: 1024, Populate: fragmented},
		"ext4-frag4k": {FSType: "ext4", Size: 32 << 20, Populate: fragmented},
		"bigalloc":    {FSType: "ext4", Size: 64 << 20, BlockSize: 1024, ClusterSize: 16384, Features: "bigalloc", Populate: fragmented},
		"ext4-1k":     {FSType: "ext4", Size: 32 << 20, BlockSize: 1024, Populate: big(3000)},
		"ext4-4k":     {FSType: "ext4", Size: 32 << 20, Populate: big(2000)},
		"ext4-nocsum": {FSType: "ext4", Size: 32 << 20, BlockSize: 1024, Features: "^metadata_csum", Populate: big(500)},
		"ext3":        {FSType: "ext3", Size: 32 << 20, BlockSize: 1024, Populate: big(3000)},
		"ext2-2k":     {FSType: "ext2", Size: 32 << 20, BlockSize: 2048, Populate: big(200)},
	}
	for name, spec := range specs {
		img := testfs.MkImage(t, spec)
		out := repairLikeE2fsck(t, name, img, true)
		if !strings.Contains(out, "Pass 3A: Optimizing directories") {
			t.Errorf("%s: no pass 3A:\n%s", name, out)
		}
		// Most entries removed: the rebuilt directory is much smaller
		// and its tail is punched (extent entries deleted, leaves or
		// indirect blocks freed).
		var rm []string
		for _, l := range strings.Split(testfs.DebugfsRO(t, img, "ls /big"), " ") {
			if strings.HasPrefix(l, "file-with") || strings.HasPrefix(l, "entry-with") {
				if len(rm)%10 != 9 {
					rm = append(rm, "rm /big/"+l)
				} else {
					rm = append(rm, "")
				}
			}
		}
		if len(rm) < 100 {
			t.Fatalf("%s: only %d entries listed", name, len(rm))
		}
		shrunk := testfs.CopyImage(t, img)
		var cmds []string
		for _, c := range rm {
			if c != "" {
				cmds = append(cmds, c)
			}
		}
		testfs.Debugfs(t, shrunk, cmds...)
		repairLikeE2fsck(t, name+" shrunk", shrunk, true)
	}
}

// TestCloneMatchesE2fsck: a block claimed by two files is cloned for the
// first one reported (pass 1D), as e2fsck does: block-mapped files, an
// extent start and an indirect block shared with a file.
func TestCloneMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	pop := func(tr *testfs.Tree) {
		tr.File("d/file", 5000)
		tr.File("d/file2", 3000)
		tr.File("d/big", 300000)
		for i := 0; i < 6; i++ {
			tr.File(fmt.Sprintf("d/s%d", i), 3000)
		}
	}
	// lowest returns the two small files with the lowest inode numbers
	// (pass 1D clones the lower one).
	lowest := func(img string) (string, string) {
		var names []string
		for i := 0; i < 6; i++ {
			names = append(names, fmt.Sprintf("/d/s%d", i))
		}
		sort.Slice(names, func(i, j int) bool { return testfs.Ino(t, img, names[i]) < testfs.Ino(t, img, names[j]) })
		return names[0], names[1]
	}
	type dmg struct {
		name string
		cmds func(img string) []string
	}
	specs := map[string]testfs.Spec{
		"ext2": {FSType: "ext2", Size: 16 << 20, BlockSize: 1024, Populate: pop},
		"ext4": {FSType: "ext4", Size: 16 << 20, BlockSize: 1024, Populate: pop},
	}
	for name, spec := range specs {
		base := testfs.MkImage(t, spec)
		var damages []dmg
		if name == "ext2" {
			damages = []dmg{
				{"block0", func(img string) []string {
					return []string{fmt.Sprintf("sif /d/file2 block[0] %d", testfs.Bmap(t, img, "/d/file", 0))}
				}},
				{"data-under-ind", func(img string) []string {
					return []string{fmt.Sprintf("sif /d/file block[2] %d", testfs.Bmap(t, img, "/d/big", 14))}
				}},
			}
		} else {
			damages = []dmg{
				{"extent-start", func(img string) []string {
					return []string{fmt.Sprintf("sif /d/file block[5] %d", testfs.Bmap(t, img, "/d/file2", 0))}
				}},
				// Every block of the extent is cloned: 1.47.0 leaves the
				// last one in an extent of its own.
				{"extent-whole", func(img string) []string {
					x, y := lowest(img)
					return []string{fmt.Sprintf("sif %s block[5] %d", x, testfs.Bmap(t, img, y, 0))}
				}},
			}
		}
		for _, d := range damages {
			img := testfs.CopyImage(t, base)
			testfs.Debugfs(t, img, d.cmds(img)...)
			out := repairLikeE2fsck(t, name+"/"+d.name, img, true)
			if !strings.Contains(out, "Clone multiply-claimed blocks? yes") {
				t.Errorf("%s/%s: no clone:\n%s", name, d.name, out)
			}
		}
	}
}
