package check

import (
	"errors"
	"fmt"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Orphan processing of a writable check (e2fsck's release_orphan_inodes,
// run from check_super_block before pass 1): every inode of the orphan
// list is deleted (no links: "Clearing") or truncated to its size
// ("Truncating"), its blocks and inode returned to the on-disk bitmaps and
// the group and superblock counts, as ext2fs_block_alloc_stats2 and
// ext2fs_inode_alloc_stats2 do. The passes then see the released inodes
// as unused and pass 5 the edited bitmaps. With quotas, the quota files
// are read first and rewritten at the end (quota_orphan.go).
//
// Not implemented (the run stops as for an unimplemented fix, writing
// nothing): an orphan inode or block that cannot be read (e2fsck's read
// error handler would prompt), an orphan file whose own inode or block
// map cannot be read, and a list longer than the inode count (which
// e2fsck would follow forever).

// unsupported stops the run at code, as the CanFix guard does for a
// prompted problem.
func (c *Checker) unsupported(code problem.Code) {
	c.sink.Unsupported(code)
	c.abort = true
}

// errOrphanUnsupported ends an orphan release that gofsck cannot make.
var errOrphanUnsupported = errors.New("check: orphan release not implemented")

// orphanRelease is the state of releasing one orphan inode's blocks
// (e2fsck's process_block_struct).
type orphanRelease struct {
	c           *Checker
	d           *diskBitmaps
	p           problem.Problem
	truncating  bool
	truncBlock  int64
	truncOff    uint64
	truncated   uint64
	lastCluster uint64
	abort       bool
	err         error
	buf         []byte
	inode       ondisk.Inode // charged for the quota
}

// releaseOrphans is release_orphan_inodes. It returns true when it hit an
// inconsistency (the filesystem is then marked not valid).
func (c *Checker) releaseOrphans() bool {
	f := c.fs
	sb := c.sb
	if sb.LastOrphan() == 0 && !sb.HasRoCompat(ondisk.RoCompatOrphanPresent) {
		return false
	}
	ino := sb.LastOrphan()
	if !c.orphanQuotaBegin() {
		return false
	}
	// Win or lose, the head of the list is not used again.
	sb.SetLastOrphan(0)
	if sb.State()&ondisk.StateError != 0 {
		return false
	}
	if ino != 0 && (ino < f.FirstIno || ino > sb.InodesCount()) {
		c.fix(problem.Problem{Code: problem.PR_0_ORPHAN_ILLEGAL_HEAD_INODE, Ino: ino})
		return true
	}
	d := c.loadBitmaps()
	c.applyOrphanEdits(d)
	before := c.groupFreeClusters()
	defer func() { c.orphanFree.clusters += int64(c.groupFreeClusters() - before) }()
	for steps := uint64(0); ino != 0; steps++ {
		if steps > uint64(f.InodesCount) {
			// A list that never ends (e2fsck would loop forever).
			c.unsupported(problem.PR_0_ORPHAN_CLEAR_INODE)
			return false
		}
		next, err := c.releaseOrphanInode(ino, d)
		if errors.Is(err, errOrphanUnsupported) {
			c.unsupported(problem.PR_0_ORPHAN_CLEAR_INODE)
			return false
		}
		if err != nil {
			return true
		}
		ino = next
	}
	if sb.HasRoCompat(ondisk.RoCompatOrphanPresent) && !sb.HasCompat(ondisk.CompatOrphanFile) {
		return true
	}
	if bad := c.processOrphanFile(d); bad || c.abort {
		return bad
	}
	c.orphanQuotaEnd(d)
	return false
}

// applyOrphanEdits applies the bitmap edits made so far to d.
func (c *Checker) applyOrphanEdits(d *diskBitmaps) {
	c.repair.mu.Lock()
	defer c.repair.mu.Unlock()
	c.repair.applyEdits(d)
}

// releaseOrphanInode is release_orphan_inode: it returns the next inode of
// the list, or an error when the release stopped.
func (c *Checker) releaseOrphanInode(ino uint32, d *diskBitmaps) (uint32, error) {
	f := c.fs
	n := make(ondisk.Inode, f.InodeSize)
	if err := f.ReadInode(ino, n, make([]byte, f.BlockSize)); err != nil {
		return 0, errOrphanUnsupported
	}
	p := problem.Problem{Ino: ino, Inode: c.inodeInfo(n), Str: "Clearing"}
	if n.LinksCount() != 0 {
		p.Str = "Truncating"
	}
	q := p
	q.Code = problem.PR_0_ORPHAN_CLEAR_INODE
	c.fix(q)
	next := n.Dtime()
	if next != 0 && (next < f.FirstIno || next > c.sb.InodesCount()) {
		c.fix(problem.Problem{Code: problem.PR_0_ORPHAN_ILLEGAL_INODE, Ino: next, Inode: p.Inode})
		return 0, errors.New("illegal inode in orphan list")
	}
	if err := c.releaseInodeBlocks(ino, n, d, p); err != nil {
		return 0, err
	}
	if n.LinksCount() == 0 {
		c.chargeQuota(ino, n, 0, ^uint64(0)) // quota_data_inodes(-1)
		c.orphanFreeInode(ino, n.IsDir(), d)
		n.SetDtime(uint32(c.opt.Now.Unix()))
	} else {
		n.SetDtime(0)
	}
	c.writeInode(ino, n)
	return next, nil
}

// releaseInodeBlocks is release_inode_blocks: n is updated in place (block
// pointers, i_blocks) and written by the caller.
func (c *Checker) releaseInodeBlocks(ino uint32, n ondisk.Inode, d *diskBitmaps, p problem.Problem) error {
	f := c.fs
	if !c.hasValidBlocks(n) {
		// e2fsck 1.47.0 returns before the EA block here.
		return nil
	}
	r := &orphanRelease{c: c, d: d, p: p, buf: make([]byte, f.BlockSize), inode: n}
	bs := uint64(f.BlockSize)
	if n.LinksCount() != 0 {
		r.truncating = true
		r.truncBlock = int64((n.Size() + bs - 1) / bs)
		r.truncOff = uint64(uint32(n.Size())) % bs
	}
	if err := r.walk(ino, n); err != nil {
		return err
	}
	if r.err != nil {
		return r.err
	}
	if r.abort {
		return errors.New("orphan release aborted")
	}
	if r.truncated > 0 {
		// One per cluster released; more than i_blocks holds
		// (EOVERFLOW) leaves it as it is, as e2fsck ignores the error.
		_ = ext2fs.IblkSubBlocks(f, n, r.truncated)
	}
	return c.releaseOrphanEA(ino, n, d)
}

// releaseOrphanEA is the end of release_inode_blocks: the reference the
// inode holds on its extended attribute block is dropped
// (ext2fs_adjust_ea_refcount3), the block freed when no inode refers to
// it any more (its quota charge with it), and i_file_acl cleared, in n.
// A block number outside the filesystem counts as one more reference; a
// block that does not read as an EA block ends the orphan processing
// with the library's error, as in e2fsck.
func (c *Checker) releaseOrphanEA(ino uint32, n ondisk.Inode, d *diskBitmaps) error {
	blk := n.FileACL(c.sb.Is64bit())
	if blk == 0 {
		return nil
	}
	count, err := c.adjustEARefcount(blk, -1)
	if err != nil {
		c.out().Diagnostic(fmt.Sprintf("release_inode_blocks: %v while calling ext2fs_adjust_ea_refcount2 for inode %d\n", err, ino))
		return err
	}
	if count == 0 {
		c.chargeQuota(0, n, -uint64(c.fs.BlockSize), 0) // quota_data_sub
		c.orphanFreeBlock(blk, d)
		c.orphanFree.blocks++ // ctx->free_blocks++
	}
	// ext2fs_file_acl_block_set: the high half only with 64bit.
	if c.sb.Is64bit() {
		n.SetFileACL(0)
	} else {
		n.SetFileACL(uint64(n.FileACLHi()) << 32)
	}
	return nil
}

// repairIO is a BlockIO for the repairs' walks: reads from the filesystem,
// writes through the repair path.
type repairIO struct{ c *Checker }

func (o repairIO) ReadBlock(blk uint64, buf []byte) error { return o.c.fs.ReadBlock(blk, buf) }

func (o repairIO) WriteBlock(blk uint64, data []byte) { o.c.writeBlock(blk, data) }

// walk releases the blocks of inode ino (held as n) with the library's
// iterator and BLOCK_FLAG_DEPTH_TRAVERSE, as release_inode_blocks does:
// data blocks in order, each mapping block or index entry after what it
// maps. In a block map released pointers are written back (repairIO); a
// deletion changes nothing in an extent tree, while in a truncation each
// released block is unmapped by ext2fs_extent_set_bmap, which shortens,
// cuts or removes its extent, frees a leaf it empties and splits a full
// node for a cut (the new block allocated from the on-disk bitmap, as the
// library allocates before e2fsck's pass 1). A map the iterator cannot
// follow (EXT2_ET_BAD_IND_BLOCK and the like, an extent root that does
// not verify) is passed over as the library passes over it: an extent
// root that does not open maps nothing; an iterator error (a broken
// indirect block) is printed as e2fsck's com_err prints it and ends the
// orphan processing.
func (r *orphanRelease) walk(ino uint32, n ondisk.Inode) error {
	c := r.c
	f := c.fs
	it := &ext2fs.BlockIter{FS: f, IO: repairIO{c},
		Flags: ext2fs.BlockFlagDepthTraverse | ext2fs.BlockFlagStopOnError}
	fsys := &ext2fs.Filsys{FS: f, IO: libIO{c}, Alloc: ext2fs.AllocFuncs{
		Alloc: func(goal uint64) (uint64, bool) { return c.earlyAllocBlock(goal, r.d) },
		Free: func(b uint64) {
			if b >= f.FirstDataBlock && b < f.BlocksCount {
				c.orphanFreeBlock(b, r.d)
			}
		},
	}}
	changed, err := it.IterateInode(fsys, ino, n, func(blk *uint64, cnt int64, _ uint64, _ int) int {
		nb, changed := r.block(*blk, cnt)
		ret := 0
		if changed {
			*blk = nb
			ret |= ext2fs.BlockChanged
		}
		if r.abort || r.err != nil {
			ret |= ext2fs.BlockAbort
		}
		return ret
	})
	if err != nil && r.err == nil && !r.abort {
		// The blocks released before the error stay released, and
		// the pointers cleared so far are written (the iterator's
		// abort_exit writes a changed block map); the orphan
		// processing then ends.
		if changed {
			c.writeInode(ino, n)
		}
		c.out().Diagnostic(fmt.Sprintf("release_inode_blocks: %v while calling ext2fs_block_iterate for inode %d\n", err, ino))
		return err
	}
	return nil
}

// block is release_inode_block for block blk at logical position cnt
// (negative for mapping blocks). It returns the block's new number and
// whether it changed (released by a truncation).
func (r *orphanRelease) block(blk uint64, cnt int64) (uint64, bool) {
	c := r.c
	f := c.fs
	if blk == 0 {
		return 0, false
	}
	cl := f.ClusterOf(blk)
	if r.lastCluster == cl {
		return blk, false
	}
	r.lastCluster = cl
	p := r.p
	p.Blk, p.BlkCount = blk, cnt
	if blk < f.FirstDataBlock || blk >= f.BlocksCount {
		p.Code = problem.PR_0_ORPHAN_ILLEGAL_BLOCK_NUM
		c.fix(p)
		r.abort = true
		return blk, false
	}
	if !r.d.blocks.Test(cl) {
		p.Code = problem.PR_0_ORPHAN_ALREADY_CLEARED_BLOCK
		c.fix(p)
		r.abort = true
		return blk, false
	}
	changed := false
	if r.truncating {
		if cnt < 0 {
			if err := f.ReadBlock(blk, r.buf); err != nil {
				r.err = errOrphanUnsupported
				return blk, false
			}
			for _, b := range r.buf {
				if b != 0 {
					return blk, false // a mapping block still maps something
				}
			}
		}
		if cnt >= 0 && cnt < r.truncBlock {
			return blk, false
		}
		if cnt == r.truncBlock && r.truncOff != 0 {
			if err := f.ReadBlock(blk, r.buf); err != nil {
				r.err = errOrphanUnsupported
				return blk, false
			}
			clear(r.buf[r.truncOff:])
			c.writeBlock(blk, r.buf)
		}
		r.truncated++
		changed = true
	}
	c.chargeQuota(0, r.inode, -uint64(f.BlockSize), 0) // quota_data_sub
	c.orphanFreeBlock(blk, r.d)
	c.orphanFree.blocks++ // ctx->free_blocks++
	if changed {
		return 0, true
	}
	return blk, false
}

// groupFreeClusters is the sum of the group descriptors' free counts.
func (c *Checker) groupFreeClusters() uint64 {
	var n uint64
	for g := uint32(0); g < c.fs.Groups; g++ {
		n += uint64(c.fs.Group(g).FreeBlocks())
	}
	return n
}

// orphanFreeBlock is ext2fs_block_alloc_stats2(fs, blk, -1) before pass 1:
// the on-disk bitmap, the group's free count (and BLOCK_UNINIT flag) and
// the superblock's free count.
func (c *Checker) orphanFreeBlock(blk uint64, d *diskBitmaps) {
	f := c.fs
	cl := f.ClusterOf(blk)
	d.blocks.Clear(cl)
	c.markBlockOnDisk(cl, false)
	g := uint32((blk - f.FirstDataBlock) / uint64(f.BlocksPerGroup))
	if g < f.Groups {
		gd := f.Group(g)
		gd.SetFreeBlocks(gd.FreeBlocks() + 1)
		gd.SetFlags(gd.Flags() &^ ondisk.BgBlockUninit)
		gd.UpdateChecksum(c.sb, g)
	}
	c.sb.SetFreeBlocksCount(c.sb.FreeBlocksCount() + 1<<f.ClusterBits)
}

// orphanFreeInode is ext2fs_inode_alloc_stats2(fs, ino, -1, isDir).
func (c *Checker) orphanFreeInode(ino uint32, isDir bool, d *diskBitmaps) {
	f := c.fs
	d.inodes.Clear(uint64(ino))
	c.markInodeOnDisk(ino, false)
	ipg := f.InodesPerGroup
	g := (ino - 1) / ipg
	if g < f.Groups {
		gd := f.Group(g)
		gd.SetFreeInodes(gd.FreeInodes() + 1)
		if isDir && gd.UsedDirs() > 0 {
			gd.SetUsedDirs(gd.UsedDirs() - 1)
		}
		gd.SetFlags(gd.Flags() &^ ondisk.BgInodeUninit)
		if f.GdtCsum {
			firstUnused := ipg - gd.ItableUnused() + g*ipg + 1
			if ino >= firstUnused {
				gd.SetItableUnused(g*ipg + ipg - ino)
			}
			gd.UpdateChecksum(c.sb, g)
		}
	}
	c.sb.SetFreeInodesCount(c.sb.FreeInodesCount() + 1)
}

// processOrphanFile is e2fsck 1.47.0's process_orphan_file: every inode
// in the orphan file's slots is released; the slots and orphan_present
// are left alone (later versions clear them here). A hole, a bad magic or
// checksum stops it. It returns true when the file is inconsistent.
func (c *Checker) processOrphanFile(d *diskBitmaps) bool {
	f := c.fs
	sb := c.sb
	if !sb.HasCompat(ondisk.CompatOrphanFile) {
		return false
	}
	ino := sb.OrphanFileInum()
	n := make(ondisk.Inode, f.InodeSize)
	if ino == 0 || ino > f.InodesCount || f.ReadInode(ino, n, make([]byte, f.BlockSize)) != nil {
		c.unsupported(problem.PR_0_ORPHAN_CLEAR_INODE)
		return false
	}
	bs := uint64(f.BlockSize)
	if n.Size()&(bs-1) != 0 {
		c.fix(problem.Problem{Code: problem.PR_0_ORPHAN_FILE_WRONG_SIZE, Ino: ino})
		return true
	}
	blocks := int64(n.Size() / bs)
	slots := (f.BlockSize - ondisk.OrphanTailSize) / 4
	buf := make([]byte, f.BlockSize)
	bad := false
	err := c.orphanBlocks(ino, n, true, func(lblk int64, blk uint64) error {
		p := problem.Problem{Ino: ino, Blk: uint64(lblk)}
		if blk == 0 {
			if lblk == blocks {
				return errOrphanStop
			}
			p.Code = problem.PR_0_ORPHAN_FILE_HOLE
			c.fix(p)
			bad = true
			return errOrphanStop
		}
		if f.ReadBlock(blk, buf) != nil {
			return errOrphanUnsupported
		}
		ob := ondisk.OrphanBlock(buf)
		if ob.Magic() != ondisk.OrphanBlockMagic {
			p.Code = problem.PR_0_ORPHAN_FILE_BAD_MAGIC
			c.fix(p)
			bad = true
			return errOrphanStop
		}
		if f.MetadataCsum {
			if ob.ComputeChecksum(f.CsumSeed, ino, n.Generation(), blk) != ob.Checksum() {
				p.Code = problem.PR_0_ORPHAN_FILE_BAD_CHECKSUM
				c.fix(p)
				bad = true
				return errOrphanStop
			}
		}
		for i := 0; i < slots; i++ {
			oi := ob.Slot(i)
			if oi == 0 {
				continue
			}
			if _, err := c.releaseOrphanInode(oi, d); err != nil {
				if errors.Is(err, errOrphanUnsupported) {
					return err
				}
				bad = true
				return errOrphanStop
			}
		}
		// e2fsck 1.47.0 leaves the slots as they are (the block is
		// cleared by the end-of-run orphan file check).
		return nil
	})
	switch {
	case errors.Is(err, errOrphanUnsupported), errors.Is(err, errOrphanMap):
		c.unsupported(problem.PR_0_ORPHAN_CLEAR_INODE)
		return false
	case bad:
		return true
	}
	// e2fsck 1.47.0 does not clear orphan_present here either.
	return false
}
