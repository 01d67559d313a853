package ondisk

import "testing"

// TestExtentSetters builds a leaf and an index node with the setters and
// reads them back through Verify, Leaf and Idx: 48-bit block numbers,
// the uninitialised bit and the checksum tail land where the decoders
// look for them.
func TestExtentSetters(t *testing.T) {
	leaf := ExtentHeader(make([]byte, 1024))
	leaf.SetMagic(ExtentMagic)
	leaf.SetMax(84)
	leaf.SetDepth(0)
	leaf.SetEntries(2)
	e := leaf.Entry(0)
	e.SetLblk(7)
	e.SetRawLen(5)
	e.SetStart(0x1234_5678_9ABC)
	e = leaf.Entry(1)
	e.SetLblk(100)
	e.SetRawLen(ExtentInitMaxLen + 3)
	e.SetStart(42)
	if err := leaf.Verify(); err != nil {
		t.Fatal(err)
	}
	if got, want := leaf.Leaf(0), (Extent{Lblk: 7, Len: 5, Pblk: 0x1234_5678_9ABC}); got != want {
		t.Errorf("leaf 0 = %+v, want %+v", got, want)
	}
	if got, want := leaf.Leaf(1), (Extent{Lblk: 100, Len: 3, Pblk: 42, Uninit: true}); got != want {
		t.Errorf("leaf 1 = %+v, want %+v", got, want)
	}
	if got := leaf.Entry(1).RawLen(); got != ExtentInitMaxLen+3 {
		t.Errorf("raw len %d", got)
	}
	leaf.SetTailChecksum(0xDEADBEEF)
	if _, stored, ok := ExtentBlockChecksum(leaf, 1, 2, 3); !ok || stored != 0xDEADBEEF {
		t.Errorf("tail checksum %#x, ok %v", stored, ok)
	}

	idx := ExtentHeader(make([]byte, 60))
	idx.SetMagic(ExtentMagic)
	idx.SetMax(4)
	idx.SetDepth(2)
	idx.SetEntries(1)
	e = idx.Entry(0)
	e.SetLblk(9)
	e.SetLeaf(0xBEEF_0000_0001)
	e.SetIdxUnused(0xFFFF)
	e.SetIdxUnused(0)
	if err := idx.Verify(); err != nil || idx.Depth() != 2 {
		t.Fatalf("verify %v, depth %d", err, idx.Depth())
	}
	if got, want := idx.Idx(0), (Index{Lblk: 9, Leaf: 0xBEEF_0000_0001}); got != want {
		t.Errorf("index = %+v, want %+v", got, want)
	}
	if got := idx.Entry(0).Leaf(); got != 0xBEEF_0000_0001 {
		t.Errorf("leaf %#x", got)
	}
	if idx[10] != 0 || idx[11] != 0 {
		t.Errorf("ei_unused %x", idx[10:12])
	}

	n := Inode(make([]byte, 256))
	n.SetBlocks(0x1_0000_0002)
	n.SetBlocksLo(7)
	if n.BlocksLo() != 7 || n.BlocksHi() != 1 {
		t.Errorf("i_blocks lo %d hi %d", n.BlocksLo(), n.BlocksHi())
	}
	n.SetBlocksHi(3)
	if n.BlocksLo() != 7 || n.BlocksHi() != 3 {
		t.Errorf("i_blocks lo %d hi %d", n.BlocksLo(), n.BlocksHi())
	}
}
