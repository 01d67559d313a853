// Package undo makes device writes undoable with an undo file in the format
// e2fsprogs' undo I/O manager writes and e2undo(8) replays ("E2UNDO02"), and
// replays such files, whoever wrote them.
//
// # File format
//
// The file is cut into blocks of the header's block_size (the undo block
// size, 1 KiB to 1 MiB). Block 0 holds the 512-byte header, block 1 (the
// header's super_offset) a copy of the device's primary superblock with
// s_magic inverted (so that the undo file is never mistaken for a file
// system), and from block 2 (key_offset) on come runs of one key block
// followed by the data blocks its keys describe, in key order; the next key
// block starts right after the last data block of the previous one. Each
// key maps size bytes of saved device contents, stored at the next
// ceil(size/block_size) blocks of the file, to the device at
// fs_offset + fsblk*fs_block_size. Every structure carries a CRC32C in the
// kernel's raw form started from ^0 and never inverted (csum.Crc32c(^0, …)):
// the header over its first 508 bytes, a key block over the whole block with
// its crc field zero, each key over its data, and the header's sb_crc over
// the superblock copy with s_magic restored.
//
// The header's state bit E2UNDO_STATE_FINISHED says the writer closed the
// file. e2undo replays an unfinished file (without -f) when the rest of it
// checks out, then prints "Incomplete undo record; run e2fsck." and clears
// the file system's valid bit in the superblock (so the device is no longer
// byte-identical to its original). e2undo refuses, unless given -f, a file
// whose superblock copy differs from the device's superblock.
//
// # Writer
//
// Writer saves the original contents of every undo block before the first
// write that touches it and makes them durable (one fsync of the undo file
// per WriteAt) before the device is written. Within one WriteAt the keys of
// adjacent blocks are merged, as undo_io does (at most 511 blocks a key);
// keys that an fsync made durable are never rewritten. Each batch writes
// its data blocks and key blocks first, then the superblock copy, then the
// header, whose num_keys makes the new keys count; the undo block size is
// the file system's, capped at the page size, so that each key block,
// superblock copy and header write lies in one page and a SIGKILL cannot
// tear it. The superblock copy is the one the device will have once the
// pending write is done. So a writer killed at any point after Create
// leaves a file that restores the original contents exactly: Apply takes
// it as it is (an unfinished file whose superblock copy differs from the
// device only because the kill fell between recording a superblock change
// and making it is accepted when the UUIDs agree). e2undo replays it
// without -f unless the kill fell in that same window, and in any case
// ends by marking the file system not clean (s_state, s_wtime and the
// superblock checksum then differ from the original).
//
// Lock order: Writer.mu only; no lock is held by the caller's device.
package undo

import (
	"encoding/binary"
	"errors"
	"fmt"

	"gofsck/internal/csum"
)

// Sizes and limits of the format (undo_io.c / e2undo.c).
const (
	// HeaderSize is the size of struct undo_header.
	HeaderSize = 512
	// KeySize is the size of struct undo_key.
	KeySize = 16
	// keyBlockHeaderSize is the magic, crc and reserved words before the keys.
	keyBlockHeaderSize = 16
	// MinBlockSize and MaxBlockSize bound the undo block size
	// (E2UNDO_MIN_BLOCK_SIZE, E2UNDO_MAX_BLOCK_SIZE).
	MinBlockSize = 1024
	MaxBlockSize = 1 << 20
	// MaxExtentBlocks bounds one key's size in undo blocks
	// (E2UNDO_MAX_EXTENT_BLOCKS): e2undo rejects a larger key.
	MaxExtentBlocks = 512
	// SuperblockOffset and SuperblockSize locate the primary superblock on
	// the device (relative to the file system offset).
	SuperblockOffset = 1024
	SuperblockSize   = 1024
)

// Magic numbers and flags.
const (
	// Magic starts every undo file (E2UNDO_MAGIC).
	Magic = "E2UNDO02"
	// KeyBlockMagic starts every key block (KEYBLOCK_MAGIC).
	KeyBlockMagic = 0xCADECADE
	// StateFinished is set in the header's state when the writer closed the
	// file (E2UNDO_STATE_FINISHED).
	StateFinished = 0x1
	// CompatFSOffset says fs_offset is valid
	// (E2UNDO_FEATURE_COMPAT_FS_OFFSET).
	CompatFSOffset = 0x1
)

// Offsets in struct undo_header.
const (
	offMagic       = 0   // magic[8]
	offNumKeys     = 8   // num_keys
	offSuperOffset = 16  // super_offset
	offKeyOffset   = 24  // key_offset
	offBlockSize   = 32  // block_size
	offFSBlockSize = 36  // fs_block_size
	offSbCrc       = 40  // sb_crc
	offState       = 44  // state
	offFCompat     = 48  // f_compat
	offFIncompat   = 52  // f_incompat
	offFRocompat   = 56  // f_rocompat
	offFSOffset    = 64  // fs_offset (after pad32)
	offHeaderCrc   = 508 // header_crc, after padding[436]
)

// Offsets in struct undo_key_block and struct undo_key.
const (
	offKbMagic = 0 // magic
	offKbCrc   = 4 // crc
	offKeyBlk  = 0 // fsblk
	offKeyCrc  = 8 // blk_crc
	offKeySize = 12
)

// Superblock fields the writer and the identity check need.
const (
	offSMtime         = 0x2C  // s_mtime
	offSWtime         = 0x30  // s_wtime
	offSMagic         = 0x38  // s_magic
	offSUUID          = 0x68  // s_uuid[16]
	offSKbytesWritten = 0x178 // s_kbytes_written
	offSWtimeHi       = 0x274 // s_wtime_hi
	offSMtimeHi       = 0x275 // s_mtime_hi
)

// Errors. Apply wraps them (with %w) in *KeyError or *MismatchError when
// there is more to say; test with errors.Is.
var (
	ErrNotUndoFile        = errors.New("undo: not an undo file")
	ErrHeaderChecksum     = errors.New("undo: header checksum doesn't match")
	ErrCorruptHeader      = errors.New("undo: corrupt undo file header")
	ErrBlockSizeTooLarge  = errors.New("undo: undo block size too large")
	ErrBlockSizeTooSmall  = errors.New("undo: undo block size too small")
	ErrUnknownFeature     = errors.New("undo: unknown undo file feature set")
	ErrWrongFilesystem    = errors.New("undo: the file system superblock doesn't match the undo file")
	ErrSuperblockChecksum = errors.New("undo: undo file superblock checksum doesn't match")
	ErrKeyMagic           = errors.New("undo: wrong key magic")
	ErrKeyChecksum        = errors.New("undo: key block checksum error")
	ErrBlockTooLong       = errors.New("undo: block is too long")
	ErrBlockChecksum      = errors.New("undo: checksum error in saved block")
	// ErrCorrupt marks a field that points outside the undo file or the
	// device.
	ErrCorrupt = errors.New("undo: corrupt undo file")
	// ErrReplay marks a read or write that failed while blocks were being
	// put back: the device is partly restored.
	ErrReplay = errors.New("undo: I/O error during replay")
	// ErrClosed is returned by a Writer after Close.
	ErrClosed = errors.New("undo: writer closed")
	// ErrRange is returned for a write outside the device, which no undo
	// file could take back.
	ErrRange = errors.New("undo: write outside the device")
)

// Header is struct undo_header, the first 512 bytes of an undo file.
type Header [HeaderSize]byte

func (h *Header) u32(off int) uint32 { return binary.LittleEndian.Uint32(h[off:]) }
func (h *Header) u64(off int) uint64 { return binary.LittleEndian.Uint64(h[off:]) }

// MagicOK reports whether the header starts with "E2UNDO02".
func (h *Header) MagicOK() bool { return string(h[offMagic:offMagic+8]) == Magic }

// NumKeys is how many keys the file holds (num_keys).
func (h *Header) NumKeys() uint64 { return h.u64(offNumKeys) }

// SuperOffset is the undo block holding the superblock copy (super_offset).
func (h *Header) SuperOffset() uint64 { return h.u64(offSuperOffset) }

// KeyOffset is the undo block of the first key block (key_offset).
func (h *Header) KeyOffset() uint64 { return h.u64(offKeyOffset) }

// BlockSize is the undo block size (block_size).
func (h *Header) BlockSize() uint32 { return h.u32(offBlockSize) }

// FSBlockSize is the unit of the keys' fsblk (fs_block_size).
func (h *Header) FSBlockSize() uint32 { return h.u32(offFSBlockSize) }

// SuperCRC is the CRC32C of the superblock copy, magic restored (sb_crc).
func (h *Header) SuperCRC() uint32 { return h.u32(offSbCrc) }

// State holds StateFinished once the writer closed the file (state).
func (h *Header) State() uint32 { return h.u32(offState) }

// Finished reports whether the writer closed the file.
func (h *Header) Finished() bool { return h.State()&StateFinished != 0 }

// Compat, Incompat and ROCompat are the feature words (f_compat,
// f_incompat, f_rocompat).
func (h *Header) Compat() uint32 { return h.u32(offFCompat) }

// Incompat is f_incompat; no incompatible feature is defined.
func (h *Header) Incompat() uint32 { return h.u32(offFIncompat) }

// ROCompat is f_rocompat; no read-only compatible feature is defined.
func (h *Header) ROCompat() uint32 { return h.u32(offFRocompat) }

// FSOffset is the byte offset of the file system on the device when the
// CompatFSOffset feature is set, else 0 (fs_offset).
func (h *Header) FSOffset() uint64 {
	if h.Compat()&CompatFSOffset == 0 {
		return 0
	}
	return h.u64(offFSOffset)
}

// HeaderCRC is the stored header checksum (header_crc).
func (h *Header) HeaderCRC() uint32 { return h.u32(offHeaderCrc) }

// ComputeCRC is the checksum the header should carry.
func (h *Header) ComputeCRC() uint32 { return csum.Crc32c(^uint32(0), h[:offHeaderCrc]) }

// setCRC stores ComputeCRC.
func (h *Header) setCRC() { binary.LittleEndian.PutUint32(h[offHeaderCrc:], h.ComputeCRC()) }

// Validate checks what e2undo checks before touching the device: the magic,
// the header checksum, nonzero sizes, the block size range and unknown
// features. With force, like e2undo -f, only the magic and nonzero sizes
// are required; the block sizes must still lie in 1 KiB..1 MiB, since
// Apply's buffers are sized from them.
func (h *Header) Validate(force bool) error {
	if !h.MagicOK() {
		return ErrNotUndoFile
	}
	if !force && h.HeaderCRC() != h.ComputeCRC() {
		return ErrHeaderChecksum
	}
	bs, fbs := h.BlockSize(), h.FSBlockSize()
	if bs == 0 || fbs == 0 {
		return ErrCorruptHeader
	}
	switch {
	case bs > MaxBlockSize:
		return ErrBlockSizeTooLarge
	case bs < MinBlockSize:
		return ErrBlockSizeTooSmall
	case fbs > MaxBlockSize || fbs < MinBlockSize:
		// The undo I/O manager never has a block size outside this
		// range (undo_set_blksize refuses it).
		return fmt.Errorf("%w: fs block size %d", ErrCorruptHeader, fbs)
	}
	if !force && (h.Incompat() != 0 || h.ROCompat() != 0) {
		return ErrUnknownFeature
	}
	return nil
}

// keyBlock is struct undo_key_block: a whole undo block of keys.
type keyBlock []byte

// keysPerBlock is KEYS_PER_BLOCK: the block minus one key's worth of header.
func keysPerBlock(bs int) int { return bs/KeySize - 1 }

func (kb keyBlock) magic() uint32 { return binary.LittleEndian.Uint32(kb[offKbMagic:]) }
func (kb keyBlock) crc() uint32   { return binary.LittleEndian.Uint32(kb[offKbCrc:]) }
func (kb keyBlock) key(i int) []byte {
	off := keyBlockHeaderSize + i*KeySize
	return kb[off : off+KeySize]
}

// computeCRC is the key block checksum: the whole block with crc zero.
func (kb keyBlock) computeCRC() uint32 {
	c := csum.Crc32c(^uint32(0), kb[:offKbCrc])
	c = csum.Crc32cZeros(c, 4)
	return csum.Crc32c(c, kb[offKbCrc+4:])
}

// seal sets the magic and the checksum.
func (kb keyBlock) seal() {
	binary.LittleEndian.PutUint32(kb[offKbMagic:], KeyBlockMagic)
	binary.LittleEndian.PutUint32(kb[offKbCrc:], kb.computeCRC())
}

// Key is one decoded undo_key and where its data lies in the undo file.
type Key struct {
	FSBlock   uint64 // device position in FSBlockSize units from the fs offset (fsblk)
	CRC       uint32 // CRC32C of the saved data (blk_crc)
	Size      uint32 // bytes saved (size)
	FileBlock uint64 // undo block where the data starts
	Index     int    // position in the file, from 0
}

func decodeKey(b []byte) (fsblk uint64, crc, size uint32) {
	return binary.LittleEndian.Uint64(b[offKeyBlk:]), binary.LittleEndian.Uint32(b[offKeyCrc:]),
		binary.LittleEndian.Uint32(b[offKeySize:])
}

func encodeKey(b []byte, fsblk uint64, crc, size uint32) {
	binary.LittleEndian.PutUint64(b[offKeyBlk:], fsblk)
	binary.LittleEndian.PutUint32(b[offKeyCrc:], crc)
	binary.LittleEndian.PutUint32(b[offKeySize:], size)
}

// superCopy turns a device superblock into the copy stored in the undo file
// (s_magic inverted) and returns sb_crc, the checksum of the original.
func superCopy(dst, sb []byte) uint32 {
	copy(dst, sb[:SuperblockSize])
	m := binary.LittleEndian.Uint16(dst[offSMagic:])
	binary.LittleEndian.PutUint16(dst[offSMagic:], ^m)
	return csum.Crc32c(^uint32(0), sb[:SuperblockSize])
}
