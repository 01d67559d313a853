package ext2fs

import (
	"testing"

	"gofsck/internal/ondisk"
)

// TestUpdateDynamicRev makes a revision 0 superblock revision 1 with
// the implied first inode and inode size, and leaves revision 1 alone.
func TestUpdateDynamicRev(t *testing.T) {
	sb := ondisk.Superblock(make([]byte, ondisk.SuperblockSize))
	UpdateDynamicRev(sb)
	if sb.RevLevel() != 1 || sb.RawFirstIno() != ondisk.GoodOldFirstIno || sb.InodeSize() != ondisk.GoodOldInodeSize {
		t.Errorf("rev %d, first ino %d, inode size %d", sb.RevLevel(), sb.RawFirstIno(), sb.InodeSize())
	}
	sb.SetInodeSize(256)
	UpdateDynamicRev(sb)
	if sb.InodeSize() != 256 {
		t.Errorf("revision 1 changed: inode size %d", sb.InodeSize())
	}
}
