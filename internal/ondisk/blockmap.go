package ondisk

import "encoding/binary"

// The slots of i_block in a block-mapped inode (EXT2_NDIR_BLOCKS,
// EXT2_IND_BLOCK, EXT2_DIND_BLOCK, EXT2_TIND_BLOCK).
const (
	NDirBlocks = 12 // direct pointers, i_block[0..11]
	IndBlock   = 12 // the indirect block's pointer
	DindBlock  = 13 // the doubly indirect block's pointer
	TindBlock  = 14 // the triply indirect block's pointer
)

// MapBlock is an indirect (mapping) block of a block-mapped inode:
// little-endian 32-bit block numbers, one per slot.
type MapBlock []byte

// Slots is the number of pointers the block holds (blocksize / 4).
func (m MapBlock) Slots() int { return len(m) / 4 }

// Ptr returns pointer i; 0 outside the block.
func (m MapBlock) Ptr(i int) uint32 {
	if i < 0 || i >= m.Slots() {
		return 0
	}
	return binary.LittleEndian.Uint32(m[4*i:])
}

// SetPtr stores pointer i; a slot outside the block is ignored.
func (m MapBlock) SetPtr(i int, v uint32) {
	if i < 0 || i >= m.Slots() {
		return
	}
	binary.LittleEndian.PutUint32(m[4*i:], v)
}

// SetBlock stores i_block word i (0..14); others are ignored.
func (n Inode) SetBlock(i int, v uint32) {
	if i < 0 || i >= NBlocks {
		return
	}
	binary.LittleEndian.PutUint32(n[offIBlock+4*i:], v)
}
