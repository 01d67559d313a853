package ondisk

import (
	"encoding/binary"

	"gofsck/internal/csum"
)

// Inode sizes and well-known inode numbers.
const (
	GoodOldInodeSize = 128
	NBlocks          = 15 // i_block words
	IBlockSize       = 60 // bytes of i_block
	// IBlockOffset and GenerationOffset are the offsets of i_block and
	// i_generation, for copies of an inode's fields by range (the
	// fast-commit replay's).
	IBlockOffset     = offIBlock
	GenerationOffset = offIGeneration

	BadBlocksIno    = 1
	RootIno         = 2
	UsrQuotaIno     = 3
	GrpQuotaIno     = 4
	BootLoaderIno   = 5
	UndelDirIno     = 6
	ResizeIno       = 7
	JournalIno      = 8
	ExcludeIno      = 9
	ReplicaIno      = 10
	GoodOldFirstIno = 11
)

// Inode field offsets, named after struct ext4_inode.
const (
	offIMode        = 0x00 // i_mode
	offIUID         = 0x02 // i_uid
	offISizeLo      = 0x04 // i_size_lo
	offIAtime       = 0x08 // i_atime
	offICtime       = 0x0C // i_ctime
	offIMtime       = 0x10 // i_mtime
	offIDtime       = 0x14 // i_dtime
	offIGID         = 0x18 // i_gid
	offILinks       = 0x1A // i_links_count
	offIBlocksLo    = 0x1C // i_blocks_lo
	offIFlags       = 0x20 // i_flags
	offIVersion     = 0x24 // osd1.l_i_version
	offIBlock       = 0x28 // i_block[15]
	offIGeneration  = 0x64 // i_generation
	offIFileACLLo   = 0x68 // i_file_acl_lo
	offISizeHigh    = 0x6C // i_size_high
	offIFaddr       = 0x70 // i_obso_faddr
	offIBlocksHi    = 0x74 // osd2.l_i_blocks_high
	offIFileACLHi   = 0x76 // osd2.l_i_file_acl_high
	offIUIDHi       = 0x78 // osd2.l_i_uid_high
	offIGIDHi       = 0x7A // osd2.l_i_gid_high
	offIChecksumLo  = 0x7C // osd2.l_i_checksum_lo
	offHurdFrag     = 0x74 // osd2.h_i_frag (Hurd)
	offHurdFsize    = 0x75 // osd2.h_i_fsize (Hurd)
	offIExtraIsize  = 0x80 // i_extra_isize
	offIChecksumHi  = 0x82 // i_checksum_hi
	offICtimeExtra  = 0x84 // i_ctime_extra
	offIMtimeExtra  = 0x88 // i_mtime_extra
	offIAtimeExtra  = 0x8C // i_atime_extra
	offICrtime      = 0x90 // i_crtime
	offICrtimeExtra = 0x94 // i_crtime_extra
	offIVersionHi   = 0x98 // i_version_hi
	offIProjid      = 0x9C // i_projid
)

// Inode flags (i_flags).
const (
	FlagSecrm       = 0x00000001
	FlagUnrm        = 0x00000002
	FlagCompr       = 0x00000004
	FlagSync        = 0x00000008
	FlagImmutable   = 0x00000010
	FlagAppend      = 0x00000020
	FlagNodump      = 0x00000040
	FlagNoatime     = 0x00000080
	FlagEncrypt     = 0x00000800
	FlagIndex       = 0x00001000
	FlagImagic      = 0x00002000
	FlagJournalData = 0x00004000
	FlagHugeFile    = 0x00040000
	FlagExtents     = 0x00080000
	FlagVerity      = 0x00100000
	FlagEAInode     = 0x00200000
	FlagInlineData  = 0x10000000
	FlagProjinherit = 0x20000000
	FlagCasefold    = 0x40000000
)

// File type bits of i_mode.
const (
	SIFMT   = 0xF000
	SIFSOCK = 0xC000
	SIFLNK  = 0xA000
	SIFREG  = 0x8000
	SIFBLK  = 0x6000
	SIFDIR  = 0x4000
	SIFCHR  = 0x2000
	SIFIFO  = 0x1000
)

// Inode is a view over one on-disk inode (128 bytes or s_inode_size).
type Inode []byte

func (n Inode) u16(off int) uint16 { return binary.LittleEndian.Uint16(n[off:]) }
func (n Inode) u32(off int) uint32 { return binary.LittleEndian.Uint32(n[off:]) }

// Mode returns i_mode.
func (n Inode) Mode() uint16 { return n.u16(offIMode) }

// Type returns the file type bits of i_mode.
func (n Inode) Type() uint16 { return n.Mode() & SIFMT }

// IsDir, IsReg and IsSymlink test the file type.
func (n Inode) IsDir() bool     { return n.Type() == SIFDIR }
func (n Inode) IsReg() bool     { return n.Type() == SIFREG }
func (n Inode) IsSymlink() bool { return n.Type() == SIFLNK }

// UID returns the owner (low and high halves).
func (n Inode) UID() uint32 { return uint32(n.u16(offIUID)) | uint32(n.u16(offIUIDHi))<<16 }

// GID returns the group (low and high halves).
func (n Inode) GID() uint32 { return uint32(n.u16(offIGID)) | uint32(n.u16(offIGIDHi))<<16 }

// Size returns i_size (lo | size_high << 32). For directories size_high is
// only meaningful with largedir; callers decide.
func (n Inode) Size() uint64 {
	return uint64(n.u32(offISizeLo)) | uint64(n.u32(offISizeHigh))<<32
}

// SizeHigh returns i_size_high.
func (n Inode) SizeHigh() uint32 { return n.u32(offISizeHigh) }

// Atime, Ctime, Mtime and Dtime return the 32-bit base timestamps.
func (n Inode) Atime() uint32 { return n.u32(offIAtime) }
func (n Inode) Ctime() uint32 { return n.u32(offICtime) }
func (n Inode) Mtime() uint32 { return n.u32(offIMtime) }
func (n Inode) Dtime() uint32 { return n.u32(offIDtime) }

// LinksCount returns i_links_count.
func (n Inode) LinksCount() uint16 { return n.u16(offILinks) }

// BlocksLo returns i_blocks_lo; BlocksHi returns l_i_blocks_high.
func (n Inode) BlocksLo() uint32 { return n.u32(offIBlocksLo) }
func (n Inode) BlocksHi() uint16 { return n.u16(offIBlocksHi) }

// Flags returns i_flags.
func (n Inode) Flags() uint32 { return n.u32(offIFlags) }

// Version returns osd1 (l_i_version; the EA-inode refcount low half).
func (n Inode) Version() uint32 { return n.u32(offIVersion) }

// Block returns i_block word i (0..14).
func (n Inode) Block(i int) uint32 {
	if i < 0 || i >= NBlocks {
		return 0
	}
	return n.u32(offIBlock + 4*i)
}

// IBlock returns the raw 60-byte i_block area.
func (n Inode) IBlock() []byte { return n[offIBlock : offIBlock+IBlockSize] }

// Generation returns i_generation.
func (n Inode) Generation() uint32 { return n.u32(offIGeneration) }

// FileACLLo returns i_file_acl_lo; FileACLHi returns l_i_file_acl_high.
func (n Inode) FileACLLo() uint32 { return n.u32(offIFileACLLo) }
func (n Inode) FileACLHi() uint16 { return n.u16(offIFileACLHi) }

// FileACL returns the EA block number; the high half is used only with 64bit.
func (n Inode) FileACL(is64 bool) uint64 {
	v := uint64(n.FileACLLo())
	if is64 {
		v |= uint64(n.FileACLHi()) << 32
	}
	return v
}

// Faddr returns i_obso_faddr.
func (n Inode) Faddr() uint32 { return n.u32(offIFaddr) }

// HurdFrag and HurdFsize return the Hurd fragment fields.
func (n Inode) HurdFrag() uint8  { return n[offHurdFrag] }
func (n Inode) HurdFsize() uint8 { return n[offHurdFsize] }

// ExtraIsize returns i_extra_isize, 0 for 128-byte inodes.
func (n Inode) ExtraIsize() uint16 {
	if len(n) <= GoodOldInodeSize {
		return 0
	}
	return n.u16(offIExtraIsize)
}

// hasExtraField reports whether the field ending at off+size is covered by
// i_extra_isize.
func (n Inode) hasExtraField(off, size int) bool {
	e := int(n.ExtraIsize())
	return len(n) > GoodOldInodeSize && GoodOldInodeSize+e >= off+size && off+size <= len(n)
}

// ExtraTime returns the *_extra word for the given base-time offset, and
// whether it exists.
func (n Inode) extraTime(off int) (uint32, bool) {
	if !n.hasExtraField(off, 4) {
		return 0, false
	}
	return n.u32(off), true
}

// CtimeExtra, MtimeExtra, AtimeExtra and CrtimeExtra return the extra
// timestamp words when present.
func (n Inode) CtimeExtra() (uint32, bool)  { return n.extraTime(offICtimeExtra) }
func (n Inode) MtimeExtra() (uint32, bool)  { return n.extraTime(offIMtimeExtra) }
func (n Inode) AtimeExtra() (uint32, bool)  { return n.extraTime(offIAtimeExtra) }
func (n Inode) CrtimeExtra() (uint32, bool) { return n.extraTime(offICrtimeExtra) }

// VersionHi returns i_version_hi when present.
func (n Inode) VersionHi() uint32 {
	if !n.hasExtraField(offIVersionHi, 4) {
		return 0
	}
	return n.u32(offIVersionHi)
}

// Checksum returns the stored inode checksum: the low 16 bits, plus the high
// 16 when i_extra_isize covers i_checksum_hi.
func (n Inode) Checksum() uint32 {
	v := uint32(n.u16(offIChecksumLo))
	if n.hasExtraField(offIChecksumHi, 2) {
		v |= uint32(n.u16(offIChecksumHi)) << 16
	}
	return v
}

// ComputeChecksum computes the metadata_csum inode checksum:
// crc32c(seed, le32 ino, le32 generation, inode with checksum fields
// zeroed). Only the bits that are stored are meaningful.
func (n Inode) ComputeChecksum(seed, ino uint32) uint32 {
	c := csum.Crc32cUint32(seed, ino)
	c = csum.Crc32cUint32(c, n.Generation())
	c = csum.Crc32c(c, n[:offIChecksumLo])
	c = csum.Crc32cZeros(c, 2)
	c = csum.Crc32c(c, n[offIChecksumLo+2:GoodOldInodeSize])
	if len(n) > GoodOldInodeSize {
		hasHi := n.hasExtraField(offIChecksumHi, 2)
		c = csum.Crc32c(c, n[GoodOldInodeSize:offIChecksumHi])
		if hasHi {
			c = csum.Crc32cZeros(c, 2)
		} else {
			c = csum.Crc32c(c, n[offIChecksumHi:offIChecksumHi+2])
		}
		c = csum.Crc32c(c, n[offIChecksumHi+2:])
	}
	return c
}

// ChecksumValid reports whether the inode checksum verifies. An inode
// whose first 128 bytes are zero always verifies (unused slots of a fresh
// table): the library looks no further, whatever the extra fields hold.
func (n Inode) ChecksumValid(seed, ino uint32) bool {
	c := n.ComputeChecksum(seed, ino)
	stored := n.Checksum()
	if !n.hasExtraField(offIChecksumHi, 2) {
		c &= 0xFFFF
	}
	if c == stored {
		return true
	}
	for _, b := range n[:min(len(n), GoodOldInodeSize)] {
		if b != 0 {
			return false
		}
	}
	return true
}

// InlineEA returns the in-inode extended attribute area (after
// 128+i_extra_isize), or nil if there is none or i_extra_isize is out of
// range.
func (n Inode) InlineEA() []byte {
	if len(n) <= GoodOldInodeSize {
		return nil
	}
	start := GoodOldInodeSize + int(n.ExtraIsize())
	if start+4 > len(n) {
		return nil
	}
	return n[start:]
}
