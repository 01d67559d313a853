package ondisk

import (
	"encoding/binary"

	"gofsck/internal/csum"
)

// SuperblockSize is the size of the ext2/3/4 superblock; it lives at byte
// offset SuperblockOffset of the device (and at the start of backup groups).
const (
	SuperblockSize   = 1024
	SuperblockOffset = 1024
	Magic            = 0xEF53
)

// Superblock field offsets, named after struct ext4_super_block.
const (
	offInodesCount       = 0x00  // s_inodes_count
	offBlocksCountLo     = 0x04  // s_blocks_count_lo
	offRBlocksCountLo    = 0x08  // s_r_blocks_count_lo
	offFreeBlocksLo      = 0x0C  // s_free_blocks_count_lo
	offFreeInodes        = 0x10  // s_free_inodes_count
	offFirstDataBlock    = 0x14  // s_first_data_block
	offLogBlockSize      = 0x18  // s_log_block_size
	offLogClusterSize    = 0x1C  // s_log_cluster_size
	offBlocksPerGroup    = 0x20  // s_blocks_per_group
	offClustersPerGroup  = 0x24  // s_clusters_per_group
	offInodesPerGroup    = 0x28  // s_inodes_per_group
	offMtime             = 0x2C  // s_mtime
	offWtime             = 0x30  // s_wtime
	offMntCount          = 0x34  // s_mnt_count
	offMaxMntCount       = 0x36  // s_max_mnt_count
	offMagic             = 0x38  // s_magic
	offState             = 0x3A  // s_state
	offErrors            = 0x3C  // s_errors
	offMinorRev          = 0x3E  // s_minor_rev_level
	offLastcheck         = 0x40  // s_lastcheck
	offCheckinterval     = 0x44  // s_checkinterval
	offCreatorOS         = 0x48  // s_creator_os
	offRevLevel          = 0x4C  // s_rev_level
	offFirstIno          = 0x54  // s_first_ino
	offInodeSize         = 0x58  // s_inode_size
	offBlockGroupNr      = 0x5A  // s_block_group_nr
	offFeatureCompat     = 0x5C  // s_feature_compat
	offFeatureIncompat   = 0x60  // s_feature_incompat
	offFeatureRoCompat   = 0x64  // s_feature_ro_compat
	offUUID              = 0x68  // s_uuid
	offVolumeName        = 0x78  // s_volume_name
	offLastMounted       = 0x88  // s_last_mounted
	offPreallocDirBlocks = 0xCD  // s_prealloc_dir_blocks
	offReservedGdtBlocks = 0xCE  // s_reserved_gdt_blocks
	offJournalUUID       = 0xD0  // s_journal_uuid
	offJournalInum       = 0xE0  // s_journal_inum
	offJournalDev        = 0xE4  // s_journal_dev
	offLastOrphan        = 0xE8  // s_last_orphan
	offHashSeed          = 0xEC  // s_hash_seed
	offDefHashVersion    = 0xFC  // s_def_hash_version
	offJnlBackupType     = 0xFD  // s_jnl_backup_type
	offDescSize          = 0xFE  // s_desc_size
	offFirstMetaBG       = 0x104 // s_first_meta_bg
	offMkfsTime          = 0x108 // s_mkfs_time
	offJnlBlocks         = 0x10C // s_jnl_blocks[17]
	offBlocksCountHi     = 0x150 // s_blocks_count_hi
	offRBlocksCountHi    = 0x154 // s_r_blocks_count_hi
	offFreeBlocksHi      = 0x158 // s_free_blocks_count_hi
	offMinExtraIsize     = 0x15C // s_min_extra_isize
	offWantExtraIsize    = 0x15E // s_want_extra_isize
	offFlags             = 0x160 // s_flags
	offMMPInterval       = 0x166 // s_mmp_update_interval
	offMMPBlock          = 0x168 // s_mmp_block
	offLogGroupsPerFlex  = 0x174 // s_log_groups_per_flex
	offChecksumType      = 0x175 // s_checksum_type
	offUsrQuotaInum      = 0x240 // s_usr_quota_inum
	offGrpQuotaInum      = 0x244 // s_grp_quota_inum
	offBackupBGs         = 0x24C // s_backup_bgs[2]
	offLpfIno            = 0x268 // s_lpf_ino
	offPrjQuotaInum      = 0x26C // s_prj_quota_inum
	offChecksumSeed      = 0x270 // s_checksum_seed
	offEncoding          = 0x27C // s_encoding
	offEncodingFlags     = 0x27E // s_encoding_flags
	offOrphanFileInum    = 0x280 // s_orphan_file_inum
	offSbChecksum        = 0x3FC // s_checksum
)

// Superblock state bits (s_state) and s_flags bits.
const (
	StateValid  = 0x0001
	StateError  = 0x0002
	StateOrphan = 0x0004

	FlagSignedHash   = 0x0001
	FlagUnsignedHash = 0x0002
	FlagTestFS       = 0x0004
)

// Creator OS values (s_creator_os).
const (
	OSLinux = 0
	OSHurd  = 1
)

// Superblock is a view over the 1024 bytes of a superblock.
type Superblock []byte

// NewSuperblock returns a view over b, which must hold at least
// SuperblockSize bytes.
func NewSuperblock(b []byte) (Superblock, error) {
	if len(b) < SuperblockSize {
		return nil, &FormatError{Struct: "superblock", Field: "length", Val: uint64(len(b))}
	}
	return Superblock(b[:SuperblockSize]), nil
}

func (s Superblock) u16(off int) uint16 { return binary.LittleEndian.Uint16(s[off:]) }
func (s Superblock) u32(off int) uint32 { return binary.LittleEndian.Uint32(s[off:]) }
func (s Superblock) u64(off int) uint64 { return binary.LittleEndian.Uint64(s[off:]) }

// Magic returns s_magic.
func (s Superblock) Magic() uint16 { return s.u16(offMagic) }

// InodesCount returns s_inodes_count.
func (s Superblock) InodesCount() uint32 { return s.u32(offInodesCount) }

// Is64bit reports whether the 64bit incompat feature is set.
func (s Superblock) Is64bit() bool { return s.FeatureIncompat()&Incompat64bit != 0 }

// BlocksCount returns s_blocks_count (hi half only with 64bit).
func (s Superblock) BlocksCount() uint64 {
	v := uint64(s.u32(offBlocksCountLo))
	if s.Is64bit() {
		v |= uint64(s.u32(offBlocksCountHi)) << 32
	}
	return v
}

// RBlocksCount returns s_r_blocks_count.
func (s Superblock) RBlocksCount() uint64 {
	v := uint64(s.u32(offRBlocksCountLo))
	if s.Is64bit() {
		v |= uint64(s.u32(offRBlocksCountHi)) << 32
	}
	return v
}

// FreeBlocksCount returns s_free_blocks_count.
func (s Superblock) FreeBlocksCount() uint64 {
	v := uint64(s.u32(offFreeBlocksLo))
	if s.Is64bit() {
		v |= uint64(s.u32(offFreeBlocksHi)) << 32
	}
	return v
}

// FreeInodesCount returns s_free_inodes_count.
func (s Superblock) FreeInodesCount() uint32 { return s.u32(offFreeInodes) }

// FirstDataBlock returns s_first_data_block.
func (s Superblock) FirstDataBlock() uint32 { return s.u32(offFirstDataBlock) }

// LogBlockSize returns s_log_block_size (block size = 1024 << it).
func (s Superblock) LogBlockSize() uint32 { return s.u32(offLogBlockSize) }

// LogClusterSize returns s_log_cluster_size.
func (s Superblock) LogClusterSize() uint32 { return s.u32(offLogClusterSize) }

// BlocksPerGroup returns s_blocks_per_group.
func (s Superblock) BlocksPerGroup() uint32 { return s.u32(offBlocksPerGroup) }

// ClustersPerGroup returns s_clusters_per_group.
func (s Superblock) ClustersPerGroup() uint32 { return s.u32(offClustersPerGroup) }

// InodesPerGroup returns s_inodes_per_group.
func (s Superblock) InodesPerGroup() uint32 { return s.u32(offInodesPerGroup) }

// Mtime returns s_mtime (last mount time).
func (s Superblock) Mtime() uint32 { return s.u32(offMtime) }

// Wtime returns s_wtime (last write time).
func (s Superblock) Wtime() uint32 { return s.u32(offWtime) }

// MkfsTime returns s_mkfs_time.
func (s Superblock) MkfsTime() uint32 { return s.u32(offMkfsTime) }

// MntCount returns s_mnt_count.
func (s Superblock) MntCount() uint16 { return s.u16(offMntCount) }

// MaxMntCount returns s_max_mnt_count (signed: -1 disables).
func (s Superblock) MaxMntCount() int16 { return int16(s.u16(offMaxMntCount)) }

// State returns s_state.
func (s Superblock) State() uint16 { return s.u16(offState) }

// Errors returns s_errors (behaviour on errors).
func (s Superblock) Errors() uint16 { return s.u16(offErrors) }

// LastCheck returns s_lastcheck.
func (s Superblock) LastCheck() uint32 { return s.u32(offLastcheck) }

// CheckInterval returns s_checkinterval in seconds.
func (s Superblock) CheckInterval() uint32 { return s.u32(offCheckinterval) }

// CreatorOS returns s_creator_os.
func (s Superblock) CreatorOS() uint32 { return s.u32(offCreatorOS) }

// RevLevel returns s_rev_level.
func (s Superblock) RevLevel() uint32 { return s.u32(offRevLevel) }

// FirstIno returns the first non-reserved inode (11 for revision 0).
func (s Superblock) FirstIno() uint32 {
	if s.RevLevel() == 0 {
		return 11
	}
	return s.u32(offFirstIno)
}

// RawFirstIno returns s_first_ino as stored.
func (s Superblock) RawFirstIno() uint32 { return s.u32(offFirstIno) }

// InodeSize returns the on-disk inode size (128 for revision 0).
func (s Superblock) InodeSize() uint16 {
	if s.RevLevel() == 0 {
		return 128
	}
	return s.u16(offInodeSize)
}

// BlockGroupNr returns s_block_group_nr (the group holding this copy).
func (s Superblock) BlockGroupNr() uint16 { return s.u16(offBlockGroupNr) }

// FeatureCompat returns s_feature_compat.
func (s Superblock) FeatureCompat() uint32 { return s.u32(offFeatureCompat) }

// FeatureIncompat returns s_feature_incompat.
func (s Superblock) FeatureIncompat() uint32 { return s.u32(offFeatureIncompat) }

// FeatureRoCompat returns s_feature_ro_compat.
func (s Superblock) FeatureRoCompat() uint32 { return s.u32(offFeatureRoCompat) }

// HasCompat, HasIncompat and HasRoCompat test feature bits.
func (s Superblock) HasCompat(m uint32) bool   { return s.FeatureCompat()&m != 0 }
func (s Superblock) HasIncompat(m uint32) bool { return s.FeatureIncompat()&m != 0 }
func (s Superblock) HasRoCompat(m uint32) bool { return s.FeatureRoCompat()&m != 0 }

// UUID returns s_uuid.
func (s Superblock) UUID() [16]byte { return [16]byte(s[offUUID : offUUID+16]) }

// VolumeName returns s_volume_name up to its first NUL.
func (s Superblock) VolumeName() []byte { return cstr(s[offVolumeName : offVolumeName+16]) }

// LastMounted returns s_last_mounted up to its first NUL.
func (s Superblock) LastMounted() []byte { return cstr(s[offLastMounted : offLastMounted+64]) }

// PreallocDirBlocks returns s_prealloc_dir_blocks.
func (s Superblock) PreallocDirBlocks() uint8 { return s[offPreallocDirBlocks] }

// ReservedGdtBlocks returns s_reserved_gdt_blocks.
func (s Superblock) ReservedGdtBlocks() uint16 { return s.u16(offReservedGdtBlocks) }

// JournalUUID returns s_journal_uuid.
func (s Superblock) JournalUUID() [16]byte {
	return [16]byte(s[offJournalUUID : offJournalUUID+16])
}

// JournalInum returns s_journal_inum.
func (s Superblock) JournalInum() uint32 { return s.u32(offJournalInum) }

// JournalDev returns s_journal_dev.
func (s Superblock) JournalDev() uint32 { return s.u32(offJournalDev) }

// LastOrphan returns s_last_orphan, the head of the orphan list.
func (s Superblock) LastOrphan() uint32 { return s.u32(offLastOrphan) }

// HashSeed returns s_hash_seed as four words.
func (s Superblock) HashSeed() [4]uint32 {
	var h [4]uint32
	for i := range h {
		h[i] = s.u32(offHashSeed + 4*i)
	}
	return h
}

// DefHashVersion returns s_def_hash_version.
func (s Superblock) DefHashVersion() uint8 { return s[offDefHashVersion] }

// JnlBackupType returns s_jnl_backup_type.
func (s Superblock) JnlBackupType() uint8 { return s[offJnlBackupType] }

// JnlBlock returns word i (0..16) of s_jnl_blocks.
func (s Superblock) JnlBlock(i int) uint32 {
	if i < 0 || i >= 17 {
		return 0
	}
	return s.u32(offJnlBlocks + 4*i)
}

// RawDescSize returns s_desc_size as stored.
func (s Superblock) RawDescSize() uint16 { return s.u16(offDescSize) }

// DescSize returns the group descriptor size in use: 32 without 64bit,
// otherwise s_desc_size (callers validate it first).
func (s Superblock) DescSize() int {
	if !s.Is64bit() {
		return GroupDescSize32
	}
	return int(s.RawDescSize())
}

// FirstMetaBG returns s_first_meta_bg.
func (s Superblock) FirstMetaBG() uint32 { return s.u32(offFirstMetaBG) }

// MinExtraIsize returns s_min_extra_isize.
func (s Superblock) MinExtraIsize() uint16 { return s.u16(offMinExtraIsize) }

// WantExtraIsize returns s_want_extra_isize.
func (s Superblock) WantExtraIsize() uint16 { return s.u16(offWantExtraIsize) }

// Flags returns s_flags.
func (s Superblock) Flags() uint32 { return s.u32(offFlags) }

// MMPBlock returns s_mmp_block.
func (s Superblock) MMPBlock() uint64 { return s.u64(offMMPBlock) }

// MMPInterval returns s_mmp_update_interval.
func (s Superblock) MMPInterval() uint16 { return s.u16(offMMPInterval) }

// LogGroupsPerFlex returns s_log_groups_per_flex.
func (s Superblock) LogGroupsPerFlex() uint8 { return s[offLogGroupsPerFlex] }

// ChecksumType returns s_checksum_type (1 = crc32c).
func (s Superblock) ChecksumType() uint8 { return s[offChecksumType] }

// UsrQuotaInum, GrpQuotaInum and PrjQuotaInum return the quota inodes.
func (s Superblock) UsrQuotaInum() uint32 { return s.u32(offUsrQuotaInum) }
func (s Superblock) GrpQuotaInum() uint32 { return s.u32(offGrpQuotaInum) }
func (s Superblock) PrjQuotaInum() uint32 { return s.u32(offPrjQuotaInum) }

// BackupBG returns s_backup_bgs[i] (sparse_super2).
func (s Superblock) BackupBG(i int) uint32 {
	if i < 0 || i > 1 {
		return 0
	}
	return s.u32(offBackupBGs + 4*i)
}

// LpfIno returns s_lpf_ino.
func (s Superblock) LpfIno() uint32 { return s.u32(offLpfIno) }

// ChecksumSeedField returns s_checksum_seed as stored.
func (s Superblock) ChecksumSeedField() uint32 { return s.u32(offChecksumSeed) }

// Encoding returns s_encoding and s_encoding_flags (casefold).
func (s Superblock) Encoding() (uint16, uint16) {
	return s.u16(offEncoding), s.u16(offEncodingFlags)
}

// OrphanFileInum returns s_orphan_file_inum.
func (s Superblock) OrphanFileInum() uint32 { return s.u32(offOrphanFileInum) }

// Checksum returns s_checksum.
func (s Superblock) Checksum() uint32 { return s.u32(offSbChecksum) }

// ComputeChecksum computes the metadata_csum superblock checksum.
func (s Superblock) ComputeChecksum() uint32 {
	return csum.Crc32c(^uint32(0), s[:offSbChecksum])
}

// ChecksumValid reports whether s_checksum matches (true without
// metadata_csum).
func (s Superblock) ChecksumValid() bool {
	if !s.HasRoCompat(RoCompatMetadataCsum) {
		return true
	}
	return s.ComputeChecksum() == s.Checksum()
}

// CsumSeed is the seed of every metadata_csum checksum except the
// superblock's: s_checksum_seed with csum_seed, else crc32c(~0, uuid).
func (s Superblock) CsumSeed() uint32 {
	if s.HasIncompat(IncompatCsumSeed) {
		return s.ChecksumSeedField()
	}
	return csum.Crc32c(^uint32(0), s[offUUID:offUUID+16])
}

// BlockSize returns 1024 << s_log_block_size, or 0 when the exponent is
// above 64 KiB (invalid).
func (s Superblock) BlockSize() int {
	l := s.LogBlockSize()
	if l > 6 {
		return 0
	}
	return 1024 << l
}

// ClusterRatioBits returns log2(blocks per cluster), 0 without bigalloc.
func (s Superblock) ClusterRatioBits() uint32 {
	if !s.HasRoCompat(RoCompatBigalloc) {
		return 0
	}
	if s.LogClusterSize() < s.LogBlockSize() {
		return 0
	}
	return s.LogClusterSize() - s.LogBlockSize()
}

func cstr(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}
