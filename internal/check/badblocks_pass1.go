package check

import (
	"gofsck/internal/bitmap"
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// The bad-block inode in pass 1 (e2fsck's process_bad_block) and the
// library's reading of the list before it (ext2fs_read_bb_inode).
//
// Both walk inode 1 as ext2fs_block_iterate3 does without depth order:
// each mapping block is offered before what it maps, a pointer the
// visitor clears is zeroed where it lives (the mapping block is written
// back, or the inode), and a mapping pointer outside the filesystem left
// in place is an iterator error: a sibling mapping block is then not
// visited, and the error ends pass 1 (PR_1_BLOCK_ITERATE). Repairs follow
// process_bad_block's "yes" paths: a listed block outside the filesystem,
// a mapping block colliding with metadata or already in use, and the
// primary superblock or descriptors on the list are taken off it.

// badBlocksInBadBlocks is asked when the list names the inode-table
// block holding inode 1 (n, as read). Yes clears inode 1, and with it the
// list, and the check restarts from the beginning; it then returns true
// and the scan stops.
func (c *Checker) badBlocksInBadBlocks(n ondisk.Inode) bool {
	if !c.fix(problem.Problem{Code: problem.PR_1_BADBLOCKS_IN_BADBLOCKS, Ino: ondisk.BadBlocksIno}) || !c.repairing() {
		return false
	}
	c.clearInode(ondisk.BadBlocksIno, n, false)
	c.repair.bbRestart.Store(true)
	return true
}

// bbVisit is offered each non-zero pointer of inode 1 with its block
// count (negative for mapping blocks: -1 indirect, -2 double, -3 triple);
// it returns whether to clear the pointer and whether to stop.
type bbVisit func(b uint64, blockcnt int64) (clear, abort bool)

// iterateBadBlocksInode walks inode 1 with the library's iterator
// (ext2fs.BlockIter.IterateInode), mapping blocks and index entries before
// what they map, and returns its error message, "" if none. At most
// bbVisitBudget pointers are visited (in a block map, those inside
// mapping blocks).
//
// In a block map, cleared pointers are written back with write (mapping
// blocks as the iterator writes them, the inode through putInode), and a
// cleared mapping block is not descended into: the walk goes on.
//
// In an extent tree (a root that does not verify is no error: the handle
// cannot be opened; a child node that cannot be read, does not verify or
// fails its checksum ends the walk with the error), a listed block the
// visitor clears is unmapped by ext2fs_extent_set_bmap, a cleared index
// entry is replaced by one pointing at block 0 (which the walk then fails
// to read as a node, as the library's does). The handle edits n, as the
// library's write of inode 1 updates e2fsck's scan copy. A tree block the
// unmapping needs comes from found, the library's block found map at this
// point (meta, the group metadata, and inode 1's blocks so far; nil: none
// can be allocated); a leaf left empty is released.
func (c *Checker) iterateBadBlocksInode(n ondisk.Inode, meta, found *bitmap.Bitmap, write bool, visit bbVisit) string {
	extents := n.Flags()&ondisk.FlagExtents != 0
	if extents && ext2fs.IblockEmpty(n) {
		return ""
	}
	budget := bbVisitBudget
	it := &ext2fs.BlockIter{FS: c.fs, IO: bbIO{c, write}}
	fsys := &ext2fs.Filsys{FS: c.fs, IO: libIO{c}, Alloc: c.bbAllocator(meta, found)}
	changed, err := it.IterateInode(fsys, ondisk.BadBlocksIno, n, func(blk *uint64, blockcnt int64, ref uint64, _ int) int {
		if ref != 0 || extents {
			if budget--; budget < 0 {
				return ext2fs.BlockAbort
			}
		}
		ret := 0
		clr, ab := visit(*blk, blockcnt)
		if clr {
			*blk, ret = 0, ext2fs.BlockChanged
		}
		if ab && (extents || !clr || blockcnt >= 0) {
			ret |= ext2fs.BlockAbort
		}
		return ret
	})
	if changed && write {
		c.putInode(ondisk.BadBlocksIno, n)
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// bbIO is the bad-block inode walk's BlockIO: any read failure is the
// library's short read, and a changed mapping block is written only
// with write.
type bbIO struct {
	c     *Checker
	write bool
}

func (b bbIO) ReadBlock(blk uint64, buf []byte) error {
	if b.c.fs.ReadBlock(blk, buf) != nil {
		return ext2fs.ErrShortRead
	}
	return nil
}

func (b bbIO) WriteBlock(blk uint64, data []byte) {
	if b.write {
		b.c.writeBlockUncounted(blk, data)
	}
}

// bbAllocator is the allocator of inode 1's extent tree in pass 1: new
// tree blocks from found (see iterateBadBlocksInode; nil: none), freed
// ones released, and cleared in found unless they are metadata.
func (c *Checker) bbAllocator(meta, found *bitmap.Bitmap) ext2fs.Allocator {
	f := c.fs
	first, last := f.ClusterOf(f.FirstDataBlock), f.ClusterOf(f.BlocksCount-1)
	alloc := func(goal uint64) (uint64, bool) {
		if found == nil {
			return 0, false
		}
		g := f.ClusterOf(goal)
		if goal == 0 || g < first || g > last {
			g = first
		}
		cl := found.NextClear(g)
		if cl > last {
			if cl = found.NextClear(first); cl > last || cl >= g {
				return 0, false
			}
		}
		found.Set(cl)
		b := cl << f.ClusterBits
		c.markBlockUsed(b)
		c.markBlockOnDisk(cl, true)
		c.groupStatsBlock(b, 1)
		return b, true
	}
	free := func(b uint64) {
		if b < f.FirstDataBlock || b >= f.BlocksCount {
			return
		}
		if cl := f.ClusterOf(b); found != nil && !meta.Test(cl) {
			found.Clear(cl)
		}
		c.releaseBlock(b)
	}
	return ext2fs.AllocFuncs{Alloc: alloc, Free: free}
}

// readBBInode reads inode 1 as ext2fs_read_inode does: with
// metadata_csum a checksum failure is an error.
func (c *Checker) readBBInode() (ondisk.Inode, string) {
	f := c.fs
	// Group 0's inode table missing (zeroed to be relocated) or outside
	// the filesystem.
	switch t := f.Group(0).InodeTable(); {
	case t == 0:
		return nil, string(ext2fs.ErrMissingInodeTable)
	case t < f.FirstDataBlock || t+uint64(f.InodeBlocksPerGroup)-1 >= f.BlocksCount:
		return nil, string(ext2fs.ErrGdescBadInodeTable)
	}
	buf := make([]byte, f.InodeSize)
	if err := f.ReadInode(ondisk.BadBlocksIno, buf, make([]byte, f.BlockSize)); err != nil {
		return nil, string(ext2fs.ErrShortRead)
	}
	n := ondisk.Inode(buf)
	if f.MetadataCsum && !n.ChecksumValid(f.CsumSeed, ondisk.BadBlocksIno) {
		return nil, string(ext2fs.ErrInodeCsumInvalid)
	}
	return n, ""
}

// BadBlocksInodeError is the error of e2fsck's reading of the bad-block
// list before pass 1 (ext2fs_read_bb_inode), "" when there is none. The
// command prints it as "<prog>: <error> while reading bad blocks inode".
func (c *Checker) BadBlocksInodeError() string {
	n, msg := c.readBBInode()
	if msg != "" || n.Flags()&ondisk.FlagInlineData != 0 {
		return msg
	}
	return c.iterateBadBlocksInode(n, nil, nil, false, func(uint64, int64) (bool, bool) { return false, false })
}

// readBadBlocksList loads the bad-block list (the data blocks of inode 1
// inside the filesystem), as the library does before pass 1: nothing when
// inode 1 cannot be read, what was read before an iterator error
// otherwise.
func (c *Checker) readBadBlocksList(_ *inodeScratch) {
	f := c.fs
	n, msg := c.readBBInode()
	if msg != "" || n.Flags()&ondisk.FlagInlineData != 0 {
		return
	}
	c.iterateBadBlocksInode(n, nil, nil, false, func(b uint64, blockcnt int64) (bool, bool) {
		if blockcnt < 0 || b < f.FirstDataBlock || b >= f.BlocksCount || len(c.badBlocks) >= 1<<20 {
			return false, false
		}
		if c.badBlocks == nil {
			c.badBlocks = map[uint64]bool{}
		}
		c.badBlocks[b] = true
		return false, false
	})
}

// checkBadBlocksInode walks inode 1's blocks (e2fsck's process_bad_block):
// listed blocks must be inside the filesystem; a listed block that is
// already in use must be group metadata, which is then reported.
func (c *Checker) checkBadBlocksInode(s *inodeScratch, ino uint32, n ondisk.Inode) {
	f := c.fs
	if n.Flags()&ondisk.FlagInlineData != 0 {
		return
	}
	// Inode 1 is the first inode e2fsck scans: what it finds in use are
	// the group metadata and the blocks inode 1 itself claimed so far.
	// Other groups' workers may be marking blocks at the same time, so
	// found tracks that state on its own instead of reading blockFound.
	meta := c.blockMeta
	if n.Flags()&ondisk.FlagExtents != 0 || !noBlockPointers(n) {
		// Copied only when there are blocks to walk: on a big volume
		// the copy is the page table of the whole block map.
		meta = c.blockMeta.Clone()
	} else {
		meta = bitmap.New(0)
	}
	if c.sb.HasIncompat(ondisk.IncompatMMP) {
		if b := c.sb.MMPBlock(); b > f.FirstDataBlock && b < f.BlocksCount {
			meta.Set(f.ClusterOf(b))
		}
	}
	found := meta.Clone()
	bbcheck := false
	// ind holds inode 1's mapping pointers as the scan read them (e2fsck
	// compares with its scan copy, which the iterator does not change).
	owners := map[uint64]bbOwner{}
	var ind [3]uint64
	for i := range ind {
		ind[i] = uint64(n.Block(12 + i))
	}
	visit := func(b uint64, blockcnt int64) (bool, bool) {
		if b == 0 {
			// process_bad_block ignores a zero pointer (an extent
			// index or extent a repair pointed at block 0).
			return false, false
		}
		if c.sink.Aborted() {
			return false, true
		}
		p := problem.Problem{Ino: ondisk.BadBlocksIno, Blk: b, BlkCount: blockcnt}
		if b < f.FirstDataBlock || b >= f.BlocksCount {
			p.Code = problem.PR_1_BB_ILLEGAL_BLOCK_NUM
			return c.fix(p), false
		}
		cl := f.ClusterOf(b)
		if blockcnt < 0 {
			switch {
			case meta.Test(cl):
				bbcheck = true
				p.Code = problem.PR_1_BB_FS_BLOCK
				if c.fix(p) {
					return true, false
				}
			case found.Test(cl):
				bbcheck = true
				p.Code = problem.PR_1_BBINODE_BAD_METABLOCK
				if c.fix(p) {
					return true, false
				}
				return false, c.sink.Aborted()
			default:
				found.Set(cl)
				c.markBlockUsed(b)
			}
			return false, false
		}
		c.stats.BadBlocks++
		if !found.Test(cl) {
			found.Set(cl)
			c.blockFound.Set(cl)
			return false, false
		}
		clr, meta := c.badBlockOwner(ind, p, owners)
		if meta {
			bbcheck = true
			return clr, !clr && c.sink.Aborted()
		}
		return clr, false
	}
	errMsg := c.iterateBadBlocksInode(n, meta, found, c.repairing(), visit)
	c.sink.EndLatch(problem.LatchBBlock)
	if errMsg != "" {
		c.fix(problem.Problem{Code: problem.PR_1_BLOCK_ITERATE, Ino: ino, Err: errMsg})
		return
	}
	if bbcheck {
		if !c.fix(problem.Problem{Code: problem.PR_1_BBINODE_BAD_METABLOCK_PROMPT, Ino: ondisk.BadBlocksIno}) {
			c.abort = true
		}
	}
}

// bbOwner is what a listed block already in use belongs to: the problem
// reporting it and the group named.
type bbOwner struct {
	code  problem.Code
	group uint32
}

// noBlockPointers reports whether every i_block pointer of n is zero.
func noBlockPointers(n ondisk.Inode) bool {
	for i := 0; i < ondisk.NBlocks; i++ {
		if n.Block(i) != 0 {
			return false
		}
	}
	return true
}

// badBlockOwner reports which group metadata a bad block that is already
// in use belongs to. It returns whether the block is to be taken off the
// list, and whether it was one of inode 1's own mapping blocks. owners
// caches the search (a hostile list may repeat a block many times).
func (c *Checker) badBlockOwner(ind [3]uint64, p problem.Problem, owners map[uint64]bbOwner) (clear, meta bool) {
	o, ok := owners[p.Blk]
	if !ok {
		o = c.findBadBlockOwner(ind, p.Blk)
		owners[p.Blk] = o
	}
	if o.code == 0 {
		// An inode-table block: the inode scan handles it.
		return false, false
	}
	p.Code, p.Group = o.code, o.group
	switch o.code {
	case problem.PR_1_BAD_PRIMARY_SUPERBLOCK, problem.PR_1_BAD_PRIMARY_GROUP_DESCRIPTOR:
		return c.fix(p), false
	case problem.PR_1_BB_BAD_BLOCK, problem.PR_1_IB_BAD_BLOCK:
		if c.fix(p) {
			c.markInvalidBitmap(o.group, o.code == problem.PR_1_BB_BAD_BLOCK)
		}
		return false, false
	case problem.PR_1_BBINODE_BAD_METABLOCK:
		return c.fix(p), true
	}
	c.fix(p)
	return false, false
}

// findBadBlockOwner is process_bad_block's search, group by group: the
// superblock and descriptor copies, the bitmaps, the inode table; then
// inode 1's own mapping blocks. Code 0 means an inode-table block.
func (c *Checker) findBadBlockOwner(ind [3]uint64, b uint64) bbOwner {
	f := c.fs
	first := f.FirstDataBlock
	for g := uint32(0); g < f.Groups; g++ {
		gd := f.Group(g)
		if f.GroupHasSuper(g) {
			if b == first {
				if g == 0 {
					return bbOwner{problem.PR_1_BAD_PRIMARY_SUPERBLOCK, g}
				}
				return bbOwner{problem.PR_1_BAD_SUPERBLOCK, g}
			}
			if b > first && b <= first+uint64(f.DescBlocks) {
				if g == 0 {
					return bbOwner{problem.PR_1_BAD_PRIMARY_GROUP_DESCRIPTOR, g}
				}
				return bbOwner{problem.PR_1_BAD_GROUP_DESCRIPTORS, g}
			}
		}
		if b == gd.BlockBitmap() {
			return bbOwner{problem.PR_1_BB_BAD_BLOCK, g}
		}
		if b == gd.InodeBitmap() {
			return bbOwner{problem.PR_1_IB_BAD_BLOCK, g}
		}
		if t := gd.InodeTable(); b >= t && b < t+uint64(f.InodeBlocksPerGroup) {
			return bbOwner{0, g}
		}
		first += uint64(f.BlocksPerGroup)
	}
	if b == ind[0] || b == ind[1] || b == ind[2] {
		return bbOwner{problem.PR_1_BBINODE_BAD_METABLOCK, f.Groups - 1}
	}
	return bbOwner{problem.PR_1_PROGERR_CLAIMED_BLOCK, 0}
}
