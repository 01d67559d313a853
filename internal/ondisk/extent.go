package ondisk

import (
	"encoding/binary"

	"gofsck/internal/csum"
)

// Extent tree constants.
const (
	ExtentMagic      = 0xF30A
	ExtentHeaderSize = 12
	ExtentEntrySize  = 12
	ExtentTailSize   = 4
	// ExtentInitMaxLen is the longest initialised extent; a stored length
	// above it marks an uninitialised extent of length len-ExtentInitMaxLen.
	ExtentInitMaxLen = 32768
)

// ExtentHeader is a view over an extent node: the 12-byte header followed by
// eh_max entries (in i_block, or a whole tree block).
type ExtentHeader []byte

// Magic, Entries, Max, Depth and Generation read ext4_extent_header.
func (h ExtentHeader) Magic() uint16      { return binary.LittleEndian.Uint16(h[0:]) }
func (h ExtentHeader) Entries() uint16    { return binary.LittleEndian.Uint16(h[2:]) }
func (h ExtentHeader) Max() uint16        { return binary.LittleEndian.Uint16(h[4:]) }
func (h ExtentHeader) Depth() uint16      { return binary.LittleEndian.Uint16(h[6:]) }
func (h ExtentHeader) Generation() uint32 { return binary.LittleEndian.Uint32(h[8:]) }

// Verify checks the header of a node of len(h) bytes the way the kernel and
// e2fsck do: magic, entries <= max, and max no larger than the node's
// capacity and not more than 2 below it (mke2fs and the kernel always use
// the full capacity). It returns a FormatError naming the bad field.
func (h ExtentHeader) Verify() error {
	if len(h) < ExtentHeaderSize {
		return &FormatError{Struct: "extent header", Field: "length", Val: uint64(len(h))}
	}
	if h.Magic() != ExtentMagic {
		return &FormatError{Struct: "extent header", Field: "eh_magic", Off: 0, Val: uint64(h.Magic())}
	}
	if h.Entries() > h.Max() {
		return &FormatError{Struct: "extent header", Field: "eh_entries", Off: 2, Val: uint64(h.Entries())}
	}
	// The capacity of a block ignores the checksum tail, as the kernel and
	// libext2fs compute it; they allow eh_max to be up to 2 below it.
	capacity := (len(h) - ExtentHeaderSize) / ExtentEntrySize
	if int(h.Max()) > capacity || int(h.Max()) < capacity-2 {
		return &FormatError{Struct: "extent header", Field: "eh_max", Off: 4, Val: uint64(h.Max())}
	}
	return nil
}

// entry returns the raw 12 bytes of entry i; the caller has verified the
// header, so i < Entries() <= Max() fits.
func (h ExtentHeader) entry(i int) []byte {
	off := ExtentHeaderSize + i*ExtentEntrySize
	return h[off : off+ExtentEntrySize]
}

// Extent is a decoded leaf entry.
type Extent struct {
	Lblk   uint32 // ee_block
	Len    uint32 // length in blocks (uninit bit removed)
	Pblk   uint64 // ee_start
	Uninit bool
}

// Index is a decoded interior entry.
type Index struct {
	Lblk uint32 // ei_block
	Leaf uint64 // ei_leaf
}

// Leaf decodes leaf entry i (i < Entries()).
func (h ExtentHeader) Leaf(i int) Extent {
	e := h.entry(i)
	l := uint32(binary.LittleEndian.Uint16(e[4:]))
	x := Extent{
		Lblk: binary.LittleEndian.Uint32(e[0:]),
		Pblk: uint64(binary.LittleEndian.Uint16(e[6:]))<<32 | uint64(binary.LittleEndian.Uint32(e[8:])),
	}
	if l > ExtentInitMaxLen {
		x.Uninit = true
		l -= ExtentInitMaxLen
	}
	x.Len = l
	return x
}

// Idx decodes index entry i (i < Entries()).
func (h ExtentHeader) Idx(i int) Index {
	e := h.entry(i)
	return Index{
		Lblk: binary.LittleEndian.Uint32(e[0:]),
		Leaf: uint64(binary.LittleEndian.Uint32(e[4:])) | uint64(binary.LittleEndian.Uint16(e[8:]))<<32,
	}
}

// ExtentBlockChecksum computes the checksum of a non-root extent block:
// crc32c(seed, le32 ino, le32 generation, header + eh_max entries). ok is
// false when the tail would lie outside the block.
func ExtentBlockChecksum(block []byte, seed, ino, gen uint32) (sum, stored uint32, ok bool) {
	h := ExtentHeader(block)
	if len(block) < ExtentHeaderSize {
		return 0, 0, false
	}
	end := ExtentHeaderSize + int(h.Max())*ExtentEntrySize
	if !inRange(end, ExtentTailSize, len(block)) {
		return 0, 0, false
	}
	c := csum.Crc32cUint32(seed, ino)
	c = csum.Crc32cUint32(c, gen)
	c = csum.Crc32c(c, block[:end])
	return c, binary.LittleEndian.Uint32(block[end:]), true
}
