package check

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
	"gofsck/internal/quota"
)

// Quota accounting follows e2fsprogs 1.47.0 (lib/support/mkquota.c and
// e2fsck/unix.c): with the quota feature, a usage table is kept for every
// quota type whose superblock inode is set when the check starts; check_blocks
// charges each counted inode's space (bytes) and inode count to its uid,
// gid and project id; at the end each table is compared with its quota file.

// diag prints one library diagnostic through the Sink, if it can.
func (c *Checker) diag(format string, args ...any) {
	c.out().Diagnostic(fmt.Sprintf(format, args...))
}

// logErr prints e2fsprogs' log_err line: "[ERROR] file:line:func: msg". The
// file names are those of the Debian/Ubuntu build of 1.47.0, whose e2fsck
// is the reference.
func (c *Checker) logErr(file string, line int, fn, format string, args ...any) {
	c.diag("[ERROR] ../../../../lib/support/%s:%d:%s: %s\n", file, line, fn, fmt.Sprintf(format, args...))
}

// quotaUsage is one id's usage (e2fsprogs' struct dquot, usage part), in
// qsize_t arithmetic.
type quotaUsage struct {
	space, inodes int64
	seen          bool // DQF_SEEN: found in the quota file
	// The limits read from the quota file (update_limits), which a
	// rewrite keeps.
	bsoft, bhard, isoft, ihard uint64
}

// quotaState is e2fsck's quota context: one table per tracked type.
type quotaState struct {
	mu    sync.Mutex                             // mu protects dicts.
	dicts [quota.NumTypes]map[uint32]*quotaUsage // nil: type not tracked
}

// quotaInum returns the superblock's quota inode of type t.
func (c *Checker) quotaInum(t quota.Type) uint32 {
	switch t {
	case quota.User:
		return c.sb.UsrQuotaInum()
	case quota.Group:
		return c.sb.GrpQuotaInum()
	case quota.Project:
		return c.sb.PrjQuotaInum()
	}
	return 0
}

// setQuotaInum points the superblock's quota inode of type t at ino
// (quota_set_sb_inum).
func (c *Checker) setQuotaInum(t quota.Type, ino uint32) {
	switch t {
	case quota.User:
		c.sb.SetUsrQuotaInum(ino)
	case quota.Group:
		c.sb.SetGrpQuotaInum(ino)
	case quota.Project:
		c.sb.SetPrjQuotaInum(ino)
	}
}

// quotaCtx returns the quota context, created on first use like
// quota_init_context(fs, 0): nil without the quota feature, and a table
// for each type whose superblock inode is non-zero. gofsck never changes
// the superblock, so creating it lazily sees what e2fsck sees before pass 1.
func (c *Checker) quotaCtx() *quotaState { return c.quota }

// initQuota creates the run's quota context before pass 1 starts (the
// worker shards share the pointer).
func (c *Checker) initQuota() {
	c.quota = nil
	if !c.sb.HasRoCompat(ondisk.RoCompatQuota) {
		return
	}
	st := &quotaState{}
	for t := range quota.NumTypes {
		if c.quotaInum(t) != 0 {
			st.dicts[t] = make(map[uint32]*quotaUsage)
		}
	}
	c.quota = st
}

// quotaID is e2fsprogs' get_qid.
func quotaID(n ondisk.Inode, t quota.Type) uint32 {
	switch t {
	case quota.User:
		return n.UID()
	case quota.Group:
		return n.GID()
	case quota.Project:
		id, _ := n.Projid() // 0 when i_extra_isize does not cover it
		return id
	}
	return 0
}

// chargeQuota records an inode's usage for the quota comparison at the end
// of the run (e2fsck's quota_data_add and quota_data_inodes): space in
// bytes and the number of inodes. Both are added in two's complement, so a
// caller may subtract (quota_data_sub) by passing the negated amounts.
func (c *Checker) chargeQuota(ino uint32, n ondisk.Inode, space uint64, inodes uint64) {
	st := c.quotaCtx()
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for t, dict := range st.dicts {
		if dict == nil {
			continue
		}
		// project_quota_valid: only with inodes larger than 128 bytes.
		if quota.Type(t) == quota.Project && c.fs.InodeSize <= ondisk.GoodOldInodeSize {
			continue
		}
		id := quotaID(n, quota.Type(t))
		u := dict[id]
		if u == nil {
			u = &quotaUsage{}
			dict[id] = u
		}
		u.space += int64(space)
		u.inodes += int64(inodes)
	}
}

// checkQuotas compares the usage gathered during the run with each quota
// file and offers to rewrite the ones that differ or cannot be read
// (PR_6_UPDATE_QUOTAS, pctx.num = quota type), as e2fsck's main does after
// the passes when the bitmaps are valid.
func (c *Checker) checkQuotas() {
	st := c.quotaCtx()
	if st == nil || c.invalidBitmaps {
		return
	}
	for t := range quota.NumTypes {
		ino := c.quotaInum(t)
		if ino == 0 || st.dicts[t] == nil {
			continue
		}
		inconsistent, err := c.compareQuota(t, ino, st.dicts[t])
		if inconsistent || err != nil {
			var plan *quotaPlan
			if c.repairing() {
				var ok bool
				if plan, ok = c.quotaRewritable(t, st.dicts[t]); !ok {
					c.unsupported(problem.PR_6_UPDATE_QUOTAS)
					return
				}
			}
			if c.fix(problem.Problem{Code: problem.PR_6_UPDATE_QUOTAS, Num: uint64(t)}) && c.repairing() {
				c.writeQuotaFile(t, plan)
			}
		}
	}
}

// compareQuota is quota_compare_and_update without the update: it scans
// the quota file, prints a warning for every id whose usage differs and
// every charged id the file lacks, and reports whether any did. err is set
// when the file could not be opened.
func (c *Checker) compareQuota(t quota.Type, ino uint32, dict map[uint32]*quotaUsage) (inconsistent bool, err error) {
	f, err := c.openQuotaFile(ino)
	if err != nil {
		c.logErr("quotaio.c", 213, "quota_file_open", "ext2fs_file_open failed: %s", err)
		return false, err
	}
	h, err := quota.Open(f, t)
	if err != nil {
		c.reportQuotaOpen(ino, f, err)
		return false, err
	}
	err = h.Scan(func(d quota.Dquot) {
		u := dict[d.ID]
		if u == nil {
			u = &quotaUsage{}
			dict[d.ID] = u
		}
		u.seen = true
		u.bsoft, u.bhard, u.isoft, u.ihard = d.BSoftLimit, d.BHardLimit, d.ISoftLimit, d.IHardLimit
		if u.space != d.CurSpace || u.inodes != d.CurInodes {
			inconsistent = true
			c.diag("[QUOTA WARNING] Usage inconsistent for ID %d:actual (%d, %d) != expected (%d, %d)\n",
				d.ID, u.space, u.inodes, d.CurSpace, d.CurInodes)
		}
	})
	if err != nil {
		var fe *quota.FormatError
		if errors.As(err, &fe) {
			c.logErr("quotaio_tree.c", 546, "check_reference", "Illegal reference (%d >= %d) in %s quota file", fe.Val, fe.Limit, t)
		}
		return true, nil
	}
	ids := make([]uint32, 0, len(dict))
	for id := range dict {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if !dict[id].seen {
			c.diag("[QUOTA WARNING] Missing quota entry ID %d\n", int32(id))
			inconsistent = true
		}
	}
	return inconsistent, nil
}

// reportQuotaOpen prints the log_err lines e2fsprogs' quota_file_open
// prints when v2_check_file or v2_init_io refuses the file.
func (c *Checker) reportQuotaOpen(ino uint32, f *ext2fs.File, err error) {
	var fe *quota.FormatError
	switch {
	case errors.Is(err, quota.ErrWrongEndian):
		c.logErr("quotaio_v2.c", 226, "v2_check_file", "Your quota file is stored in wrong endianness")
		c.logErr("quotaio.c", 250, "quota_file_open", "qh_ops->check_file failed")
	case errors.As(err, &fe) && fe.Struct == "header":
		c.logErr("quotaio.c", 250, "quota_file_open", "qh_ops->check_file failed")
	case errors.As(err, &fe) && fe.Struct == "info":
		var info quota.InfoBlock
		if n, _ := f.ReadAt(info[:], int64(len(quota.Header{}))); n == len(info) {
			switch fe.Field {
			case "file size", "dqi_blocks":
				c.logErr("quotaio_v2.c", 273, "v2_init_io", "Quota inode %d corrupted: file size %d; dqi_blocks %d", ino, f.Size(), info.Blocks())
			case "dqi_free_blk":
				c.logErr("quotaio_v2.c", 280, "v2_init_io", "Quota inode %d corrupted: free_blk %d; dqi_blocks %d", ino, info.FreeBlk(), info.Blocks())
			case "dqi_free_entry":
				c.logErr("quotaio_v2.c", 286, "v2_init_io", "Quota inode %d corrupted: free_entry %d; dqi_blocks %d", ino, info.FreeEntry(), info.Blocks())
			}
		}
		c.logErr("quotaio.c", 256, "quota_file_open", "qh_ops->init_io failed")
	}
}

// openQuotaFile opens quota inode ino for reading (ext2fs_file_open),
// through the checker's reads; reading allocates nothing.
func (c *Checker) openQuotaFile(ino uint32) (*ext2fs.File, error) {
	return ext2fs.OpenFile(&ext2fs.Filsys{FS: c.fs, IO: libIO{c}}, ino)
}

var _ quota.File = (*ext2fs.File)(nil)
