package ondisk

// Setters for the superblock's journal fields, which the library's
// journal creation stores (the new inode's own fields: newinode.go).

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
