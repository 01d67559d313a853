package check

import (
	"fmt"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// truncateOrphanFile is ext2fs_truncate_orphan_file after pass 5: every
// block of the orphan file is freed from the bitmap pass 5 left, the
// inode's first 128 bytes are zeroed (the inode stays marked in use, as
// in e2fsck), and orphan_file and orphan_present are cleared. An inode
// that cannot be read is PR_6_ORPHAN_FILE_TRUNC_FAILED, nothing changed.
func (c *Checker) truncateOrphanFile() bool {
	f := c.fs
	sb := c.sb
	ino := sb.OrphanFileInum()
	buf := make([]byte, f.InodeSize)
	if ino == 0 || ino > f.InodesCount || f.ReadInode(ino, buf, make([]byte, f.BlockSize)) != nil {
		c.fix(problem.Problem{Code: problem.PR_6_ORPHAN_FILE_TRUNC_FAILED})
		return false
	}
	n := ondisk.Inode(buf)
	c.punchAll(n, c.lateFreeBlock)
	clear(n[:ondisk.GoodOldInodeSize])
	c.writeInode(ino, n)
	sb.SetFeatureCompat(sb.FeatureCompat() &^ ondisk.CompatOrphanFile)
	sb.SetFeatureRoCompat(sb.FeatureRoCompat() &^ ondisk.RoCompatOrphanPresent)
	return true
}

// recreateOrphanFile is PR_6_ORPHAN_FILE_CORRUPTED's "yes" in e2fsck's
// main: unless the bitmaps are invalid, the file is truncated and
// ext2fs_create_orphan_file builds a new one of
// ext2fs_default_orphan_file_blocks blocks from the bitmap pass 5 left;
// running out of space is the library's error line, then
// PR_6_ORPHAN_FILE_CREATE_FAILED.
func (c *Checker) recreateOrphanFile() {
	if c.invalidBitmaps {
		c.fix(problem.Problem{Code: problem.PR_6_ORPHAN_FILE_BITMAP_INVALID})
		return
	}
	if !c.truncateOrphanFile() {
		return
	}
	num := ext2fs.DefaultOrphanFileBlocks(c.fs.BlocksCount)
	c.log(fmt.Sprintf("Creating orphan file (%d blocks): ", num))
	fsys := &ext2fs.Filsys{FS: c.fs, IO: repairIO{c}, Alloc: ext2fs.AllocFuncs{Alloc: c.lateAllocBlock, Free: c.lateFreeBlock}}
	switch err := ext2fs.CreateOrphanFile(fsys, c.sb.OrphanFileInum(), num, uint32(c.opt.Now.Unix())); err {
	case nil:
		c.log(" Done.\n")
	case ext2fs.ErrBlockAllocFail:
		// The blocks taken so far stay taken, as in e2fsck.
		c.log(string(ext2fs.ErrBlockAllocFail) + ": while trying to create orphan file\n")
		c.fix(problem.Problem{Code: problem.PR_6_ORPHAN_FILE_CREATE_FAILED})
	default:
		c.unsupported(problem.PR_6_ORPHAN_FILE_CORRUPTED)
	}
}

// requestRestart is e2fsck's E2F_FLAG_RESTART set in pass 3: the pass
// stops before its next directory (or after making /lost+found and
// rebuilding directories) and the check starts again (ErrRestart).
func (c *Checker) requestRestart() {
	if c.restartLater == nil {
		c.restartLater = new(bool)
	}
	*c.restartLater = true
}

// restartRequested reports a restart asked for in a repair run.
func (c *Checker) restartRequested() bool {
	return c.restartLater != nil && *c.restartLater && c.repairing()
}

// pass3Restart ends pass 3 for a restart. e2fsck's close of the
// filesystem before it starts again writes the bitmaps its allocations
// in pass 3 changed (the new /lost+found's block and inode): the fixes'
// bitmap edits are applied to the on-disk bitmaps and written, so the
// check that follows sees them as e2fsck's does.
func (c *Checker) pass3Restart() error {
	c.repair.mu.Lock()
	edits := len(c.repair.blockEdits) + len(c.repair.inodeEdits)
	c.repair.mu.Unlock()
	if edits > 0 {
		d := c.loadBitmaps()
		c.applyBitmapEdits(d)
		c.writeBitmaps(d)
	}
	if !c.journalBeforeRestart() {
		return nil
	}
	return ErrRestart
}
