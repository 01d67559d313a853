package ext2fs

import (
	"testing"

	"gofsck/internal/bitmap"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// TestNewCluster runs ext2fs_new_block3's search on a small bitmap: the
// goal's cluster or the next free one, the wrap to the first data block,
// a goal out of range, clusters a caller skips, and a full map.
func TestNewCluster(t *testing.T) {
	f := &fs.FS{BlocksCount: 64, FirstDataBlock: 1, ClusterBits: 1} // clusters 0..31
	m := bitmap.New(32)
	for cl := uint64(0); cl < 32; cl++ {
		if cl != 3 && cl != 20 && cl != 21 {
			m.Set(cl)
		}
	}
	skip21 := func(cl uint64) bool { return cl == 21 }
	for _, tc := range []struct {
		name string
		goal uint64
		skip func(uint64) bool
		want uint64
		ok   bool
	}{
		{"at goal", 40, nil, 20, true},
		{"after goal", 41, nil, 20, true},
		{"next after goal", 42, nil, 21, true},
		{"skipped", 42, skip21, 3, true},
		{"wraps", 44, nil, 3, true},
		{"goal 0", 0, nil, 3, true},
		{"goal past the end", 64, nil, 3, true},
		{"all skipped", 10, func(uint64) bool { return true }, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := NewCluster(f, m, tc.goal, tc.skip)
			if got != tc.want || ok != tc.ok {
				t.Errorf("NewCluster(goal %d) = %d, %v; want %d, %v", tc.goal, got, ok, tc.want, tc.ok)
			}
		})
	}
	m.Set(3)
	m.Set(20)
	m.Set(21)
	if cl, ok := NewCluster(f, m, 10, nil); ok {
		t.Errorf("full map gave cluster %d", cl)
	}
	if cl, ok := NewCluster(f, m, 0, nil); ok {
		t.Errorf("full map from the first data block gave cluster %d", cl)
	}
}

// TestNewInodeNum runs ext2fs_new_inode's search: from the start of the
// directory's group, never below the first inode, wrapping once.
func TestNewInodeNum(t *testing.T) {
	f := &fs.FS{InodesCount: 32, InodesPerGroup: 16, FirstIno: 11}
	m := bitmap.New(33)
	for i := uint64(1); i <= 32; i++ {
		if i != 12 && i != 20 {
			m.Set(i)
		}
	}
	for _, tc := range []struct {
		dir, want uint32
		ok        bool
	}{{0, 12, true}, {2, 12, true}, {17, 20, true}, {30, 20, true}} {
		if got, ok := NewInodeNum(f, m, tc.dir); got != tc.want || ok != tc.ok {
			t.Errorf("NewInodeNum(dir %d) = %d, %v; want %d, %v", tc.dir, got, ok, tc.want, tc.ok)
		}
	}
	m.Set(12)
	if got, ok := NewInodeNum(f, m, 30); got != 20 || !ok {
		t.Errorf("from group 1: %d, %v", got, ok)
	}
	m.Set(20)
	if got, ok := NewInodeNum(f, m, 0); ok {
		t.Errorf("full map gave inode %d", got)
	}
}

// TestGetFreeBlocks runs ext2fs_get_free_blocks2's search for runs of
// free blocks: within a range, past it when it wraps, and none.
func TestGetFreeBlocks(t *testing.T) {
	f := &fs.FS{BlocksCount: 64, FirstDataBlock: 1}
	m := bitmap.New(64)
	for b := uint64(0); b < 64; b++ {
		if !(b >= 10 && b < 13) && !(b >= 40 && b < 45) {
			m.Set(b)
		}
	}
	for _, tc := range []struct {
		start, finish, num, want uint64
		ok                       bool
	}{
		{1, 64, 3, 10, true},
		{1, 64, 4, 40, true},
		{20, 64, 3, 40, true},
		{20, 30, 3, 0, false},
		{41, 0, 3, 41, true},
		{43, 0, 3, 10, true},
		{1, 64, 6, 0, false},
	} {
		if got, ok := GetFreeBlocks(f, m, tc.start, tc.finish, tc.num); got != tc.want || ok != tc.ok {
			t.Errorf("GetFreeBlocks(%d, %d, %d) = %d, %v; want %d, %v", tc.start, tc.finish, tc.num, got, ok, tc.want, tc.ok)
		}
	}
}

// TestFreeBlocksAndStats: the free blocks of a fresh image's bitmap are
// the superblock's count, and taking a block lowers its group's count
// and the superblock's (and clears BLOCK_UNINIT).
func TestFreeBlocksAndStats(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 64 << 20, BlockSize: 1024})
	fsys := openRW(t, img)
	f := fsys.FS
	bm := fsys.Alloc.(*diskAlloc).bm
	if got := FreeBlocksCount(f, bm); got != f.SB.FreeBlocksCount() {
		t.Errorf("FreeBlocksCount = %d, superblock %d", got, f.SB.FreeBlocksCount())
	}
	g := f.Groups - 1
	blk := f.GroupLastBlock(g)
	gfree, sfree := f.Group(g).FreeBlocks(), f.SB.FreeBlocksCount()
	TakeBlockStats(f, blk)
	if gd := f.Group(g); gd.FreeBlocks() != gfree-1 || gd.Flags()&ondisk.BgBlockUninit != 0 || f.SB.FreeBlocksCount() != sfree-1 {
		t.Errorf("after taking block %d: group free %d (was %d), flags %#x, superblock free %d (was %d)",
			blk, gd.FreeBlocks(), gfree, gd.Flags(), f.SB.FreeBlocksCount(), sfree)
	}
}
