package check

import (
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
	"gofsck/internal/quota"
)

// hideQuota is e2fsck_hide_quota, the last of the writable superblock
// checks: a user or group quota file kept in a visible inode (the old
// aquota.user / aquota.group files) moves to its reserved inode
// (PR_0_HIDE_QUOTA, no question). move_quota_inode copies the inode's
// first 128 bytes to the reserved inode as ext2fs_write_new_inode writes a
// new inode (one link, mode 0600, immutable, extents when the filesystem
// has them, missing times set to now), unlinks the file's name from the
// root directory, releases the old inode and zeroes its first 128 bytes.
// When the name is not in the root directory the library's error is
// printed and the superblock keeps the old number (the reserved inode has
// been written all the same).
func (c *Checker) hideQuota() {
	sb := c.sb
	if !c.repairing() || !sb.HasRoCompat(ondisk.RoCompatQuota) {
		return
	}
	for t := range quota.NumTypes {
		from := c.quotaInum(t)
		var to uint32 // quota_type2inum: the project inode is not reserved
		switch t {
		case quota.User:
			to = ondisk.UsrQuotaIno
		case quota.Group:
			to = ondisk.GrpQuotaIno
		default:
			to = from
		}
		if from == 0 || from == to {
			continue
		}
		if !c.fix(problem.Problem{Code: problem.PR_0_HIDE_QUOTA, Ino: from, Dir: ondisk.RootIno, Num: uint64(t)}) {
			continue
		}
		if !c.moveQuotaInode(from, to, t) {
			continue
		}
		c.setQuotaInum(t, to)
	}
}

// moveQuotaInode is move_quota_inode; false when the unlink failed.
func (c *Checker) moveQuotaInode(from, to uint32, t quota.Type) bool {
	f := c.fs
	if from > f.InodesCount {
		c.diag("ext2fs_read_inode: Illegal inode number in move_quota_inode\n")
		return false
	}
	old := c.readFullInode(from)
	n := ext2fs.NewInode(f, old, uint32(c.opt.Now.Unix()))
	c.setQuotaInodeFields(n)
	c.writeInode(to, n)
	if !c.unlinkName(ondisk.RootIno, "aquota."+t.String(), from) {
		// ext2fs_unlink's answer when no entry matched.
		c.diag("ext2fs_unlink: No free space in the directory in move_quota_inode\n")
		return false
	}
	c.inodeAllocStats(from, -1, false)
	old = c.readFullInode(from)
	clear(old[:ondisk.GoodOldInodeSize])
	c.writeInode(from, old)
	return true
}
