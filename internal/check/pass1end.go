package check

import (
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// endPass1 runs the end-of-pass work: EA refcounts and, when blocks were
// claimed twice, passes 1B-1D. After an inode was cleared part way
// through its blocks, e2fsck restarts from the beginning instead of going
// on (ErrRestart).
func (c *Checker) endPass1() error {
	c.checkEARefcounts()
	if c.repairing() && !c.sink.Aborted() && !c.abort &&
		(len(c.repair.reloc.groups) > 0 || c.repair.reloc.resize) {
		// Relocations and the resize inode (relocate.go, resize_repair.go).
		release := c.holdRepairBlocks()
		c.relocateGroupMetadata()
		if !c.abort {
			c.recreateResizeInode()
		}
		release()
	} else if !c.repairing() && c.repair.reloc.resize && !c.sink.Aborted() && !c.abort {
		// Read-only, inode 7's checksum failed before pass 1 and nothing
		// has rewritten it since: ext2fs_create_resize_inode's read of it
		// fails.
		c.repair.reloc.resize = false
		if !c.fix(problem.Problem{Code: problem.PR_1_RESIZE_INODE_CREATE, Err: string(ext2fs.ErrInodeCsumInvalid)}) {
			c.abort = true
			return nil
		}
	}
	if (c.p1.restart || c.repair.reloc.restart && !c.abort) && c.repairing() && !c.sink.Aborted() {
		// e2fsck re-creates a dropped journal before it restarts
		// (journal_restart.go).
		if !c.journalBeforeRestart() {
			return nil
		}
		return ErrRestart
	}
	c.checkLargeDirFeature()
	if c.dupCount > 0 && !c.sink.Aborted() {
		if c.opt.Preen {
			c.fix(problem.Problem{Code: problem.PR_1_DUP_BLOCKS_PREENSTOP})
		}
		c.passDup()
	}
	return nil
}

// checkLargeDirFeature is e2fsck's check at the end of pass 1: an htree
// with three levels below its root, or a directory of 2 GiB or more,
// needs the large_dir feature (PR_2_FEATURE_LARGE_DIRS), which a yes sets
// in every superblock; a revision 0 filesystem is then offered revision 1
// (PR_1_FS_REV_LEVEL), whatever the first answer.
func (c *Checker) checkLargeDirFeature() {
	if c.stats.LargeDirs == 0 || c.sb.HasIncompat(ondisk.IncompatLargeDir) || c.sink.Aborted() {
		return
	}
	if c.fix(problem.Problem{Code: problem.PR_2_FEATURE_LARGE_DIRS}) && c.repairing() {
		c.sb.SetFeatureIncompat(c.sb.FeatureIncompat() | ondisk.IncompatLargeDir)
		c.writeAllSupers()
	}
	if c.sb.RevLevel() == 0 && c.fix(problem.Problem{Code: problem.PR_1_FS_REV_LEVEL}) && c.repairing() {
		c.updateDynamicRev()
	}
}
