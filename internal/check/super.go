package check

import (
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// CheckSuper runs e2fsck's superblock and group-descriptor checks (spec
// 2.4), which always run, also before a clean filesystem is skipped. The
// caller reads the Sink's validity afterwards for the skip decision.
func (c *Checker) CheckSuper(deviceBlocks uint64) {
	f := c.fs
	sb := c.sb
	if deviceBlocks != 0 && f.BlocksCount > deviceBlocks {
		c.fix(problem.Problem{Code: problem.PR_0_FS_SIZE_WRONG, Blk: f.BlocksCount, Blk2: deviceBlocks})
		if c.sink.Aborted() {
			return
		}
	}
	first := f.FirstDataBlock
	last := f.BlocksCount - 1
	flex := sb.HasIncompat(ondisk.IncompatFlexBG)
	for g := uint32(0); g < f.Groups; g++ {
		gd := f.Group(g)
		if !flex {
			first, last = f.GroupFirstBlock(g), f.GroupLastBlock(g)
		}
		p := problem.Problem{Group: g}
		if b := gd.BlockBitmap(); b < first || b > last {
			q := p
			q.Code, q.Blk = problem.PR_0_BB_NOT_GROUP, b
			c.fix(q)
			c.invalidBitmaps = true
		}
		if b := gd.InodeBitmap(); b < first || b > last {
			q := p
			q.Code, q.Blk = problem.PR_0_IB_NOT_GROUP, b
			c.fix(q)
			c.invalidBitmaps = true
		}
		if t := gd.InodeTable(); t < first || t+uint64(f.InodeBlocksPerGroup)-1 > last {
			q := p
			q.Code, q.Blk = problem.PR_0_ITABLE_NOT_GROUP, t
			c.fix(q)
			c.invalidBitmaps = true
		}
		if gd.FreeBlocks() > f.BlocksPerGroup || gd.FreeInodes() > f.InodesPerGroup || gd.UsedDirs() > f.InodesPerGroup {
			c.invalidSuper = true
		}
		if sum, ok := gd.ComputeChecksum(sb, g); ok && sum != gd.Checksum() {
			q := p
			q.Code, q.Csum1, q.Csum2 = problem.PR_0_GDT_CSUM, uint32(gd.Checksum()), uint32(sum)
			c.fix(q)
			c.invalidSuper = true
		}
		if !f.GdtCsum && (gd.Flags()&(ondisk.BgBlockUninit|ondisk.BgInodeUninit) != 0 || gd.ItableUnused() != 0) {
			q := p
			q.Code = problem.PR_0_GDT_UNINIT
			c.fix(q)
			c.invalidSuper = true
		}
		if g == f.Groups-1 && gd.Flags()&ondisk.BgBlockUninit != 0 {
			q := p
			q.Code = problem.PR_0_BB_UNINIT_LAST
			c.fix(q)
			c.invalidSuper = true
		}
		if f.GdtCsum && (gd.ItableUnused() > gd.FreeInodes() || gd.ItableUnused() > f.InodesPerGroup) {
			q := p
			q.Code, q.Blk = problem.PR_0_GDT_ITABLE_UNUSED, uint64(gd.ItableUnused())
			c.fix(q)
			c.invalidSuper = true
		}
		if c.sink.Aborted() {
			return
		}
	}
	c.sink.EndLatch(problem.LatchBGChecksum)
	c.checkSuperFields()
}

// checkSuperFields runs the field checks that follow the descriptor loop.
func (c *Checker) checkSuperFields() {
	sb := c.sb
	f := c.fs
	if f.InodeSize > ondisk.GoodOldInodeSize {
		maxExtra := uint16(f.InodeSize - ondisk.GoodOldInodeSize)
		bad := func(v uint16) bool { return v != 0 && (v < 4 || v > maxExtra || v&3 != 0) }
		if bad(sb.MinExtraIsize()) {
			c.fix(problem.Problem{Code: problem.PR_0_BAD_MIN_EXTRA_ISIZE, Num: uint64(sb.MinExtraIsize())})
		}
		if bad(sb.WantExtraIsize()) {
			c.fix(problem.Problem{Code: problem.PR_0_BAD_WANT_EXTRA_ISIZE, Num: uint64(sb.WantExtraIsize())})
		}
	}
	for i, q := range []uint32{sb.UsrQuotaInum(), sb.GrpQuotaInum(), sb.PrjQuotaInum()} {
		if q == 0 {
			continue
		}
		if (q >= 1 && q <= 10 && !(i == 0 && q == ondisk.UsrQuotaIno) && !(i == 1 && q == ondisk.GrpQuotaIno)) || q > f.InodesCount {
			c.fix(problem.Problem{Code: problem.PR_0_INVALID_QUOTA_INO, Ino: q, Num: uint64(i)})
		}
	}
}

// SuperInvalid reports whether the superblock checks found the filesystem
// not valid (which forces a full check instead of the clean skip).
func (c *Checker) SuperInvalid() bool { return c.invalidSuper || c.invalidBitmaps }
