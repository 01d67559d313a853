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

// Offsets in ext4_extent_header, and in an entry (ext4_extent in a leaf,
// ext4_extent_idx in an index node).
const (
	offEhMagic   = 0  // eh_magic
	offEhEntries = 2  // eh_entries
	offEhMax     = 4  // eh_max
	offEhDepth   = 6  // eh_depth
	offEhGen     = 8  // eh_generation
	offEeBlock   = 0  // ee_block, ei_block
	offEeLen     = 4  // ee_len
	offEeStartHi = 6  // ee_start_hi
	offEeStartLo = 8  // ee_start_lo
	offEiLeafLo  = 4  // ei_leaf_lo
	offEiLeafHi  = 8  // ei_leaf_hi
	offEiUnused  = 10 // ei_unused
)

// ExtentHeader is a view over an extent node: the 12-byte header followed by
// eh_max entries (in i_block, or a whole tree block).
type ExtentHeader []byte

// Magic, Entries, Max, Depth and Generation read ext4_extent_header.
func (h ExtentHeader) Magic() uint16      { return binary.LittleEndian.Uint16(h[offEhMagic:]) }
func (h ExtentHeader) Entries() uint16    { return binary.LittleEndian.Uint16(h[offEhEntries:]) }
func (h ExtentHeader) Max() uint16        { return binary.LittleEndian.Uint16(h[offEhMax:]) }
func (h ExtentHeader) Depth() uint16      { return binary.LittleEndian.Uint16(h[offEhDepth:]) }
func (h ExtentHeader) Generation() uint32 { return binary.LittleEndian.Uint32(h[offEhGen:]) }

// SetMagic, SetEntries, SetMax and SetDepth store ext4_extent_header's
// fields.
func (h ExtentHeader) SetMagic(v uint16)   { binary.LittleEndian.PutUint16(h[offEhMagic:], v) }
func (h ExtentHeader) SetEntries(v uint16) { binary.LittleEndian.PutUint16(h[offEhEntries:], v) }
func (h ExtentHeader) SetMax(v uint16)     { binary.LittleEndian.PutUint16(h[offEhMax:], v) }
func (h ExtentHeader) SetDepth(v uint16)   { binary.LittleEndian.PutUint16(h[offEhDepth:], v) }

// SetTailChecksum stores a tree block's checksum in the tail after its
// eh_max entries (ExtentBlockChecksum computes it and says whether the
// tail fits).
func (h ExtentHeader) SetTailChecksum(sum uint32) {
	binary.LittleEndian.PutUint32(h[ExtentHeaderSize+int(h.Max())*ExtentEntrySize:], sum)
}

// Entry is entry i of the node, leaf or index, as a view running to the
// end of the node; unlike Leaf and Idx it neither decodes nor checks the
// header, for code that edits a node entry by entry (the library's
// extent handle) and keeps i within it.
func (h ExtentHeader) Entry(i int) ExtentEntry {
	return ExtentEntry(h[ExtentHeaderSize+i*ExtentEntrySize:])
}

// ExtentEntry is a view over one entry of an extent node: ext4_extent in
// a leaf, ext4_extent_idx in an index node. Both begin with the first
// logical block they map.
type ExtentEntry []byte

// Lblk is ee_block (ei_block in an index entry).
func (e ExtentEntry) Lblk() uint32 { return binary.LittleEndian.Uint32(e[offEeBlock:]) }

// RawLen is a leaf entry's ee_len as stored: above ExtentInitMaxLen, an
// uninitialised extent of RawLen-ExtentInitMaxLen blocks.
func (e ExtentEntry) RawLen() uint16 { return binary.LittleEndian.Uint16(e[offEeLen:]) }

// Start is a leaf entry's first physical block (ee_start_hi:ee_start_lo).
func (e ExtentEntry) Start() uint64 {
	return uint64(binary.LittleEndian.Uint32(e[offEeStartLo:])) | uint64(binary.LittleEndian.Uint16(e[offEeStartHi:]))<<32
}

// Leaf is an index entry's child block (ei_leaf_hi:ei_leaf_lo).
func (e ExtentEntry) Leaf() uint64 {
	return uint64(binary.LittleEndian.Uint32(e[offEiLeafLo:])) | uint64(binary.LittleEndian.Uint16(e[offEiLeafHi:]))<<32
}

// SetLblk stores ee_block (ei_block).
func (e ExtentEntry) SetLblk(v uint32) { binary.LittleEndian.PutUint32(e[offEeBlock:], v) }

// SetRawLen stores ee_len as it is to be stored (the uninitialised
// flag, ExtentInitMaxLen, already added).
func (e ExtentEntry) SetRawLen(v uint16) { binary.LittleEndian.PutUint16(e[offEeLen:], v) }

// SetStart stores a leaf entry's first physical block (both halves).
func (e ExtentEntry) SetStart(v uint64) {
	binary.LittleEndian.PutUint32(e[offEeStartLo:], uint32(v))
	binary.LittleEndian.PutUint16(e[offEeStartHi:], uint16(v>>32))
}

// SetLeaf stores an index entry's child block (both halves).
func (e ExtentEntry) SetLeaf(v uint64) {
	binary.LittleEndian.PutUint32(e[offEiLeafLo:], uint32(v))
	binary.LittleEndian.PutUint16(e[offEiLeafHi:], uint16(v>>32))
}

// SetIdxUnused stores an index entry's ei_unused.
func (e ExtentEntry) SetIdxUnused(v uint16) { binary.LittleEndian.PutUint16(e[offEiUnused:], v) }

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
	l := uint32(ExtentEntry(e).RawLen())
	x := Extent{
		Lblk: ExtentEntry(e).Lblk(),
		Pblk: ExtentEntry(e).Start(),
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
		Lblk: ExtentEntry(e).Lblk(),
		Leaf: ExtentEntry(e).Leaf(),
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
