package check

import (
	"bytes"
	"testing"

	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// TestCalculateTreeLikeE2fsck rebuilds the root of a directory e2fsck -D
// indexed from the leaves and hashes e2fsck wrote, and compares it with
// e2fsck's root block.
func TestCalculateTreeLikeE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 8 << 20, BlockSize: 1024,
		Populate: func(tr *testfs.Tree) { tr.ManyFiles("d", 300) }})
	testfs.E2fsckInPlace(t, img, "-fyD")
	bs := int(testfs.BlockSize(t, img))
	bm := testfs.Blocks(t, img, "/d")
	read := func(b uint64) []byte { return testfs.ReadAt(t, img, int64(b)*int64(bs), bs) }
	want := read(bm.Data[0])
	_, count, _ := ondisk.DxCountLimit(want, 32)
	if count < 2 {
		t.Fatalf("root has %d leaves", count)
	}
	out := [][]byte{make([]byte, bs)}
	hashes := []uint32{0}
	for i := 0; i < count; i++ {
		h, blk, _ := ondisk.DxEntry(want, 32, i)
		if int(blk) != len(out) {
			t.Fatalf("entry %d names block %d", i, blk)
		}
		out = append(out, read(bm.Data[blk]))
		hashes = append(hashes, h)
	}
	dotdot, _ := ondisk.DecodeDirent(want, 12, bs)
	info, _ := ondisk.DecodeDxRootInfo(want)
	got, err := calculateTree(out, hashes, testfs.Ino(t, img, "/d"), dotdot.Ino, ondisk.FTDir, info.HashVersion, true)
	if err != nil || len(got) != count+1 {
		t.Fatalf("CalculateTree: %d blocks, %v", len(got), err)
	}
	// The checksum in the dx tail is the caller's (written with the block).
	if end := 32 + (bs-40)/8*8; !bytes.Equal(got[0][:end], want[:end]) {
		t.Errorf("root differs:\n got %x\nwant %x", got[0][:64], want[:64])
	}
}

// TestCalculateTreeInterior: leaves past the root's limit get interior
// nodes of nodeLimit entries each; past two levels the tree is refused.
func TestCalculateTreeInterior(t *testing.T) {
	const bs = 1024
	rootLimit, nodeLimit := (bs-32)/8, (bs-8)/8
	leaves := rootLimit + 5
	out := make([][]byte, leaves+1)
	hashes := make([]uint32, leaves+1)
	for i := range out {
		out[i] = make([]byte, bs)
		hashes[i] = uint32(i) << 20
	}
	got, err := calculateTree(out, hashes, 2, 2, 0, 1, false)
	if err != nil || len(got) != leaves+1+2 {
		t.Fatalf("CalculateTree: %d blocks, %v", len(got), err)
	}
	root := got[0]
	if info, _ := ondisk.DecodeDxRootInfo(root); info.IndirectLevels != 1 || info.HashVersion != 1 || info.InfoLength != 8 {
		t.Errorf("root info %+v", info)
	}
	if limit, count, _ := ondisk.DxCountLimit(root, 32); limit != rootLimit || count != 2 {
		t.Errorf("root limit %d count %d", limit, count)
	}
	if h, blk, _ := ondisk.DxEntry(root, 32, 1); blk != uint32(leaves+2) || h != hashes[nodeLimit+1] {
		t.Errorf("second interior node: block %d hash %x", blk, h)
	}
	if limit, count, _ := ondisk.DxCountLimit(got[leaves+2], 8); limit != nodeLimit || count != leaves-nodeLimit {
		t.Errorf("second node limit %d count %d", limit, count)
	}
	big := make([][]byte, rootLimit*nodeLimit+2)
	for i := range big {
		big[i] = make([]byte, bs)
	}
	if _, err := calculateTree(big, make([]uint32, len(big)), 2, 2, 0, 1, false); err != errHtreeTooDeep {
		t.Errorf("two levels: %v", err)
	}
}
