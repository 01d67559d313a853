package ext2fs

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// firstFreeAlloc allocates from f's on-disk block bitmaps (groups without
// BLOCK_UNINIT): the first block clear there at or after goal, marked
// in a map of its own so that it is not handed out twice.
func firstFreeAlloc(t *testing.T, f *fs.FS) Allocator {
	taken := map[uint64]bool{}
	buf := make([]byte, f.BlockSize)
	used := func(b uint64) bool {
		g := f.GroupOfBlock(b)
		if err := f.ReadBlock(f.Group(g).BlockBitmap(), buf); err != nil {
			t.Fatal(err)
		}
		i := f.ClusterOf(b - f.GroupFirstBlock(g))
		return buf[i/8]&(1<<(i%8)) != 0
	}
	return AllocFuncs{
		Alloc: func(goal uint64) (uint64, bool) {
			for b := max(goal, f.FirstDataBlock); b < f.BlocksCount; b++ {
				if !taken[b] && !used(b) {
					taken[b] = true
					return b, true
				}
			}
			return 0, false
		},
		Free: func(uint64) {},
	}
}

// readFSInode reads inode ino of f.
func readFSInode(t *testing.T, f *fs.FS, ino uint32) ondisk.Inode {
	t.Helper()
	n := make(ondisk.Inode, f.InodeSize)
	if err := f.ReadInode(ino, n, make([]byte, f.BlockSize)); err != nil {
		t.Fatal(err)
	}
	return n
}

// resizeTables returns the resize inode's double-indirect block and the
// reserved GDT blocks it lists, by block number.
func resizeTables(t *testing.T, f *fs.FS) map[uint64][]byte {
	t.Helper()
	n := readFSInode(t, f, ondisk.ResizeIno)
	out := map[uint64][]byte{}
	read := func(b uint64) []byte {
		buf := make([]byte, f.BlockSize)
		if err := f.ReadBlock(b, buf); err != nil {
			t.Fatal(err)
		}
		out[b] = buf
		return buf
	}
	dind := ondisk.MapBlock(read(uint64(n.Block(ondisk.DindBlock))))
	for i := 0; i < dind.Slots(); i++ {
		if p := dind.Ptr(i); p != 0 {
			read(uint64(p))
		}
	}
	return out
}

// TestCreateResizeInodeLikeMke2fs clears the resize inode of mke2fs
// images (debugfs clri <7>, its double-indirect block freed) and
// re-creates it: the inode's blocks, size, mode and every table block
// must come out as mke2fs made them.
func TestCreateResizeInodeLikeMke2fs(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec testfs.Spec
	}{
		{"ext4-1k-sparse", testfs.Spec{FSType: "ext4", Size: 64 << 20, BlockSize: 1024}},
		{"ext2-2k", testfs.Spec{FSType: "ext2", Size: 96 << 20, BlockSize: 2048}},
		{"ext4-4k-128", testfs.Spec{FSType: "ext4", Size: 256 << 20, BlockSize: 4096, InodeSize: 128}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := testfs.MkImage(t, tc.spec)
			orig, _ := openOverlay(t, img)
			want := readFSInode(t, orig, ondisk.ResizeIno)
			wantTables := resizeTables(t, orig)
			dind := want.Block(ondisk.DindBlock)
			testfs.Debugfs(t, img, "clri <7>", fmt.Sprintf("freeb %d", dind))

			f, _ := openOverlay(t, img)
			fsys := &Filsys{FS: f, IO: devIO{t, f}, Alloc: firstFreeAlloc(t, f)}
			const now = 1700000000
			if err := CreateResizeInode(fsys, readFSInode(t, f, ondisk.ResizeIno), now); err != nil {
				t.Fatal(err)
			}
			got := readFSInode(t, f, ondisk.ResizeIno)
			if got.Block(ondisk.DindBlock) != dind || !bytes.Equal(got.IBlock(), want.IBlock()) {
				t.Errorf("i_block = %v, want %v", got.IBlock(), want.IBlock())
			}
			if got.Size() != want.Size() || got.BlocksLo() != want.BlocksLo() || got.Mode() != want.Mode() || got.LinksCount() != want.LinksCount() {
				t.Errorf("size %d blocks %d mode %o links %d, want %d %d %o %d", got.Size(), got.BlocksLo(), got.Mode(), got.LinksCount(),
					want.Size(), want.BlocksLo(), want.Mode(), want.LinksCount())
			}
			if got.Mtime() != now || got.Atime() != now || got.Ctime() != now {
				t.Errorf("times %d %d %d, want %d", got.Atime(), got.Ctime(), got.Mtime(), now)
			}
			if f.InodeSize > ondisk.GoodOldInodeSize && got.ExtraIsize() != largeInodeExtra {
				t.Errorf("i_extra_isize = %d", got.ExtraIsize())
			}
			gotTables := resizeTables(t, f)
			keys := slices.Sorted(maps.Keys(wantTables))
			if len(gotTables) != len(wantTables) {
				t.Errorf("%d table blocks, want %d", len(gotTables), len(wantTables))
			}
			for _, b := range keys {
				if !bytes.Equal(gotTables[b], wantTables[b]) {
					t.Errorf("table block %d differs from mke2fs's", b)
				}
			}

			// Run again on the complete inode: nothing to do, nothing
			// written.
			if err := CreateResizeInode(&Filsys{FS: f, IO: failWrites{t, devIO{t, f}}, Alloc: firstFreeAlloc(t, f)}, got, now+1); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// failWrites is a Writer that reports any write.
type failWrites struct {
	t *testing.T
	devIO
}

func (w failWrites) WriteBlock(blk uint64, _ []byte)       { w.t.Errorf("wrote block %d", blk) }
func (w failWrites) WriteInode(ino uint32, _ ondisk.Inode) { w.t.Errorf("wrote inode %d", ino) }

// TestCreateResizeInodeCorrupt: a reserved GDT block listing a wrong
// backup copy, or a double-indirect entry pointing elsewhere, is
// ErrResizeInodeCorrupt, as the library reports it.
func TestCreateResizeInodeCorrupt(t *testing.T) {
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 64 << 20, BlockSize: 1024})
	f, _ := openOverlay(t, img)
	n := readFSInode(t, f, ondisk.ResizeIno)
	tables := resizeTables(t, f)
	dind := uint64(n.Block(ondisk.DindBlock))
	first := ondisk.MapBlock(tables[dind]).Ptr(int(f.DescBlocks))

	for _, tc := range []struct {
		name string
		blk  uint64
		slot int
	}{
		{"dind entry", dind, int(f.DescBlocks)},
		{"backup entry", uint64(first), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := openOverlay(t, img)
			buf := slices.Clone(tables[tc.blk])
			ondisk.MapBlock(buf).SetPtr(tc.slot, ondisk.MapBlock(buf).Ptr(tc.slot)+1)
			devIO{t, f}.WriteBlock(tc.blk, buf)
			err := CreateResizeInode(&Filsys{FS: f, IO: devIO{t, f}, Alloc: firstFreeAlloc(t, f)}, n, 1)
			if !errors.Is(err, ErrResizeInodeCorrupt) {
				t.Errorf("err = %v, want %v", err, ErrResizeInodeCorrupt)
			}
		})
	}
}

// TestBackupGroups checks the walk's order against the groups that hold
// a superblock copy (fs.GroupHasSuper) on mke2fs images.
func TestBackupGroups(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec testfs.Spec
	}{
		{"sparse_super", testfs.Spec{FSType: "ext4", Size: 400 << 20, BlockSize: 1024}},
		{"no sparse_super", testfs.Spec{FSType: "ext2", Size: 32 << 20, BlockSize: 1024, Features: "^sparse_super,^resize_inode"}},
		{"sparse_super2", testfs.Spec{FSType: "ext4", Size: 64 << 20, BlockSize: 1024, Features: "sparse_super2,^resize_inode"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := openOverlay(t, testfs.MkImage(t, tc.spec))
			var want, got []uint64
			for g := uint32(1); g < f.Groups; g++ {
				if f.GroupHasSuper(g) {
					want = append(want, uint64(g))
				}
			}
			it := NewBackupGroups()
			for g := it.Next(f.SB, f.Groups); g < uint64(f.Groups); g = it.Next(f.SB, f.Groups) {
				got = append(got, g)
			}
			if !slices.Equal(got, want) {
				t.Errorf("groups %v, want %v", got, want)
			}
		})
	}
}
