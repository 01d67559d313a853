package check

import (
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Limits of e2fsck's superblock value checks (ext2_fs.h).
const (
	maxBlockLogSize   = 16 // EXT2_MAX_BLOCK_LOG_SIZE
	minBlockLogSize   = 10 // EXT2_MIN_BLOCK_LOG_SIZE
	maxClusterLogSize = 29 // EXT2_MAX_CLUSTER_LOG_SIZE
	maxDescSize       = 1024
	// timeInsane is 2010-01-01: e2fsck distrusts a clock before it and
	// skips every time-based check.
	timeInsane = 1262322000
	// timeFudge is e2fsck's accept_time_fudge window (e2fsck.conf can
	// turn it off: Options.NoTimeFudge).
	timeFudge = 86400
)

// CheckSuper runs e2fsck's superblock and group-descriptor checks (spec
// 2.4, check_super_block), which always run, also before a clean
// filesystem is skipped. deviceBlocks is the device size in blocks (0 if
// unknown). After a fatal superblock problem SuperAborted is true and the
// caller must stop as e2fsck's fatal_error does. The caller reads the
// Sink's validity and SuperInvalid afterwards for the skip decision.
func (c *Checker) CheckSuper(deviceBlocks uint64) {
	if !c.checkSuperValues(deviceBlocks) || c.sink.Aborted() {
		return
	}
	c.checkSuperFeatures()
	c.checkGroupDescs()
	if c.sink.Aborted() {
		return
	}
	c.checkSuperFields()
}

// superValue reports PR_0_MISC_CORRUPT_SUPER for field descr when v is
// outside [lo, hi] (a zero bound is not checked unless checkLo/checkHi)
// or, with pow2, not a power of two; it returns false when the check must
// stop.
func (c *Checker) superValue(descr string, v uint64, checkLo bool, lo uint64, checkHi bool, hi uint64, pow2 bool) bool {
	if (checkLo && v < lo) || (checkHi && v > hi) || (pow2 && v&(v-1) != 0) {
		c.fix(problem.Problem{Code: problem.PR_0_MISC_CORRUPT_SUPER, Num: v, Str: descr})
		c.abort = true
		return false
	}
	return true
}

// checkSuperValues checks the superblock constants in e2fsck's order. It
// returns false when the check aborts.
func (c *Checker) checkSuperValues(deviceBlocks uint64) bool {
	f := c.fs
	sb := c.sb
	bs := uint64(sb.BlockSize())
	ratio := uint64(1)
	if sb.HasRoCompat(ondisk.RoCompatBigalloc) && sb.LogClusterSize() >= sb.LogBlockSize() && sb.LogClusterSize()-sb.LogBlockSize() < 32 {
		ratio = 1 << (sb.LogClusterSize() - sb.LogBlockSize())
	}
	ipb := bs / uint64(f.InodeSize)
	bpgRaw := uint64(sb.BlocksPerGroup())
	// ipg_max is an unsigned int in e2fsck: blocks_per_group - 4 wraps.
	ipgMax := uint64(uint32(ipb) * (uint32(bpgRaw) - 4))
	if m := 65536 - ipb; ipgMax > m {
		ipgMax = m
	}
	cpgMax := 8 * bs
	if cpgMax > 65536-8 {
		cpgMax = 65536 - 8
	}
	bpgMax := 8 * bs * ratio
	if m := (65536 - 8) * ratio; bpgMax > m {
		bpgMax = m
	}
	blksMax := uint64(1<<32) * ((65536 - 8) * ratio)
	if sb.Is64bit() {
		blksMax = min(blksMax, 1<<48-1)
	} else {
		blksMax = min(blksMax, 1<<32-1)
	}
	blocks := sb.BlocksCount()
	const lo, hi, both = 1, 2, 3
	checks := []struct {
		name  string
		v     uint64
		flags int
		min   uint64
		max   uint64
		pow2  bool
	}{
		{"inodes_count", uint64(sb.InodesCount()), lo, 1, 0, false},
		{"blocks_count", blocks, both, 1, blksMax, false},
		{"first_data_block", uint64(sb.FirstDataBlock()), hi, 0, blocks, false},
		{"log_block_size", uint64(sb.LogBlockSize()), both, 0, maxBlockLogSize - minBlockLogSize, false},
		{"log_cluster_size", uint64(sb.LogClusterSize()), both, uint64(sb.LogBlockSize()), maxClusterLogSize - minBlockLogSize, false},
		{"clusters_per_group", uint64(sb.ClustersPerGroup()), both, 8, cpgMax, false},
		{"blocks_per_group", bpgRaw, both, 8, bpgMax, false},
		{"inodes_per_group", uint64(sb.InodesPerGroup()), both, ipb, ipgMax, false},
		{"r_blocks_count", sb.RBlocksCount(), hi, 0, blocks / 2, false},
		{"reserved_gdt_blocks", uint64(sb.ReservedGdtBlocks()), hi, 0, bs / 4, false},
		{"desc_size", uint64(sb.RawDescSize()), hi, 0, maxDescSize, true},
	}
	for _, k := range checks {
		if !c.superValue(k.name, k.v, k.flags&lo != 0, k.min, k.flags&hi != 0, k.max, k.pow2) {
			return false
		}
	}
	shouldBe := uint64(sb.InodesPerGroup()) * uint64(f.Groups)
	if shouldBe > 1<<32-1 {
		c.fix(problem.Problem{Code: problem.PR_0_INODE_COUNT_BIG, Num: shouldBe})
		c.abort = true
		return false
	}
	if uint64(sb.InodesCount()) != shouldBe {
		if c.fix(problem.Problem{Code: problem.PR_0_INODE_COUNT_WRONG, Ino: sb.InodesCount(), Ino2: uint32(shouldBe)}) {
			c.setInodesCount(uint32(shouldBe))
		} else {
			c.fix(problem.Problem{Code: problem.PR_0_MISC_CORRUPT_SUPER, Num: uint64(sb.InodesCount()), Str: "inodes_count"})
			c.abort = true
			return false
		}
	}
	if sb.RevLevel() > 0 && !c.superValue("first_ino", uint64(sb.RawFirstIno()), true, ondisk.GoodOldFirstIno, true, uint64(sb.InodesCount()), false) {
		return false
	}
	if !c.superValue("inode_size", uint64(f.InodeSize), true, ondisk.GoodOldInodeSize, true, bs, true) {
		return false
	}
	if uint64(sb.BlocksPerGroup()) != uint64(sb.ClustersPerGroup())*ratio {
		c.fix(problem.Problem{Code: problem.PR_0_MISC_CORRUPT_SUPER, Num: uint64(uint32(uint64(sb.ClustersPerGroup()) * ratio)), Str: "block_size"})
		c.abort = true
		return false
	}
	if deviceBlocks != 0 && blocks > deviceBlocks {
		c.fix(problem.Problem{Code: problem.PR_0_FS_SIZE_WRONG, Blk: blocks, Blk2: deviceBlocks})
		if c.sink.Aborted() {
			return false
		}
	}
	want := uint64(0)
	if sb.LogBlockSize() == 0 && ratio == 1 {
		want = 1
	}
	if uint64(sb.FirstDataBlock()) != want {
		c.fix(problem.Problem{Code: problem.PR_0_FIRST_DATA_BLOCK, Blk: uint64(sb.FirstDataBlock()), Blk2: want})
		c.abort = true
		return false
	}
	if f.InodeSize > ondisk.GoodOldInodeSize {
		maxExtra := uint16(f.InodeSize - ondisk.GoodOldInodeSize)
		bad := func(v uint16) bool { return v != 0 && (v < 4 || v > maxExtra || v&3 != 0) }
		if v := sb.MinExtraIsize(); bad(v) && c.fix(problem.Problem{Code: problem.PR_0_BAD_MIN_EXTRA_ISIZE, Num: uint64(v)}) && c.repairing() {
			sb.SetMinExtraIsize(largeInodeExtra)
		}
		if v := sb.WantExtraIsize(); bad(v) && c.fix(problem.Problem{Code: problem.PR_0_BAD_WANT_EXTRA_ISIZE, Num: uint64(v)}) && c.repairing() {
			sb.SetWantExtraIsize(largeInodeExtra)
		}
	}
	return true
}

// checkSuperFeatures reports inconsistent feature combinations.
func (c *Checker) checkSuperFeatures() {
	sb := c.sb
	if sb.HasRoCompat(ondisk.RoCompatMetadataCsum) && sb.HasRoCompat(ondisk.RoCompatGdtCsum) &&
		c.fix(problem.Problem{Code: problem.PR_0_META_AND_GDT_CSUM_SET}) && c.repairing() {
		sb.SetFeatureRoCompat(sb.FeatureRoCompat() &^ ondisk.RoCompatGdtCsum)
		for g := uint32(0); g < c.fs.Groups; g++ {
			c.fs.Group(g).UpdateChecksum(sb, g)
		}
	}
	if !sb.HasRoCompat(ondisk.RoCompatMetadataCsum) && sb.HasIncompat(ondisk.IncompatCsumSeed) &&
		c.fix(problem.Problem{Code: problem.PR_0_CSUM_SEED_WITHOUT_META_CSUM}) && c.repairing() {
		sb.SetFeatureIncompat(sb.FeatureIncompat() &^ ondisk.IncompatCsumSeed)
		sb.SetChecksumSeedField(0)
	}
	if sb.Is64bit() && !sb.HasIncompat(ondisk.IncompatExtents) &&
		c.fix(problem.Problem{Code: problem.PR_0_64BIT_WITHOUT_EXTENTS}) && c.repairing() {
		sb.SetFeatureIncompat(sb.FeatureIncompat() | ondisk.IncompatExtents)
	}
	if c.opt.ConvertBmap {
		// -E bmap2extent: files are to become extent-mapped (pass 1E).
		sb.SetFeatureIncompat(sb.FeatureIncompat() | ondisk.IncompatExtents)
	}
	if sb.HasIncompat(ondisk.IncompatMetaBG) && sb.FirstMetaBG() > c.fs.DescBlocks {
		if c.fix(problem.Problem{Code: problem.PR_0_FIRST_META_BG_TOO_BIG, Group: c.fs.DescBlocks, Num: uint64(sb.FirstMetaBG())}) && c.repairing() {
			// Every descriptor block is below first_meta_bg, where the
			// layout is the classic one: dropping meta_bg leaves the
			// descriptors where they are. The group layout is derived
			// from the superblock, so pass 1 marks the classic one.
			sb.SetFeatureIncompat(sb.FeatureIncompat() &^ ondisk.IncompatMetaBG)
			sb.SetFirstMetaBG(0)
			c.writeAllSupers()
		}
	}
}

// checkGroupDescs is the group-descriptor loop of check_super_block.
func (c *Checker) checkGroupDescs() {
	f := c.fs
	sb := c.sb
	first := f.FirstDataBlock
	last := f.BlocksCount - 1
	flex := sb.HasIncompat(ondisk.IncompatFlexBG)
	var freeBlocks uint64
	var freeInodes uint32
	defer c.descFixesUnchanged(c.descsUnchanged())
	for g := uint32(0); g < f.Groups; g++ {
		gd := f.Group(g)
		if !flex {
			first, last = f.GroupFirstBlock(g), f.GroupLastBlock(g)
		}
		p := problem.Problem{Group: g}
		// A location answered "Relocate" is zeroed; a zero location is
		// placed anew at pass 1's end (relocate.go).
		bb, ib, t := gd.BlockBitmap(), gd.InodeBitmap(), gd.InodeTable()
		c.checkGroupLocation(g, p, problem.PR_0_BB_NOT_GROUP, bb < first || bb > last, gd.BlockBitmap, gd.SetBlockBitmap, relocBlockBitmap)
		c.checkGroupLocation(g, p, problem.PR_0_IB_NOT_GROUP, ib < first || ib > last, gd.InodeBitmap, gd.SetInodeBitmap, relocInodeBitmap)
		c.checkGroupLocation(g, p, problem.PR_0_ITABLE_NOT_GROUP, t < first || t+uint64(f.InodeBlocksPerGroup)-1 > last, gd.InodeTable, gd.SetInodeTable, relocInodeTable)
		freeBlocks += uint64(gd.FreeBlocks())
		freeInodes += gd.FreeInodes()
		if gd.FreeBlocks() > f.BlocksPerGroup || gd.FreeInodes() > f.InodesPerGroup || gd.UsedDirs() > f.InodesPerGroup {
			c.invalidSuper = true
		}
		// shouldBe: a fix changed the descriptor, whose checksum is then
		// recomputed (e2fsck's should_be).
		shouldBe := false
		if sum, ok := gd.ComputeChecksum(sb, g); ok && sum != gd.Checksum() {
			q := p
			q.Code, q.Csum1, q.Csum2 = problem.PR_0_GDT_CSUM, uint32(gd.Checksum()), uint32(sum)
			if c.fix(q) && c.repairing() {
				gd.SetFlags(gd.Flags() &^ (ondisk.BgBlockUninit | ondisk.BgInodeUninit))
				gd.SetItableUnused(0)
				shouldBe = true
			}
			c.invalidSuper = true
		}
		if !f.GdtCsum && (gd.Flags()&(ondisk.BgBlockUninit|ondisk.BgInodeUninit) != 0 || gd.ItableUnused() != 0) {
			q := p
			q.Code = problem.PR_0_GDT_UNINIT
			if c.fix(q) && c.repairing() {
				gd.SetFlags(gd.Flags() &^ (ondisk.BgBlockUninit | ondisk.BgInodeUninit))
				gd.SetItableUnused(0)
				shouldBe = true
			}
			c.invalidSuper = true
		}
		if g == f.Groups-1 && gd.Flags()&ondisk.BgBlockUninit != 0 {
			q := p
			q.Code = problem.PR_0_BB_UNINIT_LAST
			if c.fix(q) && c.repairing() {
				gd.SetFlags(gd.Flags() &^ ondisk.BgBlockUninit)
				shouldBe = true
			}
			c.invalidSuper = true
		}
		if f.GdtCsum && (gd.ItableUnused() > gd.FreeInodes() || gd.ItableUnused() > f.InodesPerGroup) {
			q := p
			q.Code, q.Blk = problem.PR_0_GDT_ITABLE_UNUSED, uint64(gd.ItableUnused())
			if c.fix(q) && c.repairing() {
				gd.SetItableUnused(0)
				shouldBe = true
			}
			c.invalidSuper = true
		}
		if shouldBe {
			gd.UpdateChecksum(sb, g)
		}
		if c.sink.Aborted() {
			return
		}
	}
	c.sink.EndLatch(problem.LatchBGChecksum)
	if c.repair.reloc.groups != nil {
		// Bitmaps to relocate leave the filesystem not valid.
		sb.SetState(sb.State() &^ ondisk.StateValid)
	}
	// The sums matter only to a writable clean skip (PR_0_FREE_*_COUNT).
	_, _ = freeBlocks, freeInodes
	if sb.FreeBlocksCount() > sb.BlocksCount() || sb.FreeInodesCount() > sb.InodesCount() {
		c.invalidSuper = true
	}
}

// checkGroupLocation is one of check_super_block's location checks of
// group g's descriptor: a block bitmap, inode bitmap or inode table
// outside the group's range (outside) is code; the answer "Relocate"
// zeroes it (set), and a zero location is placed anew at pass 1's end
// (what, relocate.go).
func (c *Checker) checkGroupLocation(g uint32, p problem.Problem, code problem.Code, outside bool, get func() uint64, set func(uint64), what uint8) {
	if outside {
		p.Code, p.Blk = code, get()
		if c.fix(p) && c.repairing() {
			set(0)
		}
		c.invalidBitmaps = true
	}
	if get() == 0 && c.repairing() {
		c.markRelocate(g, what)
	}
}

// checkSuperFields runs the checks that follow the descriptor loop. The
// writable-only ones (UUID, test_fs flag, Hurd filetype, revision upgrade,
// orphan processing, journal move and hint, dirhash hint, quota hiding)
// never apply to a read-only check.
func (c *Checker) checkSuperFields() {
	sb := c.sb
	if c.repairing() {
		c.writableSuperFixes()
	}
	// Orphans are released by a writable check only (a failure marks the
	// filesystem not valid).
	if c.repairing() && c.releaseOrphans() {
		sb.SetState(sb.State() &^ ondisk.StateValid)
	}
	if c.sink.Aborted() {
		return
	}
	now := c.opt.Now.Unix()
	fudge := uint64(timeFudge)
	if c.opt.NoTimeFudge {
		fudge = 0
	}
	if (c.forced() || sb.CheckInterval() != 0) && !c.opt.BrokenSystemClock && !c.opt.TimeInsane {
		now32 := uint32(now)
		// A time in the future, fudged when within the fudge.
		future := func(v uint32, code, fudged problem.Code, set func(ondisk.Superblock, uint32)) {
			if v <= now32 {
				return
			}
			if uint64(v) <= uint64(now32)+fudge {
				code = fudged
			}
			if c.fix(problem.Problem{Code: code, Num: uint64(v)}) {
				c.setSuperTimeQuiet(set, now32)
			}
		}
		future(sb.Mtime(), problem.PR_0_FUTURE_SB_LAST_MOUNT, problem.PR_0_FUTURE_SB_LAST_MOUNT_FUDGED, ondisk.Superblock.SetMtimeStamp)
		future(sb.Wtime(), problem.PR_0_FUTURE_SB_LAST_WRITE, problem.PR_0_FUTURE_SB_LAST_WRITE_FUDGED, ondisk.Superblock.SetWtimeStamp)
	}
	for i := range ondisk.MaxQuotas {
		q := sb.QuotaInum(i)
		if q == 0 {
			continue
		}
		switch {
		case q == ondisk.UsrQuotaIno || q == ondisk.GrpQuotaIno:
			if q <= sb.InodesCount() {
				continue
			}
		case q > 10 && q <= sb.InodesCount():
			continue
		}
		if c.fix(problem.Problem{Code: problem.PR_0_INVALID_QUOTA_INO, Ino: q, Num: uint64(i)}) && c.repairing() {
			sb.SetQuotaInum(i, 0)
		}
	}
	if c.repairing() {
		c.backupJournalBlocks()
		c.moveVisibleJournal()
	}
	c.fixExtJournalHint()
	if c.repairing() {
		c.fixDirhashHint()
		c.hideQuota()
	}
}

// forced reports whether the check was forced (-f), which enables the
// future-time checks without a check interval.
//
// check.Options has no Force field yet; every gofsck run that reaches the
// superblock checks with output worth comparing is a -f run, so this
// assumes -f until the option is plumbed through.
func (c *Checker) forced() bool { return c.opt.Force }

// SuperAborted reports whether a superblock check stopped the run (e2fsck
// sets E2F_FLAG_ABORT and calls fatal_error(ctx, 0): nothing more is
// printed except the "still has errors" warning when the filesystem was
// marked invalid, exit 8, or 12 then).
func (c *Checker) SuperAborted() bool { return c.abort }

// SuperInvalid reports whether the superblock checks found the filesystem
// not valid (which forces a full check instead of the clean skip).
func (c *Checker) SuperInvalid() bool {
	// Metadata answered "Relocate" (or found at 0) is moved after pass 1;
	// that alone leaves the filesystem valid.
	return c.invalidSuper || c.invalidBitmaps && len(c.repair.reloc.groups) == 0
}
