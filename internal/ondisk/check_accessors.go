package ondisk

import "encoding/binary"

// Accessors and setters for the fields the checker used to read or write
// at raw offsets of its own (issue 17: the on-disk layout lives only in
// this package).

// Quota types, the index of Superblock.QuotaInum (USRQUOTA, GRPQUOTA,
// PRJQUOTA).
const (
	UsrQuota  = 0
	GrpQuota  = 1
	PrjQuota  = 2
	MaxQuotas = 3 // EXT4_MAXQUOTAS
)

// quotaInumOff holds the offset of each quota type's s_*_quota_inum.
var quotaInumOff = [MaxQuotas]int{offUsrQuotaInum, offGrpQuotaInum, offPrjQuotaInum}

// QuotaInum returns the quota inode of quota type t (UsrQuota, GrpQuota
// or PrjQuota); 0 for any other t.
func (s Superblock) QuotaInum(t int) uint32 {
	if t < 0 || t >= MaxQuotas {
		return 0
	}
	return s.u32(quotaInumOff[t])
}

// SetQuotaInum stores the quota inode of quota type t; another t is
// ignored.
func (s Superblock) SetQuotaInum(t int, v uint32) {
	if t < 0 || t >= MaxQuotas {
		return
	}
	s.put32(quotaInumOff[t], v)
}

// SetChecksumSeedField stores s_checksum_seed (ChecksumSeedField).
func (s Superblock) SetChecksumSeedField(v uint32) { s.put32(offChecksumSeed, v) }

// SetMinExtraIsize and SetWantExtraIsize store s_min_extra_isize and
// s_want_extra_isize.
func (s Superblock) SetMinExtraIsize(v uint16)  { s.put16(offMinExtraIsize, v) }
func (s Superblock) SetWantExtraIsize(v uint16) { s.put16(offWantExtraIsize, v) }

// SetReservedGdtBlocks stores s_reserved_gdt_blocks.
func (s Superblock) SetReservedGdtBlocks(v uint16) { s.put16(offReservedGdtBlocks, v) }

// SetSizeHigh stores i_size_high alone (SetSize stores both halves).
func (n Inode) SetSizeHigh(v uint32) { n.put32(offISizeHigh, v) }

// SetFaddr stores the obsolete fragment address i_obso_faddr.
func (n Inode) SetFaddr(v uint32) { n.put32(offIFaddr, v) }

// SetHurdFrag and SetHurdFsize store the Hurd's osd2.h_i_frag and
// h_i_fsize (the bytes Linux uses for l_i_blocks_high).
func (n Inode) SetHurdFrag(v uint8)  { n[offHurdFrag] = v }
func (n Inode) SetHurdFsize(v uint8) { n[offHurdFsize] = v }

// SetFileACLHi stores osd2.l_i_file_acl_high alone (SetFileACL stores
// both halves).
func (n Inode) SetFileACLHi(v uint16) { n.put16(offIFileACLHi, v) }

// EARefCount is an EA inode's reference count (ext2fs_get_ea_inode_ref):
// its high word lives in i_ctime, its low word in osd1.l_i_version.
func (n Inode) EARefCount() uint64 { return uint64(n.Ctime())<<32 | uint64(n.Version()) }

// SetEARefCount stores an EA inode's reference count
// (ext2fs_set_ea_inode_ref).
func (n Inode) SetEARefCount(v uint64) {
	n.put32(offICtime, uint32(v>>32))
	n.put32(offIVersion, uint32(v))
}

// Directory entry layout beyond the fixed header.
const (
	// DirentHashSize is the size of the hash and minor hash stored after
	// the name in encrypted+casefolded directories
	// (EXT2_DIR_ENTRY_HASH_LEN).
	DirentHashSize = 8
	// InlineDotDotSize is the parent inode number that opens an inline
	// directory's data, in place of '.' and '..' entries
	// (EXT4_INLINE_DATA_DOTDOT_SIZE).
	InlineDotDotSize = 4
	// DxBlockMask keeps the block of a dx_entry: its top 4 bits are
	// reserved (dx_get_block).
	DxBlockMask = 0x0FFFFFFF

	offDeRecLen = 4 // rec_len, after the 4-byte inode
)

// DirentRawRecLen returns the stored rec_len of the entry at off, not
// decoded for 64 KiB blocks. The caller has checked that the entry's
// header lies in b (DecodeDirent).
func DirentRawRecLen(b []byte, off int) uint16 {
	return binary.LittleEndian.Uint16(b[off+offDeRecLen:])
}

// DirentRecLen returns the rec_len of the entry at off in bytes
// (DecodeRecLen of DirentRawRecLen).
func DirentRecLen(b []byte, off, blockSize int) int {
	return DecodeRecLen(DirentRawRecLen(b, off), blockSize)
}

// SetDirentRawRecLen stores v as the rec_len of the entry at off, as is.
func SetDirentRawRecLen(b []byte, off int, v uint16) {
	binary.LittleEndian.PutUint16(b[off+offDeRecLen:], v)
}

// InlineDirParent returns the parent inode number stored at the start of
// an inline directory's data; 0 if b is shorter than that.
func InlineDirParent(b []byte) uint32 {
	if len(b) < InlineDotDotSize {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

// direntHashOff is where the stored hashes of the entry at off with a name
// of nameLen bytes begin: after the name, padded to 4 bytes
// (EXT2_DIRENT_HASHES).
func direntHashOff(off, nameLen int) int { return off + DirentHeaderSize + (nameLen+3)&^3 }

// DirentHash returns the hash stored after the name of the entry at off,
// as e2fsck reads it whether or not rec_len holds it; ok is false when its
// 4 bytes do not fit in b.
func DirentHash(b []byte, off, nameLen int) (hash uint32, ok bool) {
	h := direntHashOff(off, nameLen)
	if !inRange(h, 4, len(b)) {
		return 0, false
	}
	return binary.LittleEndian.Uint32(b[h:]), true
}

// DirentHashes returns the hash and minor hash stored after the name of
// the entry at off; ok is false when their 8 bytes do not fit in b.
func DirentHashes(b []byte, off, nameLen int) (hash, minor uint32, ok bool) {
	h := direntHashOff(off, nameLen)
	if !inRange(h, DirentHashSize, len(b)) {
		return 0, 0, false
	}
	return binary.LittleEndian.Uint32(b[h:]), binary.LittleEndian.Uint32(b[h+4:]), true
}

// SetDirentHashes stores the hash and minor hash after the name of the
// entry at off; nothing is written when they do not fit in b.
func SetDirentHashes(b []byte, off, nameLen int, hash, minor uint32) {
	h := direntHashOff(off, nameLen)
	if !inRange(h, DirentHashSize, len(b)) {
		return
	}
	binary.LittleEndian.PutUint32(b[h:], hash)
	binary.LittleEndian.PutUint32(b[h+4:], minor)
}

// HasIbodyXattrHeader reports whether an in-inode extended attribute area
// (Inode.InlineEA) opens with the xattr magic, its whole 4-byte header.
func HasIbodyXattrHeader(area []byte) bool {
	return len(area) >= XattrIHeaderSize && binary.LittleEndian.Uint32(area) == XattrMagic
}
