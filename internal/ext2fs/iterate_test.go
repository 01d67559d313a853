package ext2fs

import (
	"slices"
	"testing"

	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// extentIterImage is a 1 KiB-block ext4 image (metadata_csum) holding
// /x, a sparse file whose extent tree is the root over three leaf blocks.
func extentIterImage(t *testing.T) (img string, ino uint32, bm testfs.BlockMap) {
	t.Helper()
	testfs.RequireE2fsprogs(t)
	img = testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 8 << 20, BlockSize: 1024,
		Features: "metadata_csum",
		Populate: func(tr *testfs.Tree) { tr.Sparse("x", 200*3*1024, 1024, 3*1024) }})
	bm = testfs.Blocks(t, img, "/x")
	if len(bm.ETB) != 3 {
		t.Fatalf("want three extent blocks, have %v", bm.ETB)
	}
	return img, testfs.Ino(t, img, "/x"), bm
}

// walk runs IterateInode over ino with flags, returning the visits.
func walk(t *testing.T, fsys *Filsys, it *BlockIter, ino uint32, flags BlockFlags) ([]visitRec, error) {
	t.Helper()
	var v []visitRec
	it.Flags = flags
	changed, err := it.IterateInode(fsys, ino, readInode(t, fsys, ino), record(&v))
	if changed {
		t.Errorf("changed reported")
	}
	return v, err
}

func TestIterateInodeDispatchAndFlags(t *testing.T) {
	img, ino, bm := extentIterImage(t)
	fsys := openRW(t, img)
	it := &BlockIter{FS: fsys.FS, IO: fsys.IO}
	v, err := walk(t, fsys, it, ino, 0)
	if err != nil {
		t.Fatal(err)
	}
	var data, meta []uint64
	for _, r := range v {
		if r.cnt < 0 {
			meta = append(meta, r.blk)
		} else {
			data = append(data, r.blk)
		}
	}
	if !slices.Equal(data, bm.Data) || !slices.Equal(meta, bm.ETB) {
		t.Fatalf("extent walk: data %v meta %v, debugfs %v %v", data, meta, bm.Data, bm.ETB)
	}
	// BLOCK_FLAG_DATA_ONLY drops the tree blocks.
	if v, err = walk(t, fsys, it, ino, BlockFlagDataOnly); err != nil || len(v) != len(bm.Data) {
		t.Errorf("data-only: %d visits, %v", len(v), err)
	}
	// A block-mapped inode goes to Iterate.
	mimg, mino := blockMapImage(t)
	mfs := openRW(t, mimg)
	mit := &BlockIter{FS: mfs.FS, IO: mfs.IO}
	var mv []visitRec
	mit.Iterate(readInode(t, mfs, mino), record(&mv))
	if v, err = walk(t, mfs, mit, mino, 0); err != nil || !slices.Equal(v, mv) {
		t.Errorf("block map: %d visits, %v; Iterate %d", len(v), err, len(mv))
	}
	// BLOCK_FLAG_READ_ONLY: a change ends the walk, nothing written.
	n := readInode(t, fsys, ino)
	it.Flags = BlockFlagReadOnly
	calls := 0
	_, err = it.IterateInode(fsys, ino, n, func(blk *uint64, cnt int64, _ uint64, _ int) int {
		calls++
		if cnt >= 0 {
			*blk = 0
			return BlockChanged
		}
		return 0
	})
	if err != ErrROBlockIterate || calls != 2 { // the first leaf, then its first block
		t.Errorf("read-only: %v after %d calls", err, calls)
	}
	if _, err := walk(t, fsys, it, ino, 0); err != nil {
		t.Fatal(err)
	}
	// Inline data is refused.
	n.SetFlags(n.Flags() | ondisk.FlagInlineData)
	if _, err := it.IterateInode(fsys, ino, n, nil); err != ErrInlineDataCantIterate {
		t.Errorf("inline: %v", err)
	}
}

// TestIterateInodeBadNodes: a child out of range or whose checksum fails
// ends the library's walk; BlockFlagSkipBadNode goes on past the first,
// BlockFlagIgnoreCsum past the second.
func TestIterateInodeBadNodes(t *testing.T) {
	img, ino, bm := extentIterImage(t)
	fsys := openRW(t, img)
	it := &BlockIter{FS: fsys.FS, IO: fsys.IO}
	full, _ := walk(t, fsys, it, ino, 0)

	// The second leaf's checksum: bytes after its entries change.
	leaf := make([]byte, fsys.FS.BlockSize)
	fsys.IO.ReadBlock(bm.ETB[1], leaf)
	orig := slices.Clone(leaf)
	leaf[len(leaf)-1] ^= 0xff
	fsys.IO.WriteBlock(bm.ETB[1], leaf)
	v, err := walk(t, fsys, it, ino, BlockFlagSkipBadNode)
	if err != ErrExtentCsumInvalid || v[len(v)-1].blk != bm.ETB[1] {
		t.Errorf("bad checksum: %v, last visit %v", err, v[len(v)-1])
	}
	if v, err = walk(t, fsys, it, ino, BlockFlagIgnoreCsum); err != nil || len(v) != len(full) {
		t.Errorf("checksum ignored: %d visits of %d, %v", len(v), len(full), err)
	}
	fsys.IO.WriteBlock(bm.ETB[1], orig)

	// The root's second index entry out of range.
	n := readInode(t, fsys, ino)
	root := ondisk.ExtentHeader(n.IBlock())
	root.Entry(1).SetLeaf(fsys.FS.BlocksCount + 5)
	it.Flags = 0
	v = nil
	if _, err := it.IterateInode(fsys, ino, n, record(&v)); err != ErrShortRead {
		t.Errorf("out of range: %v", err)
	}
	leaf0 := 0
	for _, r := range full[1:] {
		if r.cnt < 0 {
			break
		}
		leaf0++
	}
	if len(v) != leaf0+2 {
		t.Errorf("out of range: %d visits, want %d", len(v), leaf0+2)
	}
	it.Flags = BlockFlagSkipBadNode
	v = nil
	if _, err := it.IterateInode(fsys, ino, n, record(&v)); err != nil || len(v) != len(full)-countLeaf(full, 1) {
		t.Errorf("skipped: %d visits of %d, %v", len(v), len(full), err)
	}

	// A bad root maps nothing and is left alone.
	root.SetMagic(0)
	before := slices.Clone(n)
	v = nil
	if _, err := it.IterateInode(fsys, ino, n, record(&v)); err != nil || len(v) != 0 || !slices.Equal(before, n) {
		t.Errorf("bad root: %v, %v", v, err)
	}
	// Without the flag too, as the library (the handle's error is lost),
	// but an all-zero i_block is given an empty root.
	it.Flags = 0
	if _, err := it.IterateInode(fsys, ino, n, record(&v)); err != nil || len(v) != 0 {
		t.Errorf("bad root without the flag: %v, %v", v, err)
	}
	clear(n.IBlock())
	if _, err := it.IterateInode(fsys, ino, n, record(&v)); err != nil || len(v) != 0 || root.Magic() != ondisk.ExtentMagic {
		t.Errorf("empty root: %v, %v", v, err)
	}
}

// countLeaf is the number of data visits under the k-th tree block of a
// pre-order walk.
func countLeaf(v []visitRec, k int) int {
	seen, c := -1, 0
	for _, r := range v {
		if r.cnt < 0 {
			seen++
			continue
		}
		if seen == k {
			c++
		}
	}
	return c
}

// TestIterateInodeAllocs: the extent walk allocates nothing once the
// iterator's handle is as deep as the tree (pass 1B walks every inode).
func TestIterateInodeAllocs(t *testing.T) {
	img, ino, _ := extentIterImage(t)
	fsys := openRW(t, img)
	it := &BlockIter{FS: fsys.FS, IO: fsys.IO, Flags: BlockFlagReadOnly | BlockFlagSkipBadNode}
	n := readInode(t, fsys, ino)
	fn := func(*uint64, int64, uint64, int) int { return 0 }
	it.IterateInode(fsys, ino, n, fn)
	if a := testing.AllocsPerRun(5, func() { it.IterateInode(fsys, ino, n, fn) }); a != 0 {
		t.Errorf("%v allocations a walk", a)
	}
}
