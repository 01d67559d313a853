package check

import (
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// blockWalk is the per-inode state of check_blocks (e2fsck's
// process_block_struct).
type blockWalk struct {
	ino            uint32
	n              ondisk.Inode
	isDir, isReg   bool
	numBlocks      uint64 // clusters counted, including metadata
	lastBlock      int64  // last logical block seen (-1: none)
	lastInitLblock int64
	lastDBBlock    int64
	previousBlock  uint64
	fragmented     bool
	numIllegal     int
	suppress       bool
	clear          bool
	maxBlocks      uint64
	nextLblock     uint64 // extent collision detection
	// iterErr is the message of the block iterator's error and
	// iterFailed says it failed (ext2fs.BlockIter's or the extent
	// walk's); PR_1_BLOCK_ITERATE is raised only when both are set.
	iterErr    string
	iterFailed bool
	// setZero and changed are processBlock's answer for the pointer it
	// was given: clear it in the iterator's copy, and write that copy
	// (the library's BLOCK_CHANGED).
	setZero, changed bool
}

// checkBlocks accounts for every block of an inode and checks sizes
// (e2fsck's check_blocks).
// eaQuota is the blocks charged by EA inodes referenced from the inode
// body; the inode counts of EA inodes are not tracked yet (eaInodes 0).
func (c *Checker) checkBlocks(s *inodeScratch, ino uint32, n ondisk.Inode, eaQuota uint64) {
	const eaInodes = 0
	f := c.fs
	sb := c.sb
	w := &s.walk // reused: checking an inode allocates nothing
	*w = blockWalk{
		ino: ino, n: n, isDir: n.IsDir(), isReg: n.IsReg(),
		lastBlock: -1, lastInitLblock: -1, lastDBBlock: -1,
		maxBlocks: 1 << (31 - sb.LogBlockSize()),
	}
	w.numBlocks = eaQuota>>f.ClusterBits + c.checkExtAttr(s, ino, n)>>f.ClusterBits
	extentFS := sb.HasIncompat(ondisk.IncompatExtents)
	inlineFS := sb.HasIncompat(ondisk.IncompatInlineData)
	flags := n.Flags()
	switch {
	case inlineFS && flags&ondisk.FlagInlineData != 0:
		c.inlineBlocks(w)
	case c.hasValidBlocks(n):
		if extentFS && flags&ondisk.FlagExtents != 0 {
			c.extentBlocks(s, w)
		} else if flags&ondisk.FlagInlineData != 0 {
			// A symlink with an EA block that the library counts as
			// having blocks, with INLINE_DATA_FL on a filesystem without
			// inline_data: the block iterator refuses it.
			w.iterErr, w.iterFailed = string(ext2fs.ErrInlineDataCantIterate), true
		} else if flags&ondisk.FlagExtents != 0 {
			// Without the extents feature the library still walks an
			// EXTENTS_FL inode as a tree, block by block.
			c.iterateBlocks(s, n, func(b uint64, blockcnt int64) {
				if !w.clear {
					c.processBlock(w, b, blockcnt, 0)
				}
			})
			w.lastInitLblock = w.lastBlock
		} else {
			c.mappedBlocks(s, w)
			w.lastInitLblock = w.lastBlock
		}
		if flags&ondisk.FlagExtents == 0 || !extentFS {
			c.convertBmapLater(w)
		}
	}
	c.sink.EndLatch(problem.LatchBlock)
	c.sink.EndLatch(problem.LatchTooBig)
	if w.iterFailed && w.iterErr != "" {
		c.fix(problem.Problem{Code: problem.PR_1_BLOCK_ITERATE, Ino: ino, Err: w.iterErr})
		return
	}
	if w.fragmented && w.numBlocks < uint64(f.BlocksPerGroup) {
		if w.isDir {
			c.stats.FragmentedDirs++
		} else {
			c.stats.FragmentedFiles++
		}
	}
	if w.clear {
		c.clearInode(ino, n, true)
		return
	}
	// A fix writes the inode once, at the end (e2fsck's dirty_inode).
	dirty := false
	if n.Flags()&ondisk.FlagIndex != 0 {
		if c.handleHtree(s, ino, n) {
			n.SetFlags(n.Flags() &^ ondisk.FlagIndex)
			dirty = true
		} else {
			c.dxDirs = append(c.dxDirs, dxDir{ino: ino, numBlocks: uint32(w.lastBlock + 1),
				hashVersion: s.root.HashVersion, levels: s.root.IndirectLevels})
		}
	}
	flags = n.Flags()
	if w.numBlocks == 0 && w.isDir && flags&ondisk.FlagInlineData == 0 {
		if c.fix(problem.Problem{Code: problem.PR_1_ZERO_LENGTH_DIR, Ino: ino, Inode: c.inodeInfo(n)}) {
			c.clearInode(ino, n, false)
			c.stats.Dirs--
			return
		}
	}
	if ino != sb.PrjQuotaInum() && ino != sb.OrphanFileInum() && (ino == ondisk.RootIno || ino >= f.FirstIno) &&
		flags&ondisk.FlagEAInode == 0 {
		c.chargeQuota(ino, n, w.numBlocks*uint64(f.BlockSize)<<f.ClusterBits, 1+eaInodes)
	}
	if !sb.HasRoCompat(ondisk.RoCompatHugeFile) || flags&ondisk.FlagHugeFile == 0 {
		w.numBlocks *= uint64(f.BlockSize / 512)
	}
	w.numBlocks <<= f.ClusterBits

	size := n.Size()
	badSize := 0
	var num uint64
	if w.isDir {
		nblock := size >> f.BlockBits
		if flags&ondisk.FlagInlineData != 0 {
			sz, ok := c.libInlineDataSize(n)
			if !ok {
				sz = 0
			}
			if !ok || uint64(sz) != size {
				badSize = 7
				num = uint64(sz)
			}
		} else if size&uint64(f.BlockSize-1) != 0 {
			badSize = 5
		} else if int64(nblock) > w.lastBlock+1 {
			badSize = 1
		} else if int64(nblock) < w.lastBlock+1 {
			if uint64(w.lastBlock+1)-nblock > uint64(sb.PreallocDirBlocks()) {
				badSize = 2
			}
		}
	} else {
		extentMapped := extentFS && flags&ondisk.FlagExtents != 0
		switch {
		case w.lastInitLblock >= 0 && size < uint64(w.lastInitLblock)*uint64(f.BlockSize) && flags&ondisk.FlagVerity == 0:
			badSize = 3
		case !extentMapped && size > maxSizes[sb.LogBlockSize()]:
			badSize = 4
		case extentMapped && size > (uint64(1)<<(32+f.BlockBits))-1:
			badSize = 6
		}
	}
	if badSize != 0 && !n.IsSymlink() {
		if badSize != 7 {
			num = uint64(w.lastBlock+1) * uint64(f.BlockSize)
		}
		if c.fix(problem.Problem{Code: problem.PR_1_BAD_I_SIZE, Ino: ino, Num: num, Group: uint32(badSize), Inode: c.inodeInfo(n)}) {
			c.setInodeSize(n, num)
			if n.Size() == 0 && n.Flags()&ondisk.FlagInlineData != 0 {
				clear(n.IBlock())
				n.SetFlags(n.Flags() &^ ondisk.FlagInlineData)
			}
			dirty = true
		}
	}
	if w.isReg && n.Size() >= 0x80000000 {
		c.stats.LargeFiles++
	}
	iblocks := uint64(n.BlocksLo())
	if sb.HasRoCompat(ondisk.RoCompatHugeFile) {
		iblocks |= uint64(n.BlocksHi()) << 32
	}
	if sb.CreatorOS() != ondisk.OSHurd && (w.numBlocks != iblocks ||
		(sb.HasRoCompat(ondisk.RoCompatHugeFile) && flags&ondisk.FlagHugeFile != 0 && n.BlocksHi() != 0)) {
		if c.fix(problem.Problem{Code: problem.PR_1_BAD_I_BLOCKS, Ino: ino, Num: w.numBlocks, Inode: c.inodeInfo(n)}) {
			n.SetBlocks(w.numBlocks)
			dirty = true
		}
	}
	iblocks = uint64(n.BlocksLo())
	if sb.HasRoCompat(ondisk.RoCompatHugeFile) {
		iblocks |= uint64(n.BlocksHi()) << 32
	}
	if sb.HasRoCompat(ondisk.RoCompatBigalloc) && (w.isReg || w.isDir) && iblocks > 0 &&
		(ino == ondisk.RootIno || ino >= f.FirstIno) && n.Flags()&(ondisk.FlagExtents|ondisk.FlagInlineData) == 0 {
		if c.fix(problem.Problem{Code: problem.PR_1_NO_BIGALLOC_BLOCKMAP_FILES, Ino: ino, Inode: c.inodeInfo(n)}) && c.rebuildQueued(ino) {
			c.p1.rebuild.Set(uint64(ino)) // converted to extents in pass 1E
		}
	}
	// Large linear directories are rebuilt as indexes in pass 3A when the
	// run may write (e2fsck's dirs_to_hash).
	if w.isDir && c.repairing() && sb.HasCompat(ondisk.CompatDirIndex) && n.Flags()&ondisk.FlagIndex == 0 &&
		(c.p1.lostFound == 0 || c.p1.lostFound != ino) && uint64(uint32(n.Size()))/uint64(f.BlockSize) >= 3 {
		c.setRehash(ino)
	}
	if dirty {
		c.putInode(ino, n)
	}
}

// addDirBlock appends to the directory block list. It returns false when
// the list is full (see dblistCap).
func (c *Checker) addDirBlock(ino uint32, blk uint64, lblk int64) bool {
	if lblk < 0 || lblk > 1<<32-1 {
		return true
	}
	if c.dblistCap != nil && !c.dblistCap.take(&c.dblistTaken) {
		if c.dblistCap.full.CompareAndSwap(false, true) {
			// e2fsck's failure to grow its list, which ends the run.
			c.fix(problem.Problem{Code: problem.PR_1_ADD_DBLOCK, Ino: ino, Blk: blk,
				Num: uint64(lblk), Err: string(ext2fs.ErrNoMemory)})
		}
		return false
	}
	c.dblist = append(c.dblist, dirBlock{ino: ino, blk: blk, lblk: uint32(lblk)})
	return true
}

// inlineBlocks registers the pseudo-blocks of an inline directory.
func (c *Checker) inlineBlocks(w *blockWalk) {
	if !w.isDir {
		return
	}
	c.addDirBlock(w.ino, 0, 0)
	if sz, ok := c.libInlineDataSize(w.n); ok && sz > ondisk.IBlockSize {
		c.addDirBlock(w.ino, 0, 1)
	}
}

// mappedBlocks walks a block-mapped inode with the library's block
// iterator, as check_blocks does (BLOCK_FLAG_HOLE for a directory, whose
// unmapped block 0 is still listed); a pointer processBlock clears is
// written back with the block holding it (BLOCK_CHANGED), or only in the
// iterator's copy.
func (c *Checker) mappedBlocks(s *inodeScratch, w *blockWalk) {
	var flags ext2fs.BlockFlags
	if w.isDir {
		flags = ext2fs.BlockFlagHole
	}
	s.io = pass1IO{c, s}
	it := s.blockIter(c, &s.io, flags)
	if c.opt.PrefetchBytes > 0 {
		// The children of a doubly or triply indirect block are read
		// one after another below it: hint them all at once.
		if s.prefetch == nil {
			f := c.fs
			s.prefetch = func(b uint64) { f.Prefetch(b, 1) }
		}
		it.Prefetch = s.prefetch
	}
	changed, err := it.Iterate(w.n, func(blk *uint64, blockcnt int64, ref uint64, _ int) int {
		c.processBlock(w, *blk, blockcnt, ref)
		r := 0
		if w.setZero {
			*blk = 0
		}
		if w.changed {
			r |= ext2fs.BlockChanged
		}
		if w.clear {
			r |= ext2fs.BlockAbort
		}
		return r
	})
	if err != nil {
		w.iterErr, w.iterFailed = ioErrorText(err), true
	}
	if changed {
		// The library writes its copy of the inode; e2fsck rereads it.
		c.putInode(w.ino, w.n)
	}
}

// pass1IO is check_blocks' BlockIO: mapping blocks read through the
// pass's read-error handler, written back uncounted.
type pass1IO struct {
	c *Checker
	s *inodeScratch
}

func (p *pass1IO) ReadBlock(blk uint64, buf []byte) error { return p.c.readBlockIO(p.s, blk, buf) }

func (p *pass1IO) WriteBlock(blk uint64, data []byte) { p.c.writeBlockUncounted(blk, data) }

// processBlock is e2fsck's process_block for one pointer. It returns true
// when the block was accepted (and, for an indirect block, should be
// descended into).
func (c *Checker) processBlock(w *blockWalk, blk uint64, blockcnt int64, ref uint64) bool {
	f := c.fs
	sb := c.sb
	if w.isDir && blockcnt == 0 && blk == 0 {
		c.addDirBlock(w.ino, 0, 0)
		w.lastDBBlock = 0
		return false
	}
	w.setZero, w.changed = false, false
	if blk == 0 {
		return false
	}
	if w.previousBlock != 0 && w.ino != ondisk.ResizeIno && w.previousBlock+1 != blk {
		w.fragmented = true
	}
	var code problem.Code
	if w.isDir && !sb.HasIncompat(ondisk.IncompatLargeDir) && w.n.SizeHigh() == 0 && blockcnt > 1<<(21-sb.LogBlockSize()) {
		code = problem.PR_1_TOOBIG_DIR
	}
	if w.isDir && w.numBlocks+1 >= w.maxBlocks {
		code = problem.PR_1_TOOBIG_DIR
	}
	if w.isReg && w.numBlocks+1 >= w.maxBlocks {
		code = problem.PR_1_TOOBIG_REG
	}
	if !w.isDir && !w.isReg && blockcnt > 0 {
		code = problem.PR_1_TOOBIG_SYMLINK
	}
	if blk < f.FirstDataBlock || blk >= f.BlocksCount {
		code = problem.PR_1_ILLEGAL_BLOCK_NUM
	}
	if blockcnt < 0 && w.ino != ondisk.ResizeIno && blk < f.BlocksCount && c.blockMeta.Test(f.ClusterOf(blk)) {
		c.fix(problem.Problem{Code: problem.PR_1_CRITICAL_METADATA_COLLISION, Ino: w.ino, Blk: blk})
		if c.repairing() {
			c.p1.restartLater = true
		}
	}
	if code != 0 {
		w.numIllegal++
		if w.ino != ondisk.ResizeIno && ref != 0 && c.blockMeta.Test(f.ClusterOf(ref)) {
			// Cleared in the iterator's copy only, not written.
			w.setZero = true
			return false
		}
		if !w.suppress && w.numIllegal%12 == 0 {
			if c.fix(problem.Problem{Code: problem.PR_1_TOO_MANY_BAD_BLOCKS, Ino: w.ino, Inode: c.inodeInfo(w.n)}) {
				w.clear = true
				return false
			}
			if c.fix(problem.Problem{Code: problem.PR_1_SUPPRESS_MESSAGES, Ino: w.ino, Inode: c.inodeInfo(w.n)}) {
				w.suppress = true
			}
		}
		if c.fix(problem.Problem{Code: code, Ino: w.ino, Blk: blk, BlkCount: blockcnt, Inode: c.inodeInfo(w.n)}) {
			w.setZero, w.changed = true, true
			if code != problem.PR_1_TOOBIG_DIR {
				c.markDirBlock(w, 0, blockcnt)
			}
			return false
		}
		return true
	}
	if w.ino == ondisk.ResizeIno {
		if blockcnt == -2 {
			c.markBlockUsed(blk)
		}
		w.numBlocks++
	} else if !(f.ClusterBits > 0 && w.previousBlock != 0 &&
		f.ClusterOf(blk) == f.ClusterOf(w.previousBlock) &&
		blk&(1<<f.ClusterBits-1) == uint64(blockcnt)&(1<<f.ClusterBits-1)) {
		c.markBlockUsed(blk)
		w.numBlocks++
	}
	if blockcnt >= 0 {
		w.lastBlock = blockcnt
	}
	w.previousBlock = blk
	c.markDirBlock(w, blk, blockcnt)
	return true
}

// markDirBlock adds a directory's block (and the holes before it) to the
// directory block list.
func (c *Checker) markDirBlock(w *blockWalk, blk uint64, blockcnt int64) {
	if !w.isDir || blockcnt < 0 {
		return
	}
	for w.lastDBBlock++; w.lastDBBlock < blockcnt; w.lastDBBlock++ {
		if !c.addDirBlock(w.ino, 0, w.lastDBBlock) {
			w.lastDBBlock = blockcnt
			return
		}
	}
	c.addDirBlock(w.ino, blk, blockcnt)
	w.lastDBBlock = blockcnt
}
