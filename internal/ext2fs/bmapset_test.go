package ext2fs

import (
	"errors"
	"testing"

	"gofsck/internal/testfs"
)

// TestBmapSetBlockMapped remaps a direct and an indirect block of a
// 20-block file on an ext3 image and reads both back with debugfs; a
// block under the missing doubly indirect block is ErrSetBmapNoInd.
func TestBmapSetBlockMapped(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext3", BlockSize: 1024,
		Populate: func(tr *testfs.Tree) { tr.File("f", 20<<10) }})
	ino := testfs.Ino(t, img, "/f")
	fsys := openRW(t, img)
	n := readInode(t, fsys, ino)
	for _, tc := range []struct {
		lblk uint32
		blk  uint64
	}{{3, 7000}, {15, 7001}} {
		if err := BmapSetBlockMapped(fsys, ino, n, tc.lblk, tc.blk); err != nil {
			t.Fatal(err)
		}
		if got := testfs.Bmap(t, img, "/f", uint64(tc.lblk)); got != tc.blk {
			t.Errorf("block %d maps to %d, want %d", tc.lblk, got, tc.blk)
		}
	}
	if err := BmapSetBlockMapped(fsys, ino, n, 12+256+5, 7002); !errors.Is(err, ErrSetBmapNoInd) {
		t.Errorf("under a missing DIND block: %v, want ErrSetBmapNoInd", err)
	}
}
