package check

import (
	"bytes"
	crand "crypto/rand"
	"encoding/binary"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// descsUnchanged reports whether the descriptors are still as opened.
func (c *Checker) descsUnchanged() bool {
	return c.repairing() && c.repair.origGDT.matches(c.fs.GDT())
}

// descFixesUnchanged is called after the descriptor loop: its fixes change
// the descriptors in memory without marking the filesystem changed (e2fsck
// recomputes their checksums but does not mark the superblock dirty), so
// they alone do not make the run report "FILE SYSTEM WAS MODIFIED". The
// descriptors are still written at the end, as e2fsck's final flush
// writes them.
func (c *Checker) descFixesUnchanged(wasUnchanged bool) {
	if wasUnchanged {
		c.repair.origGDT = newGDTDigest(c.fs.GDT())
	}
}

// FixSkipCounts is the writable part of e2fsck's clean skip
// (check_if_skip): the superblock's free inode and block counts are set
// from the sums of the group descriptors' counts (as check_super_block
// summed them: before the journal was moved) when they differ
// (PR_0_FREE_INODE_COUNT, PR_0_FREE_BLOCK_COUNT; modern kernels do not
// keep the global counts current). It reports whether it changed the
// superblock, which must then be written (WriteMasterSuper).
func (c *Checker) FixSkipCounts() bool {
	if !c.repairing() {
		return false
	}
	f := c.fs
	sb := c.sb
	var freeBlocks uint64
	var freeInodes uint32
	for g := uint32(0); g < f.Groups; g++ {
		gd := f.Group(g)
		freeBlocks += uint64(gd.FreeBlocks())
		freeInodes += gd.FreeInodes()
	}
	// ctx->free_blocks: the groups' sum before the orphans were
	// released, in blocks, plus one per block they released.
	freeBlocks = uint64(int64(freeBlocks)-c.orphanFree.clusters)<<f.ClusterBits + uint64(c.orphanFree.blocks)
	freeInodes -= c.journalMoveFreed
	changed := false
	if sb.FreeInodesCount() != freeInodes &&
		c.fix(problem.Problem{Code: problem.PR_0_FREE_INODE_COUNT, Ino: sb.FreeInodesCount(), Ino2: freeInodes}) {
		sb.SetFreeInodesCount(freeInodes)
		changed = true
	}
	if sb.FreeBlocksCount() != freeBlocks &&
		c.fix(problem.Problem{Code: problem.PR_0_FREE_BLOCK_COUNT, Blk: sb.FreeBlocksCount(), Blk2: freeBlocks}) {
		sb.SetFreeBlocksCount(freeBlocks)
		changed = true
	}
	return changed
}

// largeInodeExtra is sizeof(struct ext2_inode_large) -
// EXT2_GOOD_OLD_INODE_SIZE in e2fsprogs 1.47.0, the value e2fsck gives
// a bad s_min_extra_isize or s_want_extra_isize.
const largeInodeExtra = 32

// setInodesCount is the PR_0_INODE_COUNT_WRONG fix: s_inodes_count (and
// the geometry the check uses) becomes inodes_per_group * groups.
func (c *Checker) setInodesCount(v uint32) {
	if !c.repairing() {
		return
	}
	c.sb.SetInodesCount(v)
	c.fs.InodesCount = v
}

// setSuperTimeQuiet sets s_mtime or s_wtime (set: the setter of one) to now as
// the future-time fixes do: e2fsck marks the superblock dirty without
// marking the filesystem changed, so the change alone does not make the
// run report "FILE SYSTEM WAS MODIFIED" (the original copy Changed
// compares with gets the same value).
func (c *Checker) setSuperTimeQuiet(set func(ondisk.Superblock, uint32), now uint32) {
	if !c.repairing() {
		return
	}
	set(c.sb, now)
	set(c.repair.origSB, now)
}

// s_flags bits of the directory hash signedness hint.
const (
	flagSignedHash   = 0x1
	flagUnsignedHash = 0x2
)

// fixDirhashHint is e2fsck_fix_dirhash_hint: with dir_index and no
// signedness hint, the hint of the machine's char is set (signed, as
// e2fsck built for x86 and most Linux targets sets it).
func (c *Checker) fixDirhashHint() {
	sb := c.sb
	if !sb.HasCompat(ondisk.CompatDirIndex) || sb.Flags()&(flagSignedHash|flagUnsignedHash) != 0 {
		return
	}
	if c.fix(problem.Problem{Code: problem.PR_0_DIRHASH_HINT}) {
		sb.SetFlags(sb.Flags() | flagSignedHash)
	}
}

// BackupSuperDiffers is check_backup_super_block for a writable run: the
// first readable backup superblock differs from the primary in features
// (extents, needs_recovery, large_file and dir_nlink aside), block or
// inode count or UUID. e2fsck then writes every backup at the end, and a
// clean skip becomes "primary superblock features different from backup".
func (c *Checker) BackupSuperDiffers() bool {
	if !c.repairing() {
		return false
	}
	f := c.fs
	sb := c.sb
	buf := make([]byte, ondisk.SuperblockSize)
	const incompatIgnore = ondisk.IncompatExtents | ondisk.IncompatRecover
	const roIgnore = ondisk.RoCompatLargeFile | ondisk.RoCompatDirNlink
	for g := uint32(1); g < f.Groups; g++ {
		if !f.GroupHasSuper(g) {
			continue
		}
		off := int64(f.GroupFirstBlock(g)) << f.BlockBits
		if _, err := f.Dev.ReadAt(buf, off); err != nil {
			continue
		}
		b := ondisk.Superblock(buf)
		if b.Magic() != ondisk.Magic || b.RevLevel() > 1 || b.LogBlockSize()+10 > maxBlockLogSize || b.InodeSize() < ondisk.GoodOldInodeSize {
			continue
		}
		return b.FeatureCompat() != sb.FeatureCompat() ||
			b.FeatureIncompat()&^incompatIgnore != sb.FeatureIncompat()&^incompatIgnore ||
			b.FeatureRoCompat()&^roIgnore != sb.FeatureRoCompat()&^roIgnore ||
			rawBlocksDiffer(b, sb) ||
			b.InodesCount() != sb.InodesCount() || b.UUID() != sb.UUID()
	}
	return false
}

// checkBackupSuper is the end of a valid writable run: when the backup
// superblock differs (BackupSuperDiffers), every superblock and
// descriptor copy is written.
func (c *Checker) checkBackupSuper() {
	if !c.repairing() || c.fs.Backup || c.sink.Aborted() {
		return
	}
	if c.sink.Status().Invalid {
		return
	}
	if c.BackupSuperDiffers() {
		c.writeAllSupers()
	}
}

// FinishSkip writes what a writable run changed before it skips a clean
// filesystem, as e2fsck's closing ext2fs_close does: the bitmaps when a
// fix (the orphan release) edited them, then the primary superblock and
// descriptors when anything changed.
func (c *Checker) FinishSkip() error {
	if !c.repairing() {
		return nil
	}
	c.repair.mu.Lock()
	edits := len(c.repair.blockEdits)+len(c.repair.inodeEdits) > 0
	c.repair.mu.Unlock()
	if edits {
		d := c.loadBitmaps()
		c.applyBitmapEdits(d)
		c.writeBitmaps(d)
	}
	if !edits && bytes.Equal(c.fs.SB, c.repair.origSB) && c.repair.origGDT.matches(c.fs.GDT()) {
		return c.WriteError()
	}
	c.sb.SetWtime(uint32(c.opt.Now.Unix()))
	c.writeSuperAndGDT(c.fs.Backup)
	return c.WriteError()
}

// creatorOSHurd is s_creator_os for the Hurd.
const creatorOSHurd = 1

// writableSuperFixes are the checks check_super_block makes only when it
// can write, before the orphans: a null UUID is generated (quietly, as
// e2fsck only sets EXT2_FLAG_DIRTY; every superblock copy is written),
// the test_fs flag is cleared (as quietly) when the kernel has ext4,
// the Hurd's filesystems lose the filetype feature, and a revision 0
// superblock with features becomes revision 1.
func (c *Checker) writableSuperFixes() {
	sb := c.sb
	if sb.UUID() == [16]byte{} && !sb.HasRoCompat(ondisk.RoCompatMetadataCsum) &&
		(!c.fs.GdtCsum || !c.opt.Mounted) && c.fix(problem.Problem{Code: problem.PR_0_ADD_UUID}) {
		var u [16]byte
		if _, err := crand.Read(u[:]); err != nil {
			binary.LittleEndian.PutUint64(u[:], uint64(c.opt.Now.UnixNano()))
		}
		u[6] = u[6]&0x0F | 0x40 // version 4
		u[8] = u[8]&0x3F | 0x80 // RFC 4122 variant
		for _, b := range []ondisk.Superblock{sb, c.repair.origSB} {
			if len(b) >= ondisk.SuperblockSize {
				b.SetUUID(u)
			}
		}
		c.writeAllSupers()
	}
	if sb.Flags()&ondisk.FlagTestFS != 0 && c.opt.Ext4Available &&
		c.fix(problem.Problem{Code: problem.PR_0_CLEAR_TESTFS_FLAG}) {
		// Like the UUID, a quiet change: e2fsck's exit code does not
		// count it, so the opened copy is changed too.
		for _, b := range []ondisk.Superblock{sb, c.repair.origSB} {
			if len(b) >= ondisk.SuperblockSize {
				b.SetFlags(b.Flags() &^ ondisk.FlagTestFS)
			}
		}
		c.writeAllSupers()
	}
	if sb.CreatorOS() == creatorOSHurd && sb.HasIncompat(ondisk.IncompatFiletype) &&
		c.fix(problem.Problem{Code: problem.PR_0_HURD_CLEAR_FILETYPE}) {
		sb.SetFeatureIncompat(sb.FeatureIncompat() &^ ondisk.IncompatFiletype)
		c.writeAllSupers()
	}
	if sb.RevLevel() == 0 && (sb.FeatureCompat() != 0 || sb.FeatureRoCompat() != 0 || sb.FeatureIncompat() != 0) &&
		c.fix(problem.Problem{Code: problem.PR_0_FS_REV_LEVEL}) {
		c.updateDynamicRev()
	}
}

// updateDynamicRev is ext2fs_update_dynamic_rev, every copy written.
func (c *Checker) updateDynamicRev() {
	ext2fs.UpdateDynamicRev(c.sb)
	c.writeAllSupers()
}

// rawBlocksDiffer reports whether two superblocks' stored block counts
// (both halves) differ.
func rawBlocksDiffer(a, b ondisk.Superblock) bool {
	alo, ahi := a.RawBlocksCount()
	blo, bhi := b.RawBlocksCount()
	return alo != blo || ahi != bhi
}
