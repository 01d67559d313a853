package ondisk

import "testing"

// TestCreateSetters stores the fields a new inode and a new journal set
// and reads them back through the accessors.
func TestCreateSetters(t *testing.T) {
	n := make(Inode, 256)
	n.SetAtime(1)
	n.SetCtime(2)
	n.SetMtime(3)
	n.SetExtraIsize(32)
	n.SetCrtime(4)
	if n.Atime() != 1 || n.Ctime() != 2 || n.Mtime() != 3 || n.ExtraIsize() != 32 {
		t.Errorf("times %d %d %d extra %d", n.Atime(), n.Ctime(), n.Mtime(), n.ExtraIsize())
	}
	if c, ok := n.extraTime(offICrtime); !ok || c != 4 {
		t.Errorf("crtime %d %v", c, ok)
	}
	small := make(Inode, GoodOldInodeSize)
	small.SetExtraIsize(32) // no room: ignored
	small.SetCrtime(4)

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
