package ext2fs

import (
	"fmt"
	"testing"
	"time"

	"gofsck/internal/blockdev"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// setBmapRig is the library's view of an Overlay over a new 1 KiB-block
// ext4 image, and the region of blocks the trees are built in.
type setBmapRig struct {
	f    *fs.FS
	fsys *Filsys
	dev  *blockdev.Overlay
	base uint64 // first block of the free region used for nodes
}

func newSetBmapRig(t *testing.T) *setBmapRig {
	t.Helper()
	testfs.RequireE2fsprogs(t)
	// Without metadata_csum: the nodes written here carry no checksum.
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 8 << 20, BlockSize: 1024, Features: "^metadata_csum"})
	f, ov := openOverlay(t, img)
	fsys := &Filsys{FS: f, IO: devIO{t, f}, Alloc: counterAlloc(f)}
	return &setBmapRig{f: f, fsys: fsys, dev: ov, base: f.BlocksCount / 2}
}

// node writes a tree node (header and entries) at block blk; an entry is
// {lblk, len or 0 for an index, pblk}.
func (r *setBmapRig) node(t *testing.T, blk uint64, depth, max int, entries [][3]uint64) {
	buf := make([]byte, r.f.BlockSize)
	putNode(buf, depth, max, entries)
	if _, err := r.dev.WriteAt(buf, int64(blk)<<r.f.BlockBits); err != nil {
		t.Fatal(err)
	}
}

func putNode(buf []byte, depth, max int, entries [][3]uint64) {
	h := ondisk.ExtentHeader(buf)
	h.SetMagic(ondisk.ExtentMagic)
	h.SetEntries(uint16(len(entries)))
	h.SetMax(uint16(max))
	h.SetDepth(uint16(depth))
	for i, e := range entries {
		ent := h.Entry(i)
		ent.SetLblk(uint32(e[0]))
		if depth > 0 {
			ent.SetLeaf(e[2])
			continue
		}
		ent.SetRawLen(uint16(e[1]))
		ent.SetStart(e[2])
	}
}

// inode returns an extent-mapped inode whose root is the given node.
func (r *setBmapRig) inode(depth int, entries [][3]uint64) ondisk.Inode {
	n := ondisk.Inode(make([]byte, r.f.InodeSize))
	n.SetMode(0o100644)
	n.SetFlags(ondisk.FlagExtents)
	n.SetSize(1 << 30)
	putNode(n.IBlock(), depth, 4, entries)
	return n
}

// handle opens the library's handle on n with an allocator over the
// upper quarter of the filesystem and no-op frees.
func (r *setBmapRig) handle(t *testing.T, n ondisk.Inode) *ExtentHandle {
	t.Helper()
	x, err := OpenExtent(r.fsys, 12, n)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	x.SetAllocator(counterAlloc(r.f))
	return x
}

// leafMap lists the leaf extents the tree of n maps, walking with the
// handle (lblk -> pblk for each block), and fails on a walk error.
func leafMap(t *testing.T, x *ExtentHandle) map[uint64]uint64 {
	t.Helper()
	m := map[uint64]uint64{}
	ext, err := x.Get(ExtentRoot)
	for steps := 0; err == nil && steps < 100000; steps++ {
		if ext.Flags&ExtentFlagLeaf != 0 {
			for k := uint64(0); k < uint64(ext.Len); k++ {
				m[ext.Lblk+k] = ext.Pblk + k
			}
		}
		ext, err = x.Get(ExtentNext)
	}
	if err != ErrExtentNoNext {
		t.Fatalf("walk: %v", err)
	}
	return m
}

// TestSetBmapGrowsTree maps 1000 scattered blocks one by one into an
// empty extent tree (each its own extent, inserted in increasing and in
// decreasing order), then remaps and unmaps some: every mapping must
// read back as set, through a tree that grew to depth 2.
func TestSetBmapGrowsTree(t *testing.T) {
	r := newSetBmapRig(t)
	for _, reverse := range []bool{false, true} {
		t.Run(fmt.Sprintf("reverse=%v", reverse), func(t *testing.T) {
			n := ondisk.Inode(make([]byte, r.f.InodeSize))
			n.SetSize(1 << 30)
			x := r.handle(t, n)
			want := map[uint64]uint64{}
			for i := uint64(0); i < 1000; i++ {
				l := 2 * i
				if reverse {
					l = 2 * (999 - i)
				}
				p := r.base + 2*i
				if err := x.SetBmap(l, p, false); err != nil {
					t.Fatalf("map %d: %v", l, err)
				}
				want[l] = p
			}
			if x.maxDepth < 2 {
				t.Errorf("depth %d after 1000 extents, want 2", x.maxDepth)
			}
			// Remap a block in the middle of nothing and join runs,
			// unmap others.
			for _, l := range []uint64{1, 3, 501} {
				p := want[l-1] + 1
				if err := x.SetBmap(l, p, false); err != nil {
					t.Fatalf("remap %d: %v", l, err)
				}
				want[l] = p
			}
			for _, l := range []uint64{0, 10, 1998, 1000} {
				if err := x.SetBmap(l, 0, false); err != nil {
					t.Fatalf("unmap %d: %v", l, err)
				}
				delete(want, l)
			}
			got := leafMap(t, x)
			if len(got) != len(want) {
				t.Errorf("%d blocks mapped, want %d", len(got), len(want))
			}
			for l, p := range want {
				if got[l] != p {
					t.Errorf("block %d maps to %d, want %d", l, got[l], p)
				}
			}
		})
	}
}

// TestSetBmapHostileTrees runs set_bmap and the block iterator (changing
// every block it meets) on trees no checker would accept: index cycles,
// a root deeper than any real tree, one node shared by every entry of
// its parents, entries out of order and overlapping, a leaf claiming
// more entries than its block holds. Each must end (an error is fine)
// without a panic, in bounded time.
func TestSetBmapHostileTrees(t *testing.T) {
	r := newSetBmapRig(t)
	b := r.base
	cases := []struct {
		name  string
		depth int
		root  [][3]uint64
		build func(t *testing.T)
	}{
		{"self-cycle", 2, [][3]uint64{{0, 0, b}}, func(t *testing.T) {
			r.node(t, b, 1, 84, [][3]uint64{{0, 0, b}})
		}},
		{"two-cycle", 3, [][3]uint64{{0, 0, b}}, func(t *testing.T) {
			r.node(t, b, 2, 84, [][3]uint64{{0, 0, b + 1}})
			r.node(t, b+1, 1, 84, [][3]uint64{{0, 0, b}})
		}},
		{"too-deep", 60000, [][3]uint64{{0, 0, b}}, func(t *testing.T) {
			r.node(t, b, 0, 84, [][3]uint64{{0, 3, b + 10}})
		}},
		{"shared-child", 4, [][3]uint64{{0, 0, b}, {100, 0, b}, {200, 0, b}, {300, 0, b}}, func(t *testing.T) {
			// Every entry of b points to b+1, of b+1 to b+2, of b+2
			// to the leaf b+3: 4·84³ paths to the same leaf.
			var leaf [][3]uint64
			for i := uint64(0); i < 84; i++ {
				leaf = append(leaf, [3]uint64{i * 10, 2, b + 100 + 2*i})
			}
			for k := uint64(0); k < 3; k++ {
				var idx [][3]uint64
				for i := uint64(0); i < 84; i++ {
					idx = append(idx, [3]uint64{i * 10, 0, b + k + 1})
				}
				r.node(t, b+k, int(3-k), 84, idx)
			}
			r.node(t, b+3, 0, 84, leaf)
		}},
		{"out-of-order", 1, [][3]uint64{{50, 0, b}, {10, 0, b + 1}}, func(t *testing.T) {
			r.node(t, b, 0, 84, [][3]uint64{{40, 5, b + 200}, {0, 30, b + 300}, {20, 30, b + 250}, {20, 1, b + 100}})
			r.node(t, b+1, 0, 84, [][3]uint64{{100, 3, b + 400}, {5, 1, b + 410}})
		}},
		{"leaf-overfull", 1, [][3]uint64{{0, 0, b}}, func(t *testing.T) {
			buf := make([]byte, r.f.BlockSize)
			putNode(buf, 0, 84, nil)
			h := ondisk.ExtentHeader(buf)
			h.SetEntries(84)
			for i := 0; i < 84; i++ {
				e := h.Entry(i)
				e.SetLblk(uint32(i * 7))
				e.SetRawLen(0x8000 + uint16(i%3) + 1)
				e.SetStart(b + 500 + uint64(i)*4)
			}
			r.dev.WriteAt(buf, int64(b)<<r.f.BlockBits)
		}},
		{"zero-length", 0, [][3]uint64{{0, 0, b}, {0, 0, b + 5}, {7, 32768, b}, {3, 1, 0}}, func(*testing.T) {}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.build(t)
			done := make(chan string, 1)
			go func() {
				defer func() {
					if p := recover(); p != nil {
						done <- fmt.Sprint("panic: ", p)
					}
				}()
				n := r.inode(0, nil)
				putNode(n.IBlock(), tc.depth, 4, tc.root)
				// A walk that changes nothing visits every path.
				x, err := OpenExtent(r.fsys, 12, append(ondisk.Inode(nil), n...))
				if err != nil {
					done <- ""
					return
				}
				visits := 0
				_, err = x.Iterate(0, func(*uint64, int64) int { visits++; return 0 })
				t.Logf("walk: %d visits, %v", visits, err)
				if x, err = OpenExtent(r.fsys, 12, n); err != nil {
					done <- err.Error()
					return
				}
				x.SetAllocator(counterAlloc(r.f))
				for _, l := range []uint64{0, 1, 5, 21, 45, 101, 7, 1 << 31} {
					x.SetBmap(l, b+1000+l%1000, false)
					x.SetBmap(l+1, 0, false)
					x.SetBmap(l+2, b+2000+l%1000, true)
				}
				k := uint64(0)
				x.Iterate(0, func(blk *uint64, blockcnt int64) int {
					k++
					if k%3 == 0 {
						*blk = 0
					} else {
						*blk = b + 3000 + k%500
					}
					return BlockChanged
				})
				done <- ""
			}()
			select {
			case msg := <-done:
				if msg != "" {
					t.Fatal(msg)
				}
			case <-time.After(10 * time.Minute): // catches a loop only
				t.Fatal("set_bmap or the iterator did not finish in 10 minutes")
			}
		})
	}
}
