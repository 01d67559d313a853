package check

import (
	"slices"

	"gofsck/internal/bitmap"
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
	"gofsck/internal/quota"
)

// Quota accounting of the orphan release (e2fsck 1.47.0's
// release_orphan_inodes): with the quota feature, every quota file is read
// first, usage and limits (e2fsck_read_all_quotas); each released block
// and each deleted inode is taken off its owners' usage; when the list and
// the orphan file have been processed without trouble, every quota file is
// rewritten from that table (e2fsck_write_all_quotas, quota_write_inode)
// before pass 1, allocating from the on-disk bitmap as the library does
// before e2fsck intercepts allocations. The run's own accounting starts
// afresh in pass 1 (initQuota).

// orphanQuotaBegin is e2fsck_read_all_quotas: it installs the table the
// release charges (through chargeQuota). A quota file that cannot be read
// (PR_0_QUOTA_INIT_CTX) stops the run as an unimplemented fix; false then.
func (c *Checker) orphanQuotaBegin() bool {
	c.quota = nil
	if !c.sb.HasRoCompat(ondisk.RoCompatQuota) {
		return true
	}
	st := &quotaState{}
	for t := range quota.NumTypes {
		ino := c.quotaInum(t)
		if ino == 0 {
			continue
		}
		dict := make(map[uint32]*quotaUsage)
		st.dicts[t] = dict
		f, err := c.openQuotaFile(ino)
		if err != nil {
			c.unsupported(problem.PR_0_QUOTA_INIT_CTX)
			return false
		}
		h, err := quota.Open(f, t)
		if err != nil {
			c.unsupported(problem.PR_0_QUOTA_INIT_CTX)
			return false
		}
		// quota_read_all_dquots ignores a scan error.
		_ = h.Scan(func(d quota.Dquot) {
			u := dict[d.ID]
			if u == nil {
				u = &quotaUsage{}
				dict[d.ID] = u
			}
			u.space, u.inodes = d.CurSpace, d.CurInodes
			u.bsoft, u.bhard, u.isoft, u.ihard = d.BSoftLimit, d.BHardLimit, d.ISoftLimit, d.IHardLimit
		})
	}
	c.quota = st
	return true
}

// orphanQuotaEnd is e2fsck_write_all_quotas over the orphan bitmap d:
// every tracked quota file is rewritten. A rewrite gofsck cannot make
// like the library stops the run, writing nothing.
func (c *Checker) orphanQuotaEnd(d *diskBitmaps) {
	st := c.quota
	c.quota = nil
	if st == nil {
		return
	}
	for t := range quota.NumTypes {
		dict := st.dicts[t]
		if dict == nil {
			continue
		}
		ino := c.quotaFileIno(t)
		if ino == 0 || ino > c.fs.InodesCount {
			c.unsupported(problem.PR_6_WRITE_QUOTAS)
			return
		}
		p := c.planQuotaFile(t, ino, dict)
		if !c.quotaFits(p, d.blocks) {
			c.unsupported(problem.PR_6_WRITE_QUOTAS)
			return
		}
		c.writePlannedQuota(t, p, func(b uint64) { c.orphanFreeBlock(b, d) }, func(goal uint64) (uint64, bool) {
			return c.earlyAllocBlock(goal, d)
		})
	}
}

// earlyAllocBlock is ext2fs_alloc_block3 before pass 1 (no e2fsck
// callback yet): ext2fs_new_block3 over fs->block_map, the orphan bitmap,
// then ext2fs_block_alloc_stats2(+1), recorded for pass 5.
func (c *Checker) earlyAllocBlock(goal uint64, d *diskBitmaps) (uint64, bool) {
	f := c.fs
	cl, ok := ext2fs.NewCluster(c.fs, d.blocks, goal, nil)
	if !ok {
		return 0, false
	}
	d.blocks.Set(cl)
	c.markBlockOnDisk(cl, true)
	blk := cl << f.ClusterBits
	c.groupStatsBlock(blk, 1)
	return blk, true
}

// quotaFits is the dry run of a planned rewrite over bitmap m.
func (c *Checker) quotaFits(p *quotaPlan, m *bitmap.Bitmap) bool {
	d := &dryAlloc{c: c, blocks: m, taken: map[uint64]bool{}}
	if p.old.Size() != 0 && c.hasValidBlocks(p.old) {
		c.punchAll(p.old, func(b uint64) {
			if b >= c.fs.FirstDataBlock && b < c.fs.BlocksCount {
				d.freed = append(d.freed, c.fs.ClusterOf(b))
			}
		})
		slices.Sort(d.freed)
	}
	fsys := &ext2fs.Filsys{FS: c.fs, IO: newQuotaIO(c), Alloc: ext2fs.AllocFuncs{Alloc: d.alloc, Free: func(uint64) {}}}
	_, _, ok := c.mapQuotaFile(fsys, p.ino, p.built)
	return ok
}
