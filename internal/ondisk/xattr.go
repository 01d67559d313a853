package ondisk

import (
	"encoding/binary"

	"gofsck/internal/csum"
)

// Extended attribute constants.
const (
	XattrMagic        = 0xEA020000
	XattrMagicV1      = 0xEA010000
	XattrHeaderSize   = 32 // block header
	XattrIHeaderSize  = 4  // in-inode header (magic only)
	XattrEntrySize    = 16 // fixed part of an entry
	xattrRound        = 3
	offXhMagic        = 0x00 // h_magic
	offXhRefcount     = 0x04 // h_refcount
	offXhBlocks       = 0x08 // h_blocks
	offXhHash         = 0x0C // h_hash
	offXhChecksum     = 0x10 // h_checksum
	XattrIndexSystem  = 7    // "system." (system.data holds inline data)
	XattrIndexEncrypt = 9    // "c" encryption context
)

// XattrEntryLen returns the padded size of an entry with a name of n bytes.
func XattrEntryLen(n int) int { return (XattrEntrySize + n + xattrRound) &^ xattrRound }

// XattrBlock is a view over an EA block.
type XattrBlock []byte

// Magic, Refcount, Blocks, Hash and Checksum read the block header.
func (x XattrBlock) Magic() uint32    { return binary.LittleEndian.Uint32(x[offXhMagic:]) }
func (x XattrBlock) Refcount() uint32 { return binary.LittleEndian.Uint32(x[offXhRefcount:]) }
func (x XattrBlock) Blocks() uint32   { return binary.LittleEndian.Uint32(x[offXhBlocks:]) }
func (x XattrBlock) Hash() uint32     { return binary.LittleEndian.Uint32(x[offXhHash:]) }
func (x XattrBlock) Checksum() uint32 { return binary.LittleEndian.Uint32(x[offXhChecksum:]) }

// ComputeChecksum returns crc32c(seed, le64 blocknr, block with h_checksum
// zeroed).
func (x XattrBlock) ComputeChecksum(seed uint32, blk uint64) uint32 {
	c := csum.Crc32cUint32(seed, uint32(blk))
	c = csum.Crc32cUint32(c, uint32(blk>>32))
	c = csum.Crc32c(c, x[:offXhChecksum])
	c = csum.Crc32cZeros(c, 4)
	return csum.Crc32c(c, x[offXhChecksum+4:])
}

// XattrEntry is a decoded entry (ext4_xattr_entry).
type XattrEntry struct {
	NameLen    int
	NameIndex  uint8
	ValueOffs  int
	ValueInum  uint32
	ValueSize  uint32
	Hash       uint32
	Name       []byte // aliases the block
	Off        int    // offset of the entry in the area
	EntryBytes int    // padded size of the entry
}

// DecodeXattrEntry decodes the entry at off within area. end is false and
// ok true when the 4-byte end marker (a zero first word) is found; ok is
// false when the entry does not fit.
func DecodeXattrEntry(area []byte, off int) (e XattrEntry, end, ok bool) {
	if !inRange(off, 4, len(area)) {
		return e, false, false
	}
	if binary.LittleEndian.Uint32(area[off:]) == 0 {
		return e, true, true
	}
	if !inRange(off, XattrEntrySize, len(area)) {
		return e, false, false
	}
	b := area[off:]
	e.NameLen = int(b[0])
	e.NameIndex = b[1]
	e.ValueOffs = int(binary.LittleEndian.Uint16(b[2:]))
	e.ValueInum = binary.LittleEndian.Uint32(b[4:])
	e.ValueSize = binary.LittleEndian.Uint32(b[8:])
	e.Hash = binary.LittleEndian.Uint32(b[12:])
	e.Off = off
	e.EntryBytes = XattrEntryLen(e.NameLen)
	if !inRange(off+XattrEntrySize, e.NameLen, len(area)) {
		return e, false, false
	}
	e.Name = area[off+XattrEntrySize : off+XattrEntrySize+e.NameLen]
	return e, false, true
}

// XattrNameHash folds the name into the entry hash; signed selects the
// signed-char variant some old kernels produced.
func XattrNameHash(name []byte, signed bool) uint32 {
	var h uint32
	for _, c := range name {
		v := uint32(c)
		if signed {
			v = uint32(int32(int8(c)))
		}
		h = h<<5 ^ h>>27 ^ v
	}
	return h
}

// XattrValueHash continues an entry hash over the value, one little-endian
// 32-bit word at a time (the value is padded with zeros to 4 bytes).
func XattrValueHash(h uint32, value []byte) uint32 {
	for i := 0; i < len(value); i += 4 {
		var w [4]byte
		copy(w[:], value[i:])
		h = h<<16 ^ h>>16 ^ binary.LittleEndian.Uint32(w[:])
	}
	return h
}
