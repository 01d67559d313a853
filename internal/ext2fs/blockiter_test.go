package ext2fs

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"gofsck/internal/blockdev"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// blockMapImage is a 1 KiB-block ext2 image holding /big, a sparse
// block-mapped file with one block every 128 KiB up to 80 MiB: direct
// blocks, an indirect, a doubly and a triply indirect tree.
func blockMapImage(t *testing.T) (img string, ino uint32) {
	t.Helper()
	testfs.RequireE2fsprogs(t)
	img = testfs.MkImage(t, testfs.Spec{FSType: "ext2", Size: 16 << 20, BlockSize: 1024,
		Populate: func(tr *testfs.Tree) {
			tr.Sparse("big", 80<<20, 1024, 128<<10)
			tr.FileData("small", bytes.Repeat([]byte{1}, 3*1024))
		}})
	return img, testfs.Ino(t, img, "/big")
}

// openIter opens img on an overlay, so that tests may corrupt it, and
// returns an iterator over it with the inode.
func openIter(t *testing.T, img string, ino uint32) (*BlockIter, ondisk.Inode, *blockdev.Overlay) {
	t.Helper()
	f, ov := openOverlay(t, img)
	n := make(ondisk.Inode, f.InodeSize)
	if err := f.ReadInode(ino, n, make([]byte, f.BlockSize)); err != nil {
		t.Fatal(err)
	}
	return &BlockIter{FS: f, IO: devIO{t, f}}, n, ov
}

// visitRec is one callback.
type visitRec struct {
	blk    uint64
	cnt    int64
	ref    uint64
	offset int
}

func record(v *[]visitRec) BlockFunc {
	return func(blk *uint64, cnt int64, ref uint64, off int) int {
		*v = append(*v, visitRec{*blk, cnt, ref, off})
		return 0
	}
}

func TestBlockIterMatchesDebugfs(t *testing.T) {
	img, ino := blockMapImage(t)
	bm := testfs.Blocks(t, img, "/big")
	if len(bm.TInd) != 1 {
		t.Fatalf("want a TIND block, have %v", bm.TInd)
	}
	for _, tc := range []struct {
		name     string
		flags    BlockFlags
		wantMeta bool // mapping blocks are visited
		metaLast bool // the IND block comes after its data
	}{
		{"pre-order", 0, true, false},
		{"depth-traverse", BlockFlagDepthTraverse, true, true},
		{"data-only", BlockFlagDataOnly, false, false},
		{"read-only", BlockFlagReadOnly, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			it, n, _ := openIter(t, img, ino)
			it.Flags = tc.flags
			var v []visitRec
			changed, err := it.Iterate(n, record(&v))
			if err != nil || changed {
				t.Fatalf("Iterate = %v, %v", changed, err)
			}
			var data, meta []uint64
			for _, r := range v {
				if r.cnt >= 0 {
					data = append(data, r.blk)
				} else {
					meta = append(meta, r.blk)
				}
			}
			if !slices.Equal(data, bm.Data) {
				t.Errorf("data blocks %v, debugfs %v", data, bm.Data)
			}
			if !tc.wantMeta {
				if len(meta) != 0 {
					t.Errorf("mapping blocks visited: %v", meta)
				}
				return
			}
			slices.Sort(meta)
			want := slices.Sorted(slices.Values(bm.Meta))
			if !slices.Equal(meta, want) {
				t.Errorf("mapping blocks %v, debugfs %v", meta, want)
			}
			// The IND block is before (or after) the data it maps.
			pos := slices.IndexFunc(v, func(r visitRec) bool { return r.cnt == BlockCountInd && r.ref == 0 })
			first := slices.IndexFunc(v, func(r visitRec) bool { return r.cnt == ondisk.NDirBlocks || (r.ref == v[pos].blk && r.cnt >= 0) })
			if (pos > first) != tc.metaLast {
				t.Errorf("IND visited at %d, its first data block at %d", pos, first)
			}
			if v[pos].offset != ondisk.IndBlock {
				t.Errorf("IND's ref offset %d", v[pos].offset)
			}
		})
	}
}

func TestBlockIterAppendAndChanges(t *testing.T) {
	img, _ := blockMapImage(t)
	small := testfs.Ino(t, img, "/small")
	it, n, _ := openIter(t, img, small)
	it.Flags = BlockFlagAppend
	var v []visitRec
	if _, err := it.Iterate(n, record(&v)); err != nil {
		t.Fatal(err)
	}
	// 12 direct slots, then the three zero mapping pointers.
	if len(v) != 15 || v[3].blk != 0 || v[12].cnt != BlockCountInd || v[13].cnt != BlockCountDind || v[14].cnt != BlockCountTind {
		t.Fatalf("visits %v", v)
	}
	if v[13].blk != 0 || v[14].offset != ondisk.TindBlock {
		t.Fatalf("visits %v", v)
	}

	// A change under BLOCK_FLAG_READ_ONLY fails the walk.
	it, n, _ = openIter(t, img, small)
	it.Flags = BlockFlagReadOnly
	changed, err := it.Iterate(n, func(blk *uint64, cnt int64, _ uint64, _ int) int { *blk = 7; return BlockChanged })
	if !errors.Is(err, ErrROBlockIterate) || !changed {
		t.Fatalf("read-only change: %v, %v", changed, err)
	}

	// A change is stored in i_block and reported; zeroing without
	// BLOCK_CHANGED clears the pointer in the copy only.
	it, n, _ = openIter(t, img, small)
	changed, err = it.Iterate(n, func(blk *uint64, cnt int64, _ uint64, _ int) int {
		*blk = 0
		if cnt == 1 {
			return BlockChanged
		}
		return 0
	})
	if err != nil || !changed || n.Block(0) != 0 || n.Block(1) != 0 {
		t.Fatalf("changes: %v, %v, i_block %d %d", changed, err, n.Block(0), n.Block(1))
	}
}

// TestBlockIterBadMapBlocks corrupts mapping pointers: the library's
// error for the level, no count advance over the failed block, and the
// pending error cleared by a later good read.
func TestBlockIterBadMapBlocks(t *testing.T) {
	img, ino := blockMapImage(t)
	const bad = 1 << 30
	for _, tc := range []struct {
		name string
		// corrupt changes i_block or the DIND block (given its buffer).
		slot     int // i_block slot to set bad, or -1
		dindSlot int // DIND slot to set bad, or -1
		flags    BlockFlags
		wantErr  error
		stopped  bool // no TIND data visited
	}{
		{"tind", ondisk.TindBlock, -1, 0, ErrBadTindBlock, false},
		{"ind-cleared-by-dind-read", ondisk.IndBlock, -1, 0, nil, false},
		{"ind-stop-on-error", ondisk.IndBlock, -1, BlockFlagStopOnError, ErrBadIndBlock, true},
		{"dind-child-cleared-by-tind-read", -1, 1, 0, nil, false},
		{"dind-child-stop", -1, 1, BlockFlagStopOnError, ErrBadIndBlock, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			it, n, ov := openIter(t, img, ino)
			f := it.FS
			if tc.slot >= 0 {
				n.SetBlock(tc.slot, bad)
			}
			if tc.dindSlot >= 0 {
				buf := ondisk.MapBlock(make([]byte, f.BlockSize))
				dind := uint64(n.Block(ondisk.DindBlock))
				if err := f.ReadBlock(dind, buf); err != nil {
					t.Fatal(err)
				}
				buf.SetPtr(tc.dindSlot, bad)
				if _, err := ov.WriteAt(buf, int64(dind)<<f.BlockBits); err != nil {
					t.Fatal(err)
				}
			}
			it.Flags = tc.flags
			var v []visitRec
			_, err := it.Iterate(n, record(&v))
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			// The last data block is under the TIND block; the count
			// does not advance over a failed block, so after one it
			// is visited with a lower logical number.
			want := testfs.Blocks(t, img, "/big").Data
			last := want[len(want)-1]
			i := slices.IndexFunc(v, func(r visitRec) bool { return r.cnt >= 0 && r.blk == last })
			if (i < 0) != (tc.stopped || tc.slot == ondisk.TindBlock) {
				t.Fatalf("last block visited at %d", i)
			}
			if i >= 0 {
				per := int64(f.BlockSize / 4)
				shift := int64(0)
				switch {
				case tc.slot == ondisk.IndBlock:
					shift = per
				case tc.dindSlot >= 0:
					shift = per * per // the DIND's walk ended at its bad slot
				}
				wantCnt := lastLblk - shift + dindRest(tc.dindSlot, per)
				if v[i].cnt != wantCnt {
					t.Fatalf("last block numbered %d, want %d", v[i].cnt, wantCnt)
				}
			}
			for _, r := range v {
				if r.cnt >= 0 && r.blk == 0 {
					t.Errorf("hole visited: %+v", r)
				}
			}
		})
	}
}

// lastLblk is /big's last logical block (80 MiB in 1 KiB blocks, the
// last chunk one stride before the end).
const lastLblk = (80<<20 - 128<<10) / 1024

// dindRest is what a DIND walk ended at slot k did map: slots 0..k-1
// advanced the count (k*per*per was taken off as a whole).
func dindRest(k int, per int64) int64 {
	if k < 0 {
		return 0
	}
	return int64(k) * per
}

func TestBlockIterInlineAndLarge(t *testing.T) {
	f := &fs.FS{BlockSize: 1024, BlocksCount: 100}
	it := &BlockIter{FS: f}
	n := make(ondisk.Inode, 128)
	n.SetFlags(ondisk.FlagInlineData)
	if _, err := it.Iterate(n, nil); err != ErrInlineDataCantIterate {
		t.Errorf("inline data: %v", err)
	}
	n.SetFlags(0)
	n.SetMode(0o100644)
	n.SetSize(1 << 33)
	it.Flags = BlockFlagNoLarge
	if _, err := it.Iterate(n, nil); err != ErrFileTooBig {
		t.Errorf("large file: %v", err)
	}
}

// TestBlockIterAllocs: a walk allocates nothing once the iterator's
// buffers exist (pass 1 runs one per inode).
func TestBlockIterAllocs(t *testing.T) {
	img, ino := blockMapImage(t)
	it, n, _ := openIter(t, img, ino)
	count := 0
	fn := func(blk *uint64, cnt int64, _ uint64, _ int) int { count++; return 0 }
	it.Iterate(n, fn)
	if a := testing.AllocsPerRun(5, func() { it.Iterate(n, fn) }); a != 0 {
		t.Errorf("%v allocations a walk", a)
	}
	if count == 0 {
		t.Fatal("no visits")
	}
}
