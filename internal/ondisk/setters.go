package ondisk

import "encoding/binary"

// Setters for the fields a repair changes. They write into the decoded
// byte slice; the caller recomputes checksums (SetChecksum methods) once
// all fields are set.

func (s Superblock) put16(off int, v uint16) { binary.LittleEndian.PutUint16(s[off:], v) }
func (s Superblock) put32(off int, v uint32) { binary.LittleEndian.PutUint32(s[off:], v) }

// SetFreeBlocksCount stores s_free_blocks_count (the high half only with
// 64bit).
func (s Superblock) SetFreeBlocksCount(v uint64) {
	s.put32(offFreeBlocksLo, uint32(v))
	if s.Is64bit() {
		s.put32(offFreeBlocksHi, uint32(v>>32))
	}
}

// SetFreeInodesCount stores s_free_inodes_count.
func (s Superblock) SetFreeInodesCount(v uint32) { s.put32(offFreeInodes, v) }

// SetState stores s_state.
func (s Superblock) SetState(v uint16) { s.put16(offState, v) }

// SetLastCheck stores s_lastcheck.
func (s Superblock) SetLastCheck(v uint32) { s.put32(offLastcheck, v) }

// SetWtime stores s_wtime.
func (s Superblock) SetWtime(v uint32) { s.put32(offWtime, v) }

// SetMntCount stores s_mnt_count.
func (s Superblock) SetMntCount(v uint16) { s.put16(offMntCount, v) }

// SetLastOrphan stores s_last_orphan.
func (s Superblock) SetLastOrphan(v uint32) { s.put32(offLastOrphan, v) }

// SetJournalInum sets s_journal_inum.
func (s Superblock) SetJournalInum(v uint32) { s.put32(offJournalInum, v) }

// SetBlockGroupNr stores s_block_group_nr (the group a backup copy is in).
func (s Superblock) SetBlockGroupNr(v uint16) { s.put16(offBlockGroupNr, v) }

// SetFeatureCompat, SetFeatureIncompat and SetFeatureRoCompat store the
// feature words.
func (s Superblock) SetFeatureCompat(v uint32)   { s.put32(offFeatureCompat, v) }
func (s Superblock) SetFeatureIncompat(v uint32) { s.put32(offFeatureIncompat, v) }
func (s Superblock) SetFeatureRoCompat(v uint32) { s.put32(offFeatureRoCompat, v) }

// SetFirstMetaBG stores s_first_meta_bg.
func (s Superblock) SetFirstMetaBG(v uint32) { s.put32(offFirstMetaBG, v) }

// Error-tracking fields (s_error_count to s_last_error_func), which
// e2fsck zeroes after a completed repair.
const (
	offErrorStart = 0x194
	offErrorEnd   = 0x200
)

// ClearErrorInfo zeroes s_error_count and the first/last error records.
func (s Superblock) ClearErrorInfo() { clear(s[offErrorStart:offErrorEnd]) }

// SetChecksum recomputes s_checksum when the filesystem has metadata_csum.
func (s Superblock) SetChecksum() {
	if s.HasRoCompat(RoCompatMetadataCsum) {
		s.put32(offSbChecksum, s.ComputeChecksum())
	}
}

// SetFreeBlocks stores the group's free block count.
func (g GroupDesc) SetFreeBlocks(v uint32) { g.putSplit(offBgFreeBlocksLo, offBgFreeBlocksHi, v) }

// SetFreeInodes stores the group's free inode count.
func (g GroupDesc) SetFreeInodes(v uint32) { g.putSplit(offBgFreeInodesLo, offBgFreeInodesHi, v) }

// SetUsedDirs stores the group's directory count.
func (g GroupDesc) SetUsedDirs(v uint32) { g.putSplit(offBgUsedDirsLo, offBgUsedDirsHi, v) }

// SetBlockBitmapCsum and SetInodeBitmapCsum store bitmap checksums (the
// high half only in 64-byte descriptors).
func (g GroupDesc) SetBlockBitmapCsum(v uint32) {
	g.putSplitCsum(offBgBlockBitmapCsumLo, offBgBlockBitmapCsumHi, v)
}
func (g GroupDesc) SetInodeBitmapCsum(v uint32) {
	g.putSplitCsum(offBgInodeBitmapCsumLo, offBgInodeBitmapCsumHi, v)
}

func (g GroupDesc) putSplit(lo, hi int, v uint32) {
	g.put16(lo, uint16(v))
	if len(g) >= GroupDescSize64 {
		g.put16(hi, uint16(v>>16))
	}
}

func (g GroupDesc) putSplitCsum(lo, hi int, v uint32) {
	g.put16(lo, uint16(v))
	if len(g) >= bgChecksumHiEndOff {
		g.put16(hi, uint16(v>>16))
	}
}

// UpdateChecksum recomputes bg_checksum of group (no-op without
// uninit_bg/metadata_csum).
func (g GroupDesc) UpdateChecksum(sb Superblock, group uint32) {
	if sum, ok := g.ComputeChecksum(sb, group); ok {
		g.SetChecksum(sum)
	}
}

func (n Inode) put16(off int, v uint16) { binary.LittleEndian.PutUint16(n[off:], v) }
func (n Inode) put32(off int, v uint32) { binary.LittleEndian.PutUint32(n[off:], v) }

// SetMode stores i_mode.
func (n Inode) SetMode(v uint16) { n.put16(offIMode, v) }

// SetLinksCount stores i_links_count.
func (n Inode) SetLinksCount(v uint16) { n.put16(offILinks, v) }

// SetDtime stores i_dtime.
func (n Inode) SetDtime(v uint32) { n.put32(offIDtime, v) }

// SetFlags stores i_flags.
func (n Inode) SetFlags(v uint32) { n.put32(offIFlags, v) }

// SetSize stores i_size (both halves).
func (n Inode) SetSize(v uint64) {
	n.put32(offISizeLo, uint32(v))
	n.put32(offISizeHigh, uint32(v>>32))
}

// SetBlocks stores i_blocks in 512-byte units (the high 16 bits in
// osd2, used with huge_file).
func (n Inode) SetBlocks(v uint64) {
	n.put32(offIBlocksLo, uint32(v))
	n.put16(offIBlocksHi, uint16(v>>32))
}

// SetBlocksLo stores i_blocks_lo alone, as the library does where it
// leaves the high half to huge_file code (ext2fs_extent_delete lowers
// only the low 32 bits).
func (n Inode) SetBlocksLo(v uint32) { n.put32(offIBlocksLo, v) }

// SetBlocksHi stores osd2.l_i_blocks_high alone (ext2fs_iblk_set writes
// it only with huge_file).
func (n Inode) SetBlocksHi(v uint16) { n.put16(offIBlocksHi, v) }

// SetFileACL stores i_file_acl (the high half with 64bit).
func (n Inode) SetFileACL(v uint64) {
	n.put32(offIFileACLLo, uint32(v))
	n.put16(offIFileACLHi, uint16(v>>32))
}

// SetChecksum stores the metadata_csum checksum of inode ino (both halves
// when the inode has room for the high one).
func (n Inode) SetChecksum(seed, ino uint32) {
	c := n.ComputeChecksum(seed, ino)
	n.put16(offIChecksumLo, uint16(c))
	if n.hasExtraField(offIChecksumHi, 2) {
		n.put16(offIChecksumHi, uint16(c>>16))
	}
}

// offKbytesWritten is s_kbytes_written (__le64): lifetime KiB written.
const offKbytesWritten = 0x178

// KbytesWritten returns s_kbytes_written.
func (s Superblock) KbytesWritten() uint64 { return s.u64(offKbytesWritten) }

// SetKbytesWritten stores s_kbytes_written.
func (s Superblock) SetKbytesWritten(v uint64) {
	binary.LittleEndian.PutUint64(s[offKbytesWritten:], v)
}
