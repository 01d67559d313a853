package ondisk

import (
	"encoding/binary"

	"gofsck/internal/csum"
)

// Directory entry constants.
const (
	DirentHeaderSize = 8 // inode, rec_len, name_len, file_type
	DirTailSize      = 12
	DirTailFileType  = 0xDE
	MaxNameLen       = 255
)

// File types stored in directory entries (filetype feature).
const (
	FTUnknown = 0
	FTRegFile = 1
	FTDir     = 2
	FTChrdev  = 3
	FTBlkdev  = 4
	FTFifo    = 5
	FTSock    = 6
	FTSymlink = 7
	FTMax     = 8
)

// FileTypeOfMode maps i_mode to the directory-entry file type.
func FileTypeOfMode(mode uint16) uint8 {
	switch mode & SIFMT {
	case SIFREG:
		return FTRegFile
	case SIFDIR:
		return FTDir
	case SIFCHR:
		return FTChrdev
	case SIFBLK:
		return FTBlkdev
	case SIFIFO:
		return FTFifo
	case SIFSOCK:
		return FTSock
	case SIFLNK:
		return FTSymlink
	}
	return FTUnknown
}

// DirRecLen returns the minimal record length for a name of n bytes
// (header + name rounded up to 4), plus extra bytes (the 8-byte hash of
// encrypted+casefolded directories).
func DirRecLen(n, extra int) int { return (DirentHeaderSize + n + extra + 3) &^ 3 }

// DecodeRecLen converts a stored rec_len into bytes, as the kernel does for
// 64 KiB blocks (where 65536 does not fit in 16 bits).
func DecodeRecLen(raw uint16, blockSize int) int {
	if blockSize < 65536 {
		return int(raw)
	}
	if raw == 0xFFFF || raw == 0 {
		return blockSize
	}
	return int(raw&0xFFFC) | int(raw&3)<<16
}

// Dirent is the fixed part of a directory entry decoded at some offset.
type Dirent struct {
	Ino      uint32
	RecLen   int
	NameLen  int
	FileType uint8
}

// DecodeDirent reads the entry header at off in b. ok is false when the
// 8-byte header itself does not fit; the caller validates RecLen and
// NameLen against the block.
func DecodeDirent(b []byte, off, blockSize int) (d Dirent, ok bool) {
	if !inRange(off, DirentHeaderSize, len(b)) {
		return d, false
	}
	d.Ino = binary.LittleEndian.Uint32(b[off:])
	d.RecLen = DecodeRecLen(binary.LittleEndian.Uint16(b[off+4:]), blockSize)
	d.NameLen = int(b[off+6])
	d.FileType = b[off+7]
	return d, true
}

// DirTail reports whether the last 12 bytes of a directory leaf block form a
// checksum tail, and returns the stored checksum.
func DirTail(block []byte) (stored uint32, ok bool) {
	n := len(block)
	if n < DirTailSize {
		return 0, false
	}
	t := block[n-DirTailSize:]
	if binary.LittleEndian.Uint32(t[0:]) != 0 || binary.LittleEndian.Uint16(t[4:]) != DirTailSize ||
		t[6] != 0 || t[7] != DirTailFileType {
		return 0, false
	}
	return binary.LittleEndian.Uint32(t[8:]), true
}

// DirLeafChecksum computes crc32c(seed, ino, gen, block without its tail).
func DirLeafChecksum(block []byte, seed, ino, gen uint32) uint32 {
	c := csum.Crc32cUint32(seed, ino)
	c = csum.Crc32cUint32(c, gen)
	return csum.Crc32c(c, block[:len(block)-DirTailSize])
}

// htree (dx) layout constants.
const (
	DxRootInfoOff  = 24 // after the '.' (12) and '..' (12) headers
	DxRootInfoSize = 8
	DxEntrySize    = 8
	DxTailSize     = 8
	DxNodeCountOff = 8 // after the fake empty dirent of an interior node
	DxCountSize    = 8 // limit, count, block of entry 0
)

// DxRootInfo is the dx_root_info of an htree root block.
type DxRootInfo struct {
	ReservedZero   uint32
	HashVersion    uint8
	InfoLength     uint8
	IndirectLevels uint8
	UnusedFlags    uint8
}

// DecodeDxRootInfo reads dx_root_info from a root block (len >= 32).
func DecodeDxRootInfo(block []byte) (DxRootInfo, bool) {
	if len(block) < DxRootInfoOff+DxRootInfoSize {
		return DxRootInfo{}, false
	}
	b := block[DxRootInfoOff:]
	return DxRootInfo{
		ReservedZero:   binary.LittleEndian.Uint32(b),
		HashVersion:    b[4],
		InfoLength:     b[5],
		IndirectLevels: b[6],
		UnusedFlags:    b[7],
	}, true
}

// DxCountLimit reads (limit, count) at off; ok is false if out of range.
func DxCountLimit(block []byte, off int) (limit, count int, ok bool) {
	if !inRange(off, 4, len(block)) {
		return 0, 0, false
	}
	return int(binary.LittleEndian.Uint16(block[off:])), int(binary.LittleEndian.Uint16(block[off+2:])), true
}

// DxEntry reads index entry i of the array starting at off (entry 0 has no
// hash: its hash field holds limit/count). ok is false if out of range.
func DxEntry(block []byte, off, i int) (hash, blk uint32, ok bool) {
	p := off + i*DxEntrySize
	if !inRange(p, DxEntrySize, len(block)) {
		return 0, 0, false
	}
	if i > 0 {
		hash = binary.LittleEndian.Uint32(block[p:])
	}
	return hash, binary.LittleEndian.Uint32(block[p+4:]), true
}

// DxChecksum computes the checksum of an htree root or node whose
// count/limit array starts at countOff: crc32c over the block up to the
// used entries, the tail's reserved word and 4 zero bytes. It also returns
// the stored value; ok is false if the tail does not fit.
func DxChecksum(block []byte, countOff, limit, count int, seed, ino, gen uint32) (sum, stored uint32, ok bool) {
	size := countOff + count*DxEntrySize
	tail := countOff + limit*DxEntrySize
	if count > limit || !inRange(tail, DxTailSize, len(block)) {
		return 0, 0, false
	}
	c := csum.Crc32cUint32(seed, ino)
	c = csum.Crc32cUint32(c, gen)
	c = csum.Crc32c(c, block[:size])
	c = csum.Crc32c(c, block[tail:tail+4])
	c = csum.Crc32cZeros(c, 4)
	return c, binary.LittleEndian.Uint32(block[tail+4:]), true
}
