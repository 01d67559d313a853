package ondisk

import (
	"encoding/binary"
	"testing"
)

// TestMapBlock: pointers are little-endian words at 4*i, slots outside
// the block read as 0 and are not written, and Inode.SetBlock lands where
// Block reads.
func TestMapBlock(t *testing.T) {
	m := MapBlock(make([]byte, 1024))
	if m.Slots() != 256 {
		t.Fatalf("Slots = %d", m.Slots())
	}
	m.SetPtr(3, 0xA1B2C3D4)
	m.SetPtr(256, 7) // outside: ignored
	m.SetPtr(-1, 7)
	if got := binary.LittleEndian.Uint32(m[12:]); got != 0xA1B2C3D4 {
		t.Errorf("slot 3 holds %#x", got)
	}
	if m.Ptr(3) != 0xA1B2C3D4 || m.Ptr(256) != 0 || m.Ptr(-1) != 0 {
		t.Errorf("Ptr: %#x %d %d", m.Ptr(3), m.Ptr(256), m.Ptr(-1))
	}
	n := Inode(make([]byte, 256))
	for i := 0; i < NBlocks; i++ {
		n.SetBlock(i, uint32(100+i))
	}
	n.SetBlock(NBlocks, 1) // outside: ignored
	for i := 0; i < NBlocks; i++ {
		if n.Block(i) != uint32(100+i) {
			t.Errorf("Block(%d) = %d", i, n.Block(i))
		}
	}
	if n.Block(IndBlock) != 112 || n.Block(TindBlock) != 114 || NDirBlocks != IndBlock {
		t.Errorf("slots: IND %d TIND %d", n.Block(IndBlock), n.Block(TindBlock))
	}
}
