package ondisk

import "testing"

// TestCreateSetters stores the superblock's journal fields a new journal
// sets and reads them back through the accessors (a new inode's fields:
// TestNewInodeSetters).
func TestCreateSetters(t *testing.T) {
	s := make(Superblock, SuperblockSize)
	ib := make([]byte, 60)
	for i := range ib {
		ib[i] = byte(i)
	}
	s.SetJnlBlocks(ib, 5<<32|1024)
	s.SetJnlBackupType(1)
	s.SetJournalDev(7)
	s.SetJournalUUID([16]byte{9})
	if s.JnlBlock(0) != 0x03020100 || s.JnlBlock(15) != 5 || s.JnlBlock(16) != 1024 || s.JnlBackupType() != 1 ||
		s.JournalDev() != 7 || s.JournalUUID() != ([16]byte{9}) {
		t.Errorf("jnl_blocks %#x %d %d type %d dev %d uuid %x", s.JnlBlock(0), s.JnlBlock(15), s.JnlBlock(16),
			s.JnlBackupType(), s.JournalDev(), s.JournalUUID())
	}
	s.ClearJnlBlocks()
	for i := 0; i < 17; i++ {
		if s.JnlBlock(i) != 0 {
			t.Errorf("s_jnl_blocks[%d] = %d after clearing", i, s.JnlBlock(i))
		}
	}
}
