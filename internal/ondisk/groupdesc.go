package ondisk

import (
	"encoding/binary"

	"gofsck/internal/csum"
)

// Group descriptor sizes.
const (
	GroupDescSize32    = 32
	GroupDescSize64    = 64
	MaxGroupDescSize   = 1024
	bgChecksumHiEndOff = 0x3C // descriptors at least this long carry the bitmap csum hi halves
)

// Group descriptor field offsets, named after struct ext4_group_desc.
const (
	offBgBlockBitmapLo     = 0x00 // bg_block_bitmap_lo
	offBgInodeBitmapLo     = 0x04 // bg_inode_bitmap_lo
	offBgInodeTableLo      = 0x08 // bg_inode_table_lo
	offBgFreeBlocksLo      = 0x0C // bg_free_blocks_count_lo
	offBgFreeInodesLo      = 0x0E // bg_free_inodes_count_lo
	offBgUsedDirsLo        = 0x10 // bg_used_dirs_count_lo
	offBgFlags             = 0x12 // bg_flags
	offBgBlockBitmapCsumLo = 0x18 // bg_block_bitmap_csum_lo
	offBgInodeBitmapCsumLo = 0x1A // bg_inode_bitmap_csum_lo
	offBgItableUnusedLo    = 0x1C // bg_itable_unused_lo
	offBgChecksum          = 0x1E // bg_checksum
	offBgBlockBitmapHi     = 0x20 // bg_block_bitmap_hi
	offBgInodeBitmapHi     = 0x24 // bg_inode_bitmap_hi
	offBgInodeTableHi      = 0x28 // bg_inode_table_hi
	offBgFreeBlocksHi      = 0x2C // bg_free_blocks_count_hi
	offBgFreeInodesHi      = 0x2E // bg_free_inodes_count_hi
	offBgUsedDirsHi        = 0x30 // bg_used_dirs_count_hi
	offBgItableUnusedHi    = 0x32 // bg_itable_unused_hi
	offBgBlockBitmapCsumHi = 0x38 // bg_block_bitmap_csum_hi
	offBgInodeBitmapCsumHi = 0x3A // bg_inode_bitmap_csum_hi
)

// Block group flags (bg_flags).
const (
	BgInodeUninit = 0x0001
	BgBlockUninit = 0x0002
	BgInodeZeroed = 0x0004
)

// GroupDesc is a view over one group descriptor. Its length is the
// descriptor size in use (32, or s_desc_size with 64bit); fields past 32
// bytes are read only when the descriptor is long enough, so one accessor
// serves both layouts.
type GroupDesc []byte

func (g GroupDesc) u16(off int) uint16 { return binary.LittleEndian.Uint16(g[off:]) }
func (g GroupDesc) u32(off int) uint32 { return binary.LittleEndian.Uint32(g[off:]) }

func (g GroupDesc) hi32(off int) uint64 {
	if len(g) < GroupDescSize64 {
		return 0
	}
	return uint64(g.u32(off)) << 32
}

func (g GroupDesc) hi16(off int) uint32 {
	if len(g) < GroupDescSize64 {
		return 0
	}
	return uint32(g.u16(off)) << 16
}

// BlockBitmap returns the block bitmap location.
func (g GroupDesc) BlockBitmap() uint64 {
	return uint64(g.u32(offBgBlockBitmapLo)) | g.hi32(offBgBlockBitmapHi)
}

// InodeBitmap returns the inode bitmap location.
func (g GroupDesc) InodeBitmap() uint64 {
	return uint64(g.u32(offBgInodeBitmapLo)) | g.hi32(offBgInodeBitmapHi)
}

// InodeTable returns the first block of the inode table.
func (g GroupDesc) InodeTable() uint64 {
	return uint64(g.u32(offBgInodeTableLo)) | g.hi32(offBgInodeTableHi)
}

// FreeBlocks returns the group's free block (cluster) count.
func (g GroupDesc) FreeBlocks() uint32 {
	return uint32(g.u16(offBgFreeBlocksLo)) | g.hi16(offBgFreeBlocksHi)
}

// FreeInodes returns the group's free inode count.
func (g GroupDesc) FreeInodes() uint32 {
	return uint32(g.u16(offBgFreeInodesLo)) | g.hi16(offBgFreeInodesHi)
}

// UsedDirs returns the group's directory count.
func (g GroupDesc) UsedDirs() uint32 {
	return uint32(g.u16(offBgUsedDirsLo)) | g.hi16(offBgUsedDirsHi)
}

// ItableUnused returns bg_itable_unused.
func (g GroupDesc) ItableUnused() uint32 {
	return uint32(g.u16(offBgItableUnusedLo)) | g.hi16(offBgItableUnusedHi)
}

// Flags returns bg_flags.
func (g GroupDesc) Flags() uint16 { return g.u16(offBgFlags) }

// Checksum returns bg_checksum.
func (g GroupDesc) Checksum() uint16 { return g.u16(offBgChecksum) }

// BlockBitmapCsum returns the stored block bitmap checksum (hi half only
// when the descriptor is long enough).
func (g GroupDesc) BlockBitmapCsum() uint32 {
	v := uint32(g.u16(offBgBlockBitmapCsumLo))
	if len(g) >= bgChecksumHiEndOff {
		v |= uint32(g.u16(offBgBlockBitmapCsumHi)) << 16
	}
	return v
}

// InodeBitmapCsum returns the stored inode bitmap checksum.
func (g GroupDesc) InodeBitmapCsum() uint32 {
	v := uint32(g.u16(offBgInodeBitmapCsumLo))
	if len(g) >= bgChecksumHiEndOff {
		v |= uint32(g.u16(offBgInodeBitmapCsumHi)) << 16
	}
	return v
}

// BitmapCsumHasHi reports whether bitmap checksums carry 32 bits.
func (g GroupDesc) BitmapCsumHasHi() bool { return len(g) >= bgChecksumHiEndOff }

// ComputeChecksum returns the checksum bg_checksum should hold for group
// number group. With metadata_csum it is the low 16 bits of
// crc32c(seed, le32 group, descriptor with bg_checksum zeroed); with
// gdt_csum (uninit_bg) it is crc16(~0, uuid, le32 group, descriptor
// without the checksum field). ok is false when neither feature is on.
func (g GroupDesc) ComputeChecksum(sb Superblock, group uint32) (sum uint16, ok bool) {
	var gb [4]byte
	binary.LittleEndian.PutUint32(gb[:], group)
	switch {
	case sb.HasRoCompat(RoCompatMetadataCsum):
		c := csum.Crc32cUint32(sb.CsumSeed(), group)
		c = csum.Crc32c(c, g[:offBgChecksum])
		c = csum.Crc32cZeros(c, 2)
		if len(g) > offBgChecksum+2 {
			c = csum.Crc32c(c, g[offBgChecksum+2:])
		}
		return uint16(c), true
	case sb.HasRoCompat(RoCompatGdtCsum):
		uuid := sb.UUID()
		c := csum.Crc16(0xFFFF, uuid[:])
		c = csum.Crc16(c, gb[:])
		c = csum.Crc16(c, g[:offBgChecksum])
		if len(g) > offBgChecksum+2 {
			c = csum.Crc16(c, g[offBgChecksum+2:])
		}
		return c, true
	}
	return 0, false
}

// ChecksumValid reports whether bg_checksum verifies (true when no
// checksum feature is enabled).
func (g GroupDesc) ChecksumValid(sb Superblock, group uint32) bool {
	c, ok := g.ComputeChecksum(sb, group)
	return !ok || c == g.Checksum()
}

// BitmapChecksum computes a metadata_csum bitmap checksum over the first n
// bytes of bitmap (n = clusters or inodes per group / 8).
func BitmapChecksum(seed uint32, bitmap []byte) uint32 {
	return csum.Crc32c(seed, bitmap)
}

func (g GroupDesc) put16(off int, v uint16) { binary.LittleEndian.PutUint16(g[off:], v) }

// SetFlags stores bg_flags.
func (g GroupDesc) SetFlags(v uint16) { g.put16(offBgFlags, v) }

// SetItableUnused stores bg_itable_unused (both halves when present).
func (g GroupDesc) SetItableUnused(v uint32) {
	g.put16(offBgItableUnusedLo, uint16(v))
	if len(g) >= GroupDescSize64 {
		g.put16(offBgItableUnusedHi, uint16(v>>16))
	}
}

// SetChecksum stores bg_checksum.
func (g GroupDesc) SetChecksum(v uint16) { g.put16(offBgChecksum, v) }
