package fcreplay

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"

	"gofsck/internal/bitmap"
	"gofsck/internal/blockdev"
	"gofsck/internal/ext2fs"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// testHost writes straight to the overlay under f, and knows the data
// blocks of the directories the tests use (from debugfs).
type testHost struct {
	t    *testing.T
	f    *fs.FS
	dirs map[uint32][]uint64
}

var _ Host = (*testHost)(nil)

func (h *testHost) WriteAt(off int64, data []byte) {
	if _, err := h.f.Dev.WriteAt(data, off); err != nil {
		h.t.Errorf("write at %d: %v", off, err)
	}
}

func (h *testHost) WriteInode(ino uint32, n ondisk.Inode) {
	blk, off, ok := h.f.InodeLoc(ino)
	if !ok {
		h.t.Fatalf("inode %d has no location", ino)
	}
	h.WriteAt(int64(blk)<<h.f.BlockBits+int64(off), n[:h.f.InodeSize])
}

func (h *testHost) WriteDirBlock(blk uint64, buf []byte, dir uint32) {
	h.WriteAt(int64(blk)<<h.f.BlockBits, buf[:h.f.BlockSize])
}

func (h *testHost) WriteError() error { return nil }
func (h *testHost) Diag(line string)  { h.t.Logf("diag: %s", line) }
func (h *testHost) StoreBitmaps()     {}
func (h *testHost) LoadBitmaps() (*bitmap.Bitmap, *bitmap.Bitmap) {
	return bitmap.New(h.f.BlocksCount), bitmap.New(uint64(h.f.InodesCount) + 1)
}

// DirBlocks finds the directory by its first block.
func (h *testHost) DirBlocks(n ondisk.Inode) ([]int64, []uint64) {
	for _, pb := range h.dirs {
		if len(pb) > 0 && dirFirstBlock(n) == pb[0] {
			l := make([]int64, len(pb))
			for i := range l {
				l[i] = int64(i)
			}
			return l, pb
		}
	}
	h.t.Fatalf("unknown directory")
	return nil, nil
}

// dirFirstBlock is the physical block of an extent-mapped inode's first
// extent (the test directories have a depth-0 tree).
func dirFirstBlock(n ondisk.Inode) uint64 {
	h := ondisk.ExtentHeader(n.IBlock())
	if h.Entries() == 0 {
		return 0
	}
	return h.Leaf(0).Pblk
}

func (h *testHost) Link(uint32, string, uint32, uint8) error {
	return Unsupported("test host: no linear link")
}

func (h *testHost) LoadExtents(uint32, ondisk.Inode) ([]Seg, uint64, error) {
	return nil, 0, Unsupported("test host: no extents")
}

func (h *testHost) RewriteExtents(uint32, ondisk.Inode, []Seg, uint64) error {
	return Unsupported("test host: no extents")
}

func (h *testHost) InlineData(uint32) ([]byte, error)  { return nil, nil }
func (h *testHost) SetInlineData(uint32, []byte) error { return nil }

// openReplay opens img under an overlay that takes the replay's writes.
func openReplay(t *testing.T, img string, dirs map[uint32][]uint64) (*fcReplay, *fs.FS) {
	t.Helper()
	file, err := blockdev.Open(img, true, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { file.Close() })
	f, err := fs.Open(blockdev.NewOverlay(file), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := &testHost{t: t, f: f, dirs: dirs}
	return &fcReplay{h: h, fs: f, sb: ondisk.Superblock(f.SB)}, f
}

// TestDirOpsMatchDebugfs links and unlinks names in an htree directory
// and in a linear one with the replay's dx_link and unlink, and compares
// the directories' blocks with what debugfs's ln and unlink (the
// library's ext2fs_link and ext2fs_unlink) leave on a copy.
func TestDirOpsMatchDebugfs(t *testing.T) {
	img := testfs.MkImage(t, testfs.Spec{
		Size: 16 << 20, FSType: "ext4", BlockSize: 1024, Features: "^metadata_csum",
		OptimizeDirs: true,
		Populate: func(tr *testfs.Tree) {
			tr.Dir("big")
			for i := range 300 {
				tr.File(fmt.Sprintf("big/file-%03d", i), 0)
			}
			tr.Dir("small")
			tr.File("small/a", 0)
			tr.File("small/b", 0)
		},
	})
	ref := testfs.CopyImage(t, img)
	testfs.Debugfs(t, ref,
		"ln /big/file-007 /big/linked-one", "ln /big/file-100 /big/another-name",
		"unlink /big/file-042", "unlink /small/a")

	bigIno, smallIno := testfs.Ino(t, img, "/big"), testfs.Ino(t, img, "/small")
	dirs := map[uint32][]uint64{
		bigIno:   testfs.Blocks(t, img, "/big").Data,
		smallIno: testfs.Blocks(t, img, "/small").Data,
	}
	r, f := openReplay(t, img, dirs)
	dn, err := r.readInode(bigIno)
	if err != nil {
		t.Fatal(err)
	}
	if dn.Flags()&ondisk.FlagIndex == 0 {
		t.Fatalf("/big is not indexed")
	}
	for _, l := range []struct{ name, target string }{
		{"linked-one", "/big/file-007"}, {"another-name", "/big/file-100"},
	} {
		if err := r.link(bigIno, l.name, testfs.Ino(t, img, l.target), ondisk.FTRegFile); err != nil {
			t.Fatalf("link %s: %v", l.name, err)
		}
	}
	if err := r.unlinkName(bigIno, "file-042", 0, false); err != nil {
		t.Fatalf("unlink: %v", err)
	}
	if err := r.unlinkName(smallIno, "a", 0, false); err != nil {
		t.Fatalf("unlink: %v", err)
	}
	if err := r.unlinkName(smallIno, "a", 0, false); !errors.Is(err, ext2fs.ErrDirNoSpace) {
		t.Errorf("unlinking a missing name: %v, want %v", err, ext2fs.ErrDirNoSpace)
	}
	if err := r.link(testfs.Ino(t, img, "/small/b"), "x", 12, ondisk.FTRegFile); !errors.Is(err, ext2fs.ErrNoDirectory) {
		t.Errorf("linking into a file: %v, want %v", err, ext2fs.ErrNoDirectory)
	}
	bs := f.BlockSize
	changed := 0
	for dir, blks := range dirs {
		for _, b := range blks {
			if !bytes.Equal(testfs.ReadAt(t, img, int64(b)*int64(bs), bs), testfs.ReadAt(t, ref, int64(b)*int64(bs), bs)) {
				changed++
			}
			got := make([]byte, bs)
			if err := f.ReadBlock(b, got); err != nil {
				t.Fatal(err)
			}
			want := testfs.ReadAt(t, ref, int64(b)*int64(bs), bs)
			if !bytes.Equal(got, want) {
				t.Errorf("directory %d block %d differs from debugfs's", dir, b)
			}
		}
	}
	if changed < 2 {
		t.Errorf("debugfs changed %d blocks of the directories", changed)
	}
}

// TestSortAndMerge: the list is sorted by logical block, empty extents
// dropped and neighbours that continue each other (logically,
// physically, in initialisation) merged.
func TestSortAndMerge(t *testing.T) {
	got := sortAndMerge([]fcExt{
		{lblk: 10, pblk: 110, len: 5},
		{lblk: 0, pblk: 100, len: 5},
		{lblk: 5, pblk: 105, len: 5},
		{lblk: 20, pblk: 300, len: 0},
		{lblk: 15, pblk: 115, len: 2, uninit: true},
		{lblk: 30, pblk: 400, len: 1},
	})
	want := []fcExt{
		{lblk: 0, pblk: 100, len: 15},
		{lblk: 15, pblk: 115, len: 2, uninit: true},
		{lblk: 30, pblk: 400, len: 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestModify edits an extent list as ext4_modify_extent_list does:
// ranges added, a hole punched splitting an extent, a range replaced.
func TestModify(t *testing.T) {
	f := &fs.FS{BlocksCount: 1 << 20, FirstDataBlock: 0}
	r := &fcReplay{fs: f, blocks: bitmap.New(1 << 20)}
	steps := []struct {
		ex   fcExt
		del  bool
		want []fcExt
	}{
		{fcExt{lblk: 0, pblk: 1000, len: 10}, false, []fcExt{{lblk: 0, pblk: 1000, len: 10}}},
		{fcExt{lblk: 10, pblk: 1010, len: 10}, false, []fcExt{{lblk: 0, pblk: 1000, len: 20}}},
		{fcExt{lblk: 5, len: 3}, true, []fcExt{{lblk: 0, pblk: 1000, len: 5}, {lblk: 8, pblk: 1008, len: 12}}},
		{fcExt{lblk: 4, pblk: 5000, len: 6}, false, []fcExt{
			{lblk: 0, pblk: 1000, len: 4}, {lblk: 4, pblk: 5000, len: 6}, {lblk: 10, pblk: 1010, len: 10}}},
	}
	for i, s := range steps {
		if err := r.modify(s.ex, s.del); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.list, s.want) {
			t.Fatalf("step %d: got %v, want %v", i, r.list, s.want)
		}
	}
	for _, b := range []uint64{1000, 1003, 1010, 1019, 5000, 5005} {
		if !r.blocks.Test(b) {
			t.Errorf("block %d not marked", b)
		}
	}
}

// TestDentry decodes dentry records as e2fsck's tl_to_darg does.
func TestDentry(t *testing.T) {
	rec := func(parent, ino uint32, name string) []byte {
		b := binary.LittleEndian.AppendUint32(nil, parent)
		b = binary.LittleEndian.AppendUint32(b, ino)
		return append(b, name...)
	}
	v := rec(2, 12, "name\x00tail")
	p, ino, name, err := dentry(v, len(v))
	if err != nil || p != 2 || ino != 12 || name != "name" {
		t.Errorf("got %d %d %q %v", p, ino, name, err)
	}
	if _, _, _, err := dentry(v, 7); err == nil {
		t.Errorf("7-byte record accepted")
	} else if _, ok := IsUnsupported(err); !ok {
		t.Errorf("7-byte record: %v, want unsupported", err)
	}
	if _, _, _, err := dentry(v, 3); err != errFCNoMem {
		t.Errorf("3-byte record: %v, want %v", err, errFCNoMem)
	}
	if _, _, _, err := dentry(v, len(v)+1); err == nil {
		t.Errorf("record past the block accepted")
	}
}
