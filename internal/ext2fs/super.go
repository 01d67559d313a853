package ext2fs

import "gofsck/internal/ondisk"

// UpdateDynamicRev is ext2fs_update_dynamic_rev: a revision 0
// superblock becomes revision 1 with the fields revision 0 implies
// (s_first_ino 11, s_inode_size 128); a later revision is left alone.
func UpdateDynamicRev(sb ondisk.Superblock) {
	if sb.RevLevel() > 0 {
		return
	}
	sb.SetRevLevel(1)
	sb.SetFirstIno(ondisk.GoodOldFirstIno)
	sb.SetInodeSize(ondisk.GoodOldInodeSize)
}
