package ondisk

import "encoding/binary"

// Setters and small readers for the library's extended-attribute writers
// and the bad-block, orphan and superblock updates (internal/ext2fs).

// SetMagic, SetRefcount and SetBlocks store the EA block header's
// h_magic, h_refcount and h_blocks.
func (x XattrBlock) SetMagic(v uint32)    { binary.LittleEndian.PutUint32(x[offXhMagic:], v) }
func (x XattrBlock) SetRefcount(v uint32) { binary.LittleEndian.PutUint32(x[offXhRefcount:], v) }
func (x XattrBlock) SetBlocks(v uint32)   { binary.LittleEndian.PutUint32(x[offXhBlocks:], v) }

// SetChecksum stores h_checksum computed for the block at blk
// (ComputeChecksum).
func (x XattrBlock) SetChecksum(seed uint32, blk uint64) {
	binary.LittleEndian.PutUint32(x[offXhChecksum:], x.ComputeChecksum(seed, blk))
}

// HasXattrMagic reports whether area (an in-inode attribute area) starts
// with the attribute magic.
func HasXattrMagic(area []byte) bool {
	return len(area) >= XattrIHeaderSize && binary.LittleEndian.Uint32(area) == XattrMagic
}

// SetXattrMagic stores the in-inode area's magic.
func SetXattrMagic(area []byte) { binary.LittleEndian.PutUint32(area, XattrMagic) }

// XattrEndAt reports whether the 4 bytes at off of an entry table are
// the end marker (a zero first word); the caller has checked they are
// inside area.
func XattrEndAt(area []byte, off int) bool { return binary.LittleEndian.Uint32(area[off:]) == 0 }

// PutXattrEntry writes an entry's fixed part and name at off of an entry
// table: e_name_len, e_name_index, e_value_offs, e_value_inum,
// e_value_size (its hash is SetXattrEntryHash's); the caller has checked
// that XattrEntryLen(len(name)) bytes fit.
func PutXattrEntry(area []byte, off int, index uint8, name []byte, valueOffs uint16, inum, size uint32) {
	e := area[off:]
	e[0] = uint8(len(name))
	e[1] = index
	binary.LittleEndian.PutUint16(e[2:], valueOffs)
	binary.LittleEndian.PutUint32(e[4:], inum)
	binary.LittleEndian.PutUint32(e[8:], size)
	copy(e[XattrEntrySize:], name)
}

// SetXattrEntryHash stores e_hash of the entry at off.
func SetXattrEntryHash(area []byte, off int, h uint32) {
	binary.LittleEndian.PutUint32(area[off+12:], h)
}

// SetInodesCount stores s_inodes_count.
func (s Superblock) SetInodesCount(v uint32) { s.put32(offInodesCount, v) }

// SetRevLevel, SetFirstIno and SetInodeSize store s_rev_level,
// s_first_ino and s_inode_size as given (revision 0 has the last two
// implied).
func (s Superblock) SetRevLevel(v uint32)  { s.put32(offRevLevel, v) }
func (s Superblock) SetFirstIno(v uint32)  { s.put32(offFirstIno, v) }
func (s Superblock) SetInodeSize(v uint16) { s.put16(offInodeSize, v) }

// SetFlags stores s_flags.
func (s Superblock) SetFlags(v uint32) { s.put32(offFlags, v) }

// SetUUID stores s_uuid.
func (s Superblock) SetUUID(u [16]byte) { copy(s[offUUID:offUUID+16], u[:]) }

// RawBlocksCount returns s_blocks_count_lo and s_blocks_count_hi as
// stored, whatever the 64bit feature says.
func (s Superblock) RawBlocksCount() (lo, hi uint32) {
	return s.u32(offBlocksCountLo), s.u32(offBlocksCountHi)
}

// Crtime returns i_crtime; the caller has checked that i_extra_isize
// covers it (CrtimeExtra).
func (n Inode) Crtime() uint32 { return n.u32(offICrtime) }

// SetCtimeExtra, SetMtimeExtra, SetAtimeExtra and SetCrtimeExtra store
// the extra time words; the caller has checked that the inode holds them
// (CtimeExtra...).
func (n Inode) SetCtimeExtra(v uint32)  { n.put32(offICtimeExtra, v) }
func (n Inode) SetMtimeExtra(v uint32)  { n.put32(offIMtimeExtra, v) }
func (n Inode) SetAtimeExtra(v uint32)  { n.put32(offIAtimeExtra, v) }
func (n Inode) SetCrtimeExtra(v uint32) { n.put32(offICrtimeExtra, v) }

// EncryptedSymlinkLen is the length an encrypted symlink's target
// (struct fscrypt_symlink_data) takes: its 2-byte ciphertext length and
// the ciphertext.
func EncryptedSymlinkLen(data []byte) int { return int(binary.LittleEndian.Uint16(data)) + 2 }

// DirentIno returns the inode field of the entry at off of a directory
// block; the caller has checked that its header fits.
func DirentIno(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }

// SetDirentIno stores the inode field of the entry at off.
func SetDirentIno(b []byte, off int, ino uint32) { binary.LittleEndian.PutUint32(b[off:], ino) }

// SetDirentFileType stores the file type byte of the entry at off
// (filetype feature).
func SetDirentFileType(b []byte, off int, ft uint8) { b[off+7] = ft }
