package ext2fs

import (
	"errors"
	"testing"

	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// goalAlloc hands out blocks from the upper half of f in order, stride
// apart (a stride of 2 leaves a hole after each block, so that no two
// allocations are adjacent), recording each goal it was given; it runs
// out after limit blocks.
type goalAlloc struct {
	next, stride uint64
	left         int
	goals        []uint64
	blocks       []uint64
}

func newGoalAlloc(f *fs.FS, stride uint64, limit int) *goalAlloc {
	return &goalAlloc{next: f.BlocksCount / 2, stride: stride, left: limit}
}

func (a *goalAlloc) AllocBlock(goal uint64) (uint64, bool) {
	if a.left == 0 {
		return 0, false
	}
	a.left--
	b := a.next
	a.next += a.stride
	a.goals = append(a.goals, goal)
	a.blocks = append(a.blocks, b)
	return b, true
}

func (a *goalAlloc) FreeBlock(uint64) {}

// newFileInode is a new regular file's inode, extent-mapped or not.
func newFileInode(f *fs.FS, extents bool) ondisk.Inode {
	n := ondisk.Inode(make([]byte, f.InodeSize))
	n.SetMode(ondisk.SIFREG | 0o600)
	n.SetLinksCount(1)
	if extents {
		n.SetFlags(ondisk.FlagExtents)
	}
	return n
}

// TestBmap2BlockMapped maps the first blocks of a new block-mapped file
// one by one with BmapAlloc on a 1 KiB-block ext3 image, through the
// doubly indirect range: the direct slots take the slot before as goal
// (slot 0 the inode's group), the indirect block the last direct slot,
// an indirect block's first entry the block itself and each later one
// the entry before; i_blocks counts every block, mapping blocks
// included, and a lookup without BmapAlloc finds the same blocks read
// back from the device.
func TestBmap2BlockMapped(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext3", Size: 8 << 20, BlockSize: 1024})
	f, _ := openOverlay(t, img)
	a := newGoalAlloc(f, 1, 1<<20)
	fsys := &Filsys{FS: f, IO: devIO{t, f}, Alloc: a}
	const ino = 12
	n := newFileInode(f, false)
	per := uint64(f.BlockSize / 4)
	last := ondisk.NDirBlocks + per + 3 // three blocks into the doubly indirect range
	got := map[uint64]uint64{}
	for l := uint64(0); l < last; l++ {
		pblk, err := Bmap2(fsys, ino, n, l, BmapAlloc)
		if err != nil {
			t.Fatalf("Bmap2(%d): %v", l, err)
		}
		got[l] = pblk
	}
	// Allocation order: 12 direct, the indirect block, its entries, then
	// the doubly indirect block, its first indirect block and entries.
	want := []uint64{FindInodeGoal(f, ino, newFileInode(f, false), 0)}
	for i := 1; i < ondisk.NDirBlocks; i++ {
		want = append(want, a.blocks[i-1])
	}
	ind := a.blocks[ondisk.NDirBlocks]
	want = append(want, a.blocks[ondisk.NDirBlocks-1], ind)
	for i := uint64(1); i < per; i++ {
		want = append(want, a.blocks[ondisk.NDirBlocks+i])
	}
	dind := a.blocks[ondisk.NDirBlocks+1+per]
	want = append(want, ind, dind)
	ind2 := dind + 1
	want = append(want, ind2, ind2+1, ind2+2)
	if len(a.goals) != len(want) {
		t.Fatalf("%d allocations, want %d", len(a.goals), len(want))
	}
	for i := range want {
		if a.goals[i] != want[i] {
			t.Errorf("allocation %d: goal %d, want %d", i, a.goals[i], want[i])
		}
	}
	if n.Block(ondisk.IndBlock) != uint32(ind) || n.Block(ondisk.DindBlock) != uint32(dind) {
		t.Errorf("i_block[12,13] = %d,%d; want %d,%d", n.Block(ondisk.IndBlock), n.Block(ondisk.DindBlock), ind, dind)
	}
	if b, w := StatIBlocks(f, n), uint64(len(a.blocks))*2; b != w {
		t.Errorf("i_blocks %d, want %d", b, w)
	}
	for l, pblk := range got {
		if p, err := Bmap2(fsys, ino, n, l, 0); err != nil || p != pblk {
			t.Errorf("lookup %d = %d, %v; want %d", l, p, err, pblk)
		}
	}
	if p, err := Bmap2(fsys, ino, n, last+per, 0); err != nil || p != 0 {
		t.Errorf("hole lookup = %d, %v; want 0", p, err)
	}
	if _, err := Bmap2(fsys, ino, n, ondisk.NDirBlocks+per+per*per+per*per*per, BmapAlloc); err != ErrFileTooBig {
		t.Errorf("past the triply indirect range: %v, want ErrFileTooBig", err)
	}
}

// TestBmap2Extents maps a new extent file's blocks with BmapAlloc on a
// 1 KiB-block ext4 image: contiguous blocks grow one extent; blocks two
// apart make an extent each, and the fifth splits the root into a leaf
// block (allocated with the first extent's block less one as goal); each
// data block's goal is the block of the logical block before it, and
// i_blocks counts the leaf.
func TestBmap2Extents(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 8 << 20, BlockSize: 1024, Features: "^metadata_csum"})
	f, _ := openOverlay(t, img)
	const ino = 12

	a := newGoalAlloc(f, 1, 100)
	fsys := &Filsys{FS: f, IO: devIO{t, f}, Alloc: a}
	n := newFileInode(f, true)
	for l := uint64(0); l < 8; l++ {
		if _, err := Bmap2(fsys, ino, n, l, BmapAlloc); err != nil {
			t.Fatalf("Bmap2(%d): %v", l, err)
		}
	}
	h := ondisk.ExtentHeader(n.IBlock())
	if h.Depth() != 0 || h.Entries() != 1 || h.Leaf(0).Len != 8 || h.Leaf(0).Pblk != a.blocks[0] {
		t.Errorf("contiguous: depth %d, %d entries, first %+v", h.Depth(), h.Entries(), h.Leaf(0))
	}

	a = newGoalAlloc(f, 2, 100)
	fsys.Alloc = a
	n = newFileInode(f, true)
	const nblk = 6
	for l := uint64(0); l < nblk; l++ {
		pblk, err := Bmap2(fsys, ino, n, l, BmapAlloc)
		if err != nil {
			t.Fatalf("Bmap2(%d): %v", l, err)
		}
		if p, err := Bmap2(fsys, ino, n, l, 0); err != nil || p != pblk {
			t.Errorf("lookup %d = %d, %v; want %d", l, p, err, pblk)
		}
	}
	h = ondisk.ExtentHeader(n.IBlock())
	if h.Depth() != 1 || h.Entries() != 1 {
		t.Fatalf("fragmented: depth %d, %d root entries; want 1, 1", h.Depth(), h.Entries())
	}
	// Allocations: data 0..3, data 4, the leaf, data 5.
	leaf := a.blocks[5]
	if h.Idx(0).Leaf != leaf {
		t.Errorf("root index points at %d, want the leaf %d", h.Idx(0).Leaf, leaf)
	}
	wantGoals := []uint64{0, a.blocks[0], a.blocks[1], a.blocks[2], a.blocks[3], a.blocks[0] - 1, a.blocks[4]}
	for i, g := range wantGoals {
		if a.goals[i] != g {
			t.Errorf("allocation %d: goal %d, want %d", i, a.goals[i], g)
		}
	}
	buf := make([]byte, f.BlockSize)
	if err := f.ReadBlock(leaf, buf); err != nil {
		t.Fatal(err)
	}
	if lh := ondisk.ExtentHeader(buf); lh.Verify() != nil || lh.Entries() != nblk {
		t.Errorf("leaf: %v, %d entries; want %d", lh.Verify(), lh.Entries(), nblk)
	}
	if b, w := StatIBlocks(f, n), uint64(nblk+1)*2; b != w {
		t.Errorf("i_blocks %d, want %d", b, w)
	}

	// An allocator with nothing left.
	fsys.Alloc = newGoalAlloc(f, 1, 0)
	if _, err := Bmap2(fsys, ino, n, nblk, BmapAlloc); !errors.Is(err, ErrBlockAllocFail) {
		t.Errorf("full: %v, want ErrBlockAllocFail", err)
	}
	if _, err := Bmap2(fsys, ino, n, 1<<32, BmapAlloc); err != ErrFileTooBig {
		t.Errorf("block 2^32: %v, want ErrFileTooBig", err)
	}
}

// TestBmap2ImpliedCluster maps logical blocks 0 and 2 of a new extent
// file with 4-block clusters: the first allocates a cluster, the second
// takes its block in the same cluster without allocating.
func TestBmap2ImpliedCluster(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 1024, ClusterSize: 4096, Features: "bigalloc,^metadata_csum"})
	f, _ := openOverlay(t, img)
	if f.ClusterBits != 2 {
		t.Fatalf("cluster bits %d, want 2", f.ClusterBits)
	}
	a := newGoalAlloc(f, 4, 10)
	a.next &^= 3
	fsys := &Filsys{FS: f, IO: devIO{t, f}, Alloc: a}
	n := newFileInode(f, true)
	p0, err := Bmap2(fsys, 12, n, 0, BmapAlloc)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := Bmap2(fsys, 12, n, 2, BmapAlloc)
	if err != nil {
		t.Fatal(err)
	}
	if p0 != a.blocks[0] || p2 != p0+2 || len(a.blocks) != 1 {
		t.Errorf("blocks %d, %d after %d allocations; want %d, %d after 1", p0, p2, len(a.blocks), a.blocks[0], a.blocks[0]+2)
	}
	if b, w := StatIBlocks(f, n), uint64(8); b != w {
		t.Errorf("i_blocks %d, want %d (one cluster)", b, w)
	}
}
