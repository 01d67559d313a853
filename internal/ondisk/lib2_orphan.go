package ondisk

import (
	"encoding/binary"

	"gofsck/internal/csum"
)

// Orphan file block layout (struct ext4_orphan_block_tail at the end of
// each block, after the inode number slots).
const (
	OrphanBlockMagic = 0x0b10ca04
	OrphanTailSize   = 8 // ob_magic, ob_checksum
)

// OrphanBlock is a view over a block of the orphan file.
type OrphanBlock []byte

// Slots is the number of inode slots before the tail.
func (b OrphanBlock) Slots() int { return (len(b) - OrphanTailSize) / 4 }

// Magic returns ob_magic.
func (b OrphanBlock) Magic() uint32 { return binary.LittleEndian.Uint32(b[len(b)-OrphanTailSize:]) }

// SetMagic stores ob_magic.
func (b OrphanBlock) SetMagic(v uint32) { binary.LittleEndian.PutUint32(b[len(b)-OrphanTailSize:], v) }

// Checksum returns ob_checksum.
func (b OrphanBlock) Checksum() uint32 { return binary.LittleEndian.Uint32(b[len(b)-4:]) }

// ComputeChecksum is the block's checksum as block blk of the orphan
// file (inode ino, generation gen): crc32c(seed, ino, gen, le64 blk, the
// slots).
func (b OrphanBlock) ComputeChecksum(seed, ino, gen uint32, blk uint64) uint32 {
	sum := csum.Crc32cUint32(seed, ino)
	sum = csum.Crc32cUint32(sum, gen)
	sum = csum.Crc32cUint32(sum, uint32(blk))
	sum = csum.Crc32cUint32(sum, uint32(blk>>32))
	return csum.Crc32c(sum, b[:4*b.Slots()])
}

// SetChecksum stores ob_checksum computed by ComputeChecksum.
func (b OrphanBlock) SetChecksum(seed, ino, gen uint32, blk uint64) {
	binary.LittleEndian.PutUint32(b[len(b)-4:], b.ComputeChecksum(seed, ino, gen, blk))
}
