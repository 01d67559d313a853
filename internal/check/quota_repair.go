package check

import (
	"slices"
	"time"

	"gofsck/internal/bitmap"
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/quota"
)

// Rewriting a quota file (PR_6_UPDATE_QUOTAS answered yes) is e2fsprogs
// 1.47.0's quota_write_inode for one type, after pass 5:
//
//   - quota_inode_init_new: when the old file has a size, its blocks are
//     punched (ext2fs_punch over the whole file); the inode is then
//     rewritten from scratch by ext2fs_write_new_inode (ext2fs.NewInode):
//     a regular file, mode 0600, one link, immutable, with extents when the
//     filesystem has them, times (and i_crtime, i_extra_isize 32) set to
//     now, nothing else;
//   - the file is written through ext2fs_file_write (quota.Build gives the
//     contents and the order the blocks are first written): each new block
//     is allocated when first written and mapped by ext2fs_bmap2 with
//     BMAP_ALLOC (ext2fs.Bmap2, with the library's goals and extent node
//     splits);
//   - i_size is the end of the last write and i_blocks counts every block
//     allocated (data, indirect and extent blocks).
//
// The checker decides whether and when: a dry run of the mapping over an
// in-memory Writer and an allocator without side effects (quotaFits)
// refuses a rewrite the library would fail half-way (no space) or that
// would need a second index level in the extent tree, before the
// question is asked. The old file's limits are carried over by
// compareQuota (scan with update_limits); the usage is the run's.

// modeQuotaFile is a quota file's i_mode: a regular file, 0600.
const modeQuotaFile = ondisk.SIFREG | 0o600

// setQuotaInodeFields gives n what quota_inode_init_new and
// move_quota_inode set in a quota inode: one link, mode 0600, immutable,
// and extent-mapped when the filesystem has extents.
func (c *Checker) setQuotaInodeFields(n ondisk.Inode) {
	n.SetLinksCount(1)
	n.SetMode(modeQuotaFile)
	flags := uint32(ondisk.FlagImmutable)
	if c.sb.HasIncompat(ondisk.IncompatExtents) {
		flags |= ondisk.FlagExtents
	}
	n.SetFlags(flags)
}

// quotaPlan is a rewrite worked out: the inode written, the new file and
// the inode's old contents.
type quotaPlan struct {
	ino   uint32
	built *quota.Built
	old   ondisk.Inode
}

// quotaFileIno is quota_type2inum: the inode quota_write_inode writes,
// the reserved one for user and group quotas whatever the superblock
// says (it then points the superblock at it), the superblock's for
// project quotas.
func (c *Checker) quotaFileIno(t quota.Type) uint32 {
	switch t {
	case quota.User:
		return ondisk.UsrQuotaIno
	case quota.Group:
		return ondisk.GrpQuotaIno
	}
	return c.quotaInum(t)
}

// planQuotaFile lays out the new quota file of type t from the usage
// table.
func (c *Checker) planQuotaFile(t quota.Type, ino uint32, dict map[uint32]*quotaUsage) *quotaPlan {
	ids := make([]uint32, 0, len(dict))
	for id := range dict {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	dquots := make([]quota.Dquot, 0, len(ids))
	for _, id := range ids {
		u := dict[id]
		dquots = append(dquots, quota.Dquot{
			ID: id, CurSpace: u.space, CurInodes: u.inodes,
			BSoftLimit: u.bsoft, BHardLimit: u.bhard,
			ISoftLimit: u.isoft, IHardLimit: u.ihard,
		})
	}
	// update_grace_times reads the clock, not e2fsck's ctx->now.
	return &quotaPlan{ino: ino, built: quota.Build(t, dquots, time.Now().Unix()), old: c.readFullInode(ino)}
}

// quotaRewritable reports whether writeQuotaFile can write the file the
// way the library would: a dry run of the allocation that fails when the
// filesystem runs out of space (e2fsck then writes a damaged file with
// library errors) or the extent tree would need a second index level.
func (c *Checker) quotaRewritable(t quota.Type, dict map[uint32]*quotaUsage) (*quotaPlan, bool) {
	ino := c.quotaFileIno(t)
	if ino == 0 || ino > c.fs.InodesCount || c.repair.final == nil {
		return nil, false
	}
	p := c.planQuotaFile(t, ino, dict)
	return p, c.quotaFits(p, c.repair.final.blocks)
}

// writeQuotaFile writes the quota file of type t that quotaRewritable
// planned and points the superblock at it (quota_set_sb_inum).
func (c *Checker) writeQuotaFile(t quota.Type, p *quotaPlan) {
	c.writePlannedQuota(t, p, c.lateFreeBlock, c.lateAllocBlock)
}

// writePlannedQuota writes a planned quota file, freeing and allocating
// blocks with free and alloc.
func (c *Checker) writePlannedQuota(t quota.Type, p *quotaPlan, free func(uint64), alloc func(uint64) (uint64, bool)) {
	f := c.fs
	ino := p.ino
	// quota_inode_init_new, with quota_inode_truncate when the file has a
	// size.
	if p.old.Size() != 0 && c.hasValidBlocks(p.old) {
		c.punchAll(p.old, free)
	}
	qio := newQuotaIO(c)
	fsys := &ext2fs.Filsys{FS: f, IO: qio, Alloc: ext2fs.AllocFuncs{Alloc: alloc, Free: free}}
	n, m, ok := c.mapQuotaFile(fsys, ino, p.built)
	if !ok {
		return
	}
	bs := uint64(f.BlockSize)
	buf := make([]byte, f.BlockSize)
	for _, b := range m {
		clear(buf)
		if start := b.lblk * bs; start < uint64(len(p.built.Data)) {
			copy(buf, p.built.Data[start:])
		}
		c.writeBlock(b.pblk, buf)
	}
	qio.flush()
	n.SetSize(uint64(len(p.built.Data)))
	c.writeInode(ino, n)
	c.setQuotaInum(t, ino)
}

// quotaBlock is a data block of the new file: its logical and physical
// numbers.
type quotaBlock struct{ lblk, pblk uint64 }

// mapQuotaFile builds the new inode and maps the file's blocks through
// the library's ext2fs_bmap2 (BMAP_ALLOC) in the order they are first
// written, as ext2fs_file_write does. It returns the inode and the data
// blocks in allocation order; false when the library fails or the extent
// tree would need a second index level, which quotaRewritable refuses.
func (c *Checker) mapQuotaFile(fsys *ext2fs.Filsys, ino uint32, built *quota.Built) (ondisk.Inode, []quotaBlock, bool) {
	n := ext2fs.NewInode(c.fs, make(ondisk.Inode, ondisk.GoodOldInodeSize), uint32(c.opt.Now.Unix()))
	c.setQuotaInodeFields(n)
	bs := uint64(c.fs.BlockSize)
	seen := map[uint64]bool{}
	var m []quotaBlock
	for _, qb := range built.Order {
		lblk := uint64(qb) * quota.BlockSize / bs
		if seen[lblk] {
			continue
		}
		seen[lblk] = true
		pblk, err := ext2fs.Bmap2(fsys, ino, n, lblk, ext2fs.BmapAlloc)
		if err != nil {
			return n, m, false
		}
		if n.Flags()&ondisk.FlagExtents != 0 && ondisk.ExtentHeader(n.IBlock()).Depth() > 1 {
			return n, m, false
		}
		m = append(m, quotaBlock{lblk, pblk})
	}
	return n, m, true
}

// quotaIO is the library's I/O while a quota file is mapped: the
// mapping blocks the library writes (extent nodes, indirect blocks,
// written again at each change) are kept in memory and read back from
// there, and its inode writes are dropped (the caller writes the inode
// once, complete). flush then writes each block once, in the order it
// was first written (the device's write counts, and so s_kbytes_written,
// stay those of one write a block); a dry run never flushes.
type quotaIO struct {
	c       *Checker
	written map[uint64][]byte
	order   []uint64
}

// newQuotaIO is a quotaIO with nothing written yet.
func newQuotaIO(c *Checker) *quotaIO { return &quotaIO{c: c, written: map[uint64][]byte{}} }

// ReadBlock reads a block written through w, else the filesystem's.
func (w *quotaIO) ReadBlock(blk uint64, buf []byte) error {
	if b, ok := w.written[blk]; ok {
		copy(buf, b)
		return nil
	}
	return w.c.fs.ReadBlock(blk, buf)
}

// WriteBlock keeps a copy of the block.
func (w *quotaIO) WriteBlock(blk uint64, data []byte) {
	if _, ok := w.written[blk]; !ok {
		w.order = append(w.order, blk)
	}
	w.written[blk] = slices.Clone(data[:w.c.fs.BlockSize])
}

// WriteInode writes nothing: the inode stays with the caller.
func (w *quotaIO) WriteInode(uint32, ondisk.Inode) {}

// flush writes the kept blocks through the repair path.
func (w *quotaIO) flush() {
	for _, blk := range w.order {
		w.c.writeBlock(blk, w.written[blk])
	}
}

// dryAlloc is the library's allocation without side effects, over a
// bitmap with the old file's clusters freed and the dry run's own
// allocations taken.
type dryAlloc struct {
	c      *Checker
	blocks *bitmap.Bitmap
	taken  map[uint64]bool
	freed  []uint64 // sorted
}

// isTaken reports a cluster the dry run has allocated already.
func (d *dryAlloc) isTaken(cl uint64) bool { return d.taken[cl] }

func (d *dryAlloc) alloc(goal uint64) (uint64, bool) {
	// The old file's clusters count as free: allocate one of them when it
	// comes before the bitmap's first free cluster.
	f := d.c.fs
	cl, ok := ext2fs.NewCluster(f, d.blocks, goal, d.isTaken)
	g := f.ClusterOf(goal)
	if goal == 0 || goal >= f.BlocksCount {
		g = f.ClusterOf(f.FirstDataBlock)
	}
	pick := func(lo, hi uint64) (uint64, bool) {
		i, _ := slices.BinarySearch(d.freed, lo)
		for ; i < len(d.freed) && d.freed[i] < hi; i++ {
			if !d.taken[d.freed[i]] {
				return d.freed[i], true
			}
		}
		return 0, false
	}
	switch {
	case ok && cl >= g:
		if x, found := pick(g, cl); found {
			cl = x
		}
	case ok: // wrapped around: nothing free from the goal on in the bitmap
		if x, found := pick(g, ^uint64(0)); found {
			cl = x
		} else if x, found := pick(0, cl); found {
			cl = x
		}
	default:
		x, found := pick(g, ^uint64(0))
		if !found {
			if x, found = pick(0, g); !found {
				return 0, false
			}
		}
		cl = x
	}
	d.taken[cl] = true
	return cl << f.ClusterBits, true
}

// punchAll frees every block of inode n (data and mapping blocks), as
// ext2fs_punch(fs, ino, inode, NULL, 0, ~0) does (and deallocate_inode's
// block walk), each cluster once when its blocks come together; the inode
// itself is rewritten by the caller.
func (c *Checker) punchAll(n ondisk.Inode, free func(uint64)) {
	f := c.fs
	s := c.newScratch()
	last := ^uint64(0)
	c.iterateBlocks(s, n, func(b uint64, _ int64) {
		if b == 0 {
			return
		}
		cl := f.ClusterOf(b)
		if cl == last {
			return
		}
		last = cl
		free(b)
	})
}
