package ondisk

// Setters for the fields the library's creators (a new journal inode, the
// resize inode, ext2fs_write_new_inode) store: the inode times and extra
// size, and the superblock's journal fields.

// SetAtime, SetCtime and SetMtime store i_atime, i_ctime and i_mtime.
func (n Inode) SetAtime(v uint32) { n.put32(offIAtime, v) }
func (n Inode) SetCtime(v uint32) { n.put32(offICtime, v) }
func (n Inode) SetMtime(v uint32) { n.put32(offIMtime, v) }

// SetExtraIsize stores i_extra_isize; a no-op in a 128-byte inode.
func (n Inode) SetExtraIsize(v uint16) {
	if len(n) >= offIExtraIsize+2 {
		n.put16(offIExtraIsize, v)
	}
}

// SetCrtime stores i_crtime when the inode's buffer holds it (whatever
// i_extra_isize says, as ext2fs_write_new_inode does).
func (n Inode) SetCrtime(v uint32) {
	if len(n) >= offICrtime+4 {
		n.put32(offICrtime, v)
	}
}

// SetJournalDev stores s_journal_dev.
func (s Superblock) SetJournalDev(v uint32) { s.put32(offJournalDev, v) }

// SetJournalUUID stores s_journal_uuid.
func (s Superblock) SetJournalUUID(u [16]byte) { copy(s[offJournalUUID:offJournalUUID+16], u[:]) }

// SetJnlBackupType stores s_jnl_backup_type.
func (s Superblock) SetJnlBackupType(v uint8) { s[offJnlBackupType] = v }

// SetJnlBlocks stores s_jnl_blocks: the first 15 words from iblock (the
// journal inode's i_block, at least 60 bytes), then i_size_high and the
// low half of i_size.
func (s Superblock) SetJnlBlocks(iblock []byte, size uint64) {
	copy(s[offJnlBlocks:offJnlBlocks+60], iblock[:60])
	s.put32(offJnlBlocks+60, uint32(size>>32))
	s.put32(offJnlBlocks+64, uint32(size))
}

// ClearJnlBlocks zeroes s_jnl_blocks.
func (s Superblock) ClearJnlBlocks() { clear(s[offJnlBlocks : offJnlBlocks+17*4]) }
