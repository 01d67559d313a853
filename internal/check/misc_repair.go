package check

import (
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Fixes of assorted problems whose "yes" path is made where the problem
// is reported:
//
//   - PR_6_ORPHAN_PRESENT_NO_FILE (checkOrphanFileEnd): the orphan_present
//     feature is cleared from the superblock, as e2fsck's main does.
//   - PR_6_ORPHAN_FILE_WITHOUT_JOURNAL (checkOrphanFileEnd): the orphan
//     file is truncated and its features cleared (truncateOrphanFile).
func init() {
	canRepair(problem.PR_6_ORPHAN_PRESENT_NO_FILE, problem.PR_6_ORPHAN_FILE_WITHOUT_JOURNAL)
}

// truncateOrphanFile is ext2fs_truncate_orphan_file after pass 5: every
// block of the orphan file is freed from the bitmap pass 5 left, the
// inode's first 128 bytes are zeroed (the inode stays marked in use, as
// in e2fsck), and orphan_file and orphan_present are cleared. An inode
// that cannot be read is PR_6_ORPHAN_FILE_TRUNC_FAILED, nothing changed.
func (c *Checker) truncateOrphanFile() {
	f := c.fs
	sb := c.sb
	ino := sb.OrphanFileInum()
	buf := make([]byte, f.InodeSize)
	if ino == 0 || ino > f.InodesCount || f.ReadInode(ino, buf, make([]byte, f.BlockSize)) != nil {
		c.fix(problem.Problem{Code: problem.PR_6_ORPHAN_FILE_TRUNC_FAILED})
		return
	}
	n := ondisk.Inode(buf)
	c.punchAll(n, c.lateFreeBlock)
	clear(n[:ondisk.GoodOldInodeSize])
	c.writeInode(ino, n)
	sb.SetFeatureCompat(sb.FeatureCompat() &^ ondisk.CompatOrphanFile)
	sb.SetFeatureRoCompat(sb.FeatureRoCompat() &^ ondisk.RoCompatOrphanPresent)
}
