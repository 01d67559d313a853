package ext2fs

import (
	"testing"

	"gofsck/internal/bitmap"
	"gofsck/internal/blockdev"
	"gofsck/internal/freefrag"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// devIO is the Writer of the tests: reads through f, writes straight to
// f's device, as a repairing e2fsck writes through its io channel.
type devIO struct {
	t *testing.T
	f *fs.FS
}

var _ Writer = devIO{}

func (w devIO) ReadBlock(blk uint64, buf []byte) error { return w.f.ReadBlock(blk, buf) }

func (w devIO) WriteBlock(blk uint64, data []byte) {
	if _, err := w.f.Dev.WriteAt(data[:w.f.BlockSize], int64(blk)<<w.f.BlockBits); err != nil {
		w.t.Errorf("writing block %d: %v", blk, err)
	}
}

func (w devIO) WriteInode(ino uint32, n ondisk.Inode) {
	blk, off, ok := w.f.InodeLoc(ino)
	if !ok {
		w.t.Errorf("inode %d has no location", ino)
		return
	}
	if w.f.MetadataCsum {
		n.SetChecksum(w.f.CsumSeed, ino)
	}
	if _, err := w.f.Dev.WriteAt(n[:w.f.InodeSize], int64(blk)<<w.f.BlockBits+int64(off)); err != nil {
		w.t.Errorf("writing inode %d: %v", ino, err)
	}
}

// counterAlloc hands out the blocks of the upper quarter of f in order,
// ignoring the goal, and frees nothing: a tree's shape then depends only
// on the handle.
func counterAlloc(f *fs.FS) Allocator {
	next := f.BlocksCount * 3 / 4
	return AllocFuncs{
		Alloc: func(uint64) (uint64, bool) {
			if next >= f.BlocksCount {
				return 0, false
			}
			next++
			return next - 1, true
		},
		Free: func(uint64) {},
	}
}

// openOverlay opens img read-only under an overlay that takes the
// tests' writes.
func openOverlay(t *testing.T, img string) (*fs.FS, *blockdev.Overlay) {
	t.Helper()
	file, err := blockdev.Open(img, true, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { file.Close() })
	ov := blockdev.NewOverlay(file)
	f, err := fs.Open(ov, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return f, ov
}

// openRW opens img read-write (writes go straight to the file) as the
// library's filesystem, allocating as the library does without e2fsck's
// callbacks (diskAlloc).
func openRW(t *testing.T, img string) *Filsys {
	t.Helper()
	file, err := blockdev.Open(img, false, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { file.Close() })
	f, err := fs.Open(file, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bm, err := freefrag.ReadBlockBitmap(f)
	if err != nil {
		t.Fatal(err)
	}
	return &Filsys{FS: f, IO: devIO{t, f}, Alloc: &diskAlloc{f: f, bm: bm}}
}

// diskAlloc is ext2fs_new_block3 over fs->block_map (the bitmap
// ext2fs_read_block_bitmap reads) with the bitmap half of
// ext2fs_block_alloc_stats2. The trees compared do not depend on the
// group counts, which it leaves alone.
type diskAlloc struct {
	f  *fs.FS
	bm *bitmap.Bitmap
}

func (a *diskAlloc) AllocBlock(goal uint64) (uint64, bool) {
	cl, ok := NewCluster(a.f, a.bm, goal, nil)
	if !ok {
		return 0, false
	}
	a.bm.Set(cl)
	return cl << a.f.ClusterBits, true
}

func (a *diskAlloc) FreeBlock(blk uint64) {
	if blk >= a.f.FirstDataBlock && blk < a.f.BlocksCount {
		a.bm.Clear(a.f.ClusterOf(blk))
	}
}

// readInode reads inode ino of fsys.
func readInode(t *testing.T, fsys *Filsys, ino uint32) ondisk.Inode {
	t.Helper()
	return readFSInode(t, fsys.FS, ino)
}
