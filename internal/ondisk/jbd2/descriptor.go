package jbd2

import "gofsck/internal/csum"

// Offsets in journal_block_tag_t (8, 10, 12 or 14 bytes; the checksum word
// is there in every layout, blocknr_high only with 64bit).
const (
	offTBlocknr     = 0x0 // t_blocknr
	offTChecksum    = 0x4 // t_checksum (16 bits)
	offTFlags       = 0x6 // t_flags (16 bits)
	offTBlocknrHigh = 0x8 // t_blocknr_high
)

// Offsets in journal_block_tag3_t (16 bytes, csum_v3).
const (
	offT3Blocknr     = 0x0 // t_blocknr
	offT3Flags       = 0x4 // t_flags (32 bits)
	offT3BlocknrHigh = 0x8 // t_blocknr_high
	offT3Checksum    = 0xC // t_checksum
	tag3Size         = 16
)

// Tag is one decoded descriptor tag.
type Tag struct {
	// Block is the home (filesystem) block number; the high word counts only
	// with 64bit.
	Block uint64
	// Flags is t_flags. Only the low 16 bits have meaning, and the kernel
	// reads only those, in either layout.
	Flags TagFlag
	// Checksum is t_checksum: 32 bits with csum_v3, 16 otherwise.
	Checksum uint32
	// Off is the tag's byte offset in the descriptor block.
	Off int
}

// ChecksumMatches compares the tag checksum with c, the crc32c computed by
// DataBlockChecksum: all 32 bits with csum_v3, the low 16 with csum_v2.
// Without v2/v3 every block matches.
func (t Tag) ChecksumMatches(f Format, c uint32) bool {
	switch {
	case f.HasCsumV3():
		return t.Checksum == c
	case f.HasCsumV2():
		return t.Checksum == c&0xFFFF
	}
	return true
}

// DataBlockChecksum is crc32c(seed, be32 sequence, data): the per-block
// checksum a csum_v2/v3 tag carries for the log copy of a block.
func DataBlockChecksum(seed, sequence uint32, data []byte) uint32 {
	var seq [4]byte
	be.PutUint32(seq[:], sequence)
	return csum.Crc32c(csum.Crc32c(seed, seq[:]), data)
}

// Descriptor is a view of a descriptor block.
type Descriptor struct {
	b []byte
	f Format
}

// DescriptorOf wraps b, a whole descriptor block of format f. It checks only
// that b holds the header and tail; the block type is the caller's business.
func DescriptorOf(b []byte, f Format) (Descriptor, error) {
	if len(b) < HeaderSize+f.TailSize() {
		return Descriptor{}, &FormatError{Struct: "descriptor", Msg: "block too short", Val: uint64(len(b))}
	}
	return Descriptor{b: b, f: f}, nil
}

// Header returns the block header.
func (d Descriptor) Header() *Header { return (*Header)(d.b[:HeaderSize]) }

// Tags iterates over the tags, the way the kernel does: a tag is read while
// it fits before the tail, a tag without FlagSameUUID is followed by a
// 16-byte UUID, and FlagLastTag ends the list.
func (d Descriptor) Tags() TagIter {
	return TagIter{b: d.b, f: d.f, size: d.f.TagSize(), end: len(d.b) - d.f.TailSize(), off: HeaderSize}
}

// TagCount is count_tags(): how many log blocks follow the descriptor.
func (d Descriptor) TagCount() int {
	n := 0
	for it := d.Tags(); ; n++ {
		if _, ok := it.Next(); !ok {
			return n
		}
	}
}

// TailChecksum returns the stored tail checksum (csum_v2/v3 only; 0
// otherwise).
func (d Descriptor) TailChecksum() uint32 { return tailChecksum(d.b, d.f) }

// ChecksumValid verifies the tail checksum with seed; without v2/v3 it is
// always true.
func (d Descriptor) ChecksumValid(seed uint32) bool { return tailValid(d.b, d.f, seed) }

func tailChecksum(b []byte, f Format) uint32 {
	if !f.HasCsumV2or3() {
		return 0
	}
	return be.Uint32(b[len(b)-TailSize:])
}

// ComputeTailChecksum is crc32c(seed, block with its 4-byte tail zeroed), the
// checksum of descriptor and revoke blocks. b must be at least TailSize long.
func ComputeTailChecksum(seed uint32, b []byte) uint32 {
	if len(b) < TailSize {
		return 0
	}
	return csum.Crc32c(csum.Crc32c(seed, b[:len(b)-TailSize]), zeroWord[:])
}

func tailValid(b []byte, f Format, seed uint32) bool {
	if !f.HasCsumV2or3() {
		return true
	}
	return ComputeTailChecksum(seed, b) == tailChecksum(b, f)
}

// TagIter walks the tags of a descriptor without allocating.
type TagIter struct {
	b    []byte
	f    Format
	size int // bytes per tag
	end  int // tags must end at or before this offset
	off  int // offset of the next tag
	done bool
}

// Next returns the next tag, or false at the end of the list.
func (it *TagIter) Next() (Tag, bool) {
	if it.done || it.off < 0 || it.off > it.end-it.size {
		it.done = true
		return Tag{}, false
	}
	p := it.b[it.off : it.off+it.size]
	t := Tag{Off: it.off, Block: uint64(be.Uint32(p[offTBlocknr:]))}
	if it.f.HasCsumV3() {
		t.Flags = TagFlag(be.Uint32(p[offT3Flags:]))
		t.Checksum = be.Uint32(p[offT3Checksum:])
		if it.f.Has64Bit() {
			t.Block |= uint64(be.Uint32(p[offT3BlocknrHigh:])) << 32
		}
	} else {
		t.Flags = TagFlag(be.Uint16(p[offTFlags:]))
		t.Checksum = uint32(be.Uint16(p[offTChecksum:]))
		if it.f.Has64Bit() {
			t.Block |= uint64(be.Uint32(p[offTBlocknrHigh:])) << 32
		}
	}
	it.off += it.size
	if t.Flags&FlagSameUUID == 0 {
		it.off += UUIDSize
	}
	if t.Flags&FlagLastTag != 0 {
		it.done = true
	}
	return t, true
}
