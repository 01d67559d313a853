package main

import (
	"bytes"
	"os"
	"testing"

	"gofsck/internal/testfs"
)

// TestReadaheadDepthKeepsOutput checks damaged images with extent trees
// and indirect blocks (the read-ahead hints their children), many inodes
// and xattr blocks at every read-ahead depth, -fn and -fy: the read-ahead changes when reads
// are served, never what the check reads or prints, nor the repaired
// image. CI runs it under the race detector.
func TestReadaheadDepthKeepsOutput(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	ext4 := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 96 << 20, ExtraArgs: []string{"-b", "4096", "-N", "2048"},
		Populate: func(tr *testfs.Tree) {
			tr.Sparse("frag/a", 24<<20, 4096, 12288) // 2048 extents: depth 1
			tr.Sparse("frag/b", 8<<20, 4096, 8192)
			tr.Sparse("frag/c", 4<<20, 4096, 8192)
			tr.ManyFiles("d/many", 300)
			tr.File("d/x1", 100)
			tr.File("d/x2", 100)
			tr.XattrSize("d/x1", "user.big", 3000) // in an xattr block
			tr.XattrSize("d/x2", "user.big", 3000)
		}})
	testfs.Debugfs(t, ext4,
		"sif /frag/b block[4] 0x1234", // the root's index names a wrong leaf
		"sif /frag/c size 4096",
		"sif /d/many/f7 links_count 3",
		"sif /d/many/f9 uid 0x10000",
	)
	// Block-mapped: indirect, double indirect blocks.
	ext3 := testfs.MkImage(t, testfs.Spec{FSType: "ext3", Size: 64 << 20, ExtraArgs: []string{"-b", "1024"},
		Populate: func(tr *testfs.Tree) {
			tr.Sparse("big/a", 12<<20, 1024, 2048)
			tr.File("big/b", 9<<20)
			tr.ManyFiles("d/many", 200)
		}})
	testfs.Debugfs(t, ext3,
		"sif /big/a block[IND] 0x7",
		"sif /big/b size 1024",
		"sif /d/many/f3 links_count 2",
	)
	for name, base := range map[string]string{"ext4": ext4, "ext3": ext3} {
		for _, mode := range []string{"-fn", "-fy"} {
			readaheadDepths(t, name, mode, base)
		}
	}
}

// readaheadDepths checks base with mode at every read-ahead depth.
func readaheadDepths(t *testing.T, name, mode, base string) {
	t.Helper()
	var want, wantImg []byte
	for _, depth := range []string{"0", "1", "2", "32"} {
		img := testfs.CopyImage(t, base)
		out, code := runGofsck(mode, "-E", "threads=4,io_depth="+depth, img)
		if code == 0 || code >= 8 {
			t.Fatalf("%s %s io_depth=%s: exit %d, want a damaged image found:\n%s", name, mode, depth, code, out)
		}
		got := []byte(norm(out, img))
		data, err := os.ReadFile(img)
		if err != nil {
			t.Fatal(err)
		}
		clearSuperTimes(data)
		if want == nil {
			want, wantImg = got, data
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s %s: io_depth=%s prints otherwise than io_depth=0:\n--- 0\n%s--- %s\n%s", name, mode, depth, want, depth, got)
		}
		if !bytes.Equal(data, wantImg) {
			t.Errorf("%s %s: io_depth=%s leaves another image than io_depth=0", name, mode, depth)
		}
	}
}
