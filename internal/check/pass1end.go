package check

import (
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// readBadBlocksList loads the bad-block list (the data blocks of inode 1
// inside the filesystem), as the library does before pass 1.
func (c *Checker) readBadBlocksList(s *inodeScratch) {
	f := c.fs
	buf := make([]byte, f.InodeSize)
	if f.ReadInode(ondisk.BadBlocksIno, buf, s.blk) != nil {
		return
	}
	n := ondisk.Inode(buf)
	if n.Flags()&(ondisk.FlagExtents|ondisk.FlagInlineData) != 0 {
		return
	}
	c.iterateBlocks(s, n, func(b uint64, blockcnt int64) {
		if blockcnt < 0 || b < f.FirstDataBlock || b >= f.BlocksCount || len(c.badBlocks) >= 1<<20 {
			return
		}
		if c.badBlocks == nil {
			c.badBlocks = map[uint64]bool{}
		}
		c.badBlocks[b] = true
	})
}

// checkBadBlocksInode walks inode 1's blocks (e2fsck's process_bad_block):
// listed blocks must be inside the filesystem; a listed block that is
// already in use must be group metadata, which is then reported.
func (c *Checker) checkBadBlocksInode(s *inodeScratch, ino uint32, n ondisk.Inode) {
	f := c.fs
	if n.Flags()&(ondisk.FlagExtents|ondisk.FlagInlineData) != 0 {
		return
	}
	// Inode 1 is the first inode e2fsck scans: what it finds in use are
	// the group metadata and the blocks inode 1 itself claimed so far.
	// Other groups' workers may be marking blocks at the same time, so
	// found tracks that state on its own instead of reading blockFound.
	meta := c.blockMeta.Clone()
	if c.sb.HasIncompat(ondisk.IncompatMMP) {
		if b := c.sb.MMPBlock(); b > f.FirstDataBlock && b < f.BlocksCount {
			meta.Set(f.ClusterOf(b))
		}
	}
	found := meta.Clone()
	bbcheck := false
	c.iterateBlocks(s, n, func(b uint64, blockcnt int64) {
		if b == 0 || c.sink.Aborted() {
			return
		}
		p := problem.Problem{Ino: ondisk.BadBlocksIno, Blk: b, BlkCount: blockcnt}
		if b < f.FirstDataBlock || b >= f.BlocksCount {
			p.Code = problem.PR_1_BB_ILLEGAL_BLOCK_NUM
			c.fix(p)
			return
		}
		cl := f.ClusterOf(b)
		if blockcnt < 0 {
			switch {
			case meta.Test(cl):
				bbcheck = true
				p.Code = problem.PR_1_BB_FS_BLOCK
				c.fix(p)
			case found.Test(cl):
				bbcheck = true
				p.Code = problem.PR_1_BBINODE_BAD_METABLOCK
				c.fix(p)
			default:
				found.Set(cl)
				c.markBlockUsed(b)
			}
			return
		}
		c.stats.BadBlocks++
		if !found.Test(cl) {
			found.Set(cl)
			c.blockFound.Set(cl)
			return
		}
		c.badBlockOwner(n, p)
		if bbcheck {
			return
		}
		if b == uint64(n.Block(12)) || b == uint64(n.Block(13)) || b == uint64(n.Block(14)) {
			bbcheck = true
		}
	})
	c.sink.EndLatch(problem.LatchBBlock)
	if bbcheck {
		if !c.fix(problem.Problem{Code: problem.PR_1_BBINODE_BAD_METABLOCK_PROMPT, Ino: ondisk.BadBlocksIno}) {
			c.abort = true
		}
	}
}

// badBlockOwner reports which group metadata a bad block that is already
// in use belongs to.
func (c *Checker) badBlockOwner(n ondisk.Inode, p problem.Problem) {
	f := c.fs
	b := p.Blk
	first := f.FirstDataBlock
	for g := uint32(0); g < f.Groups; g++ {
		p.Group = g
		gd := f.Group(g)
		if f.GroupHasSuper(g) {
			if b == first {
				if g == 0 {
					p.Code = problem.PR_1_BAD_PRIMARY_SUPERBLOCK
				} else {
					p.Code = problem.PR_1_BAD_SUPERBLOCK
				}
				c.fix(p)
				return
			}
			if b > first && b <= first+uint64(f.DescBlocks) {
				if g == 0 {
					p.Code = problem.PR_1_BAD_PRIMARY_GROUP_DESCRIPTOR
				} else {
					p.Code = problem.PR_1_BAD_GROUP_DESCRIPTORS
				}
				c.fix(p)
				return
			}
		}
		if b == gd.BlockBitmap() {
			p.Code = problem.PR_1_BB_BAD_BLOCK
			c.fix(p)
			return
		}
		if b == gd.InodeBitmap() {
			p.Code = problem.PR_1_IB_BAD_BLOCK
			c.fix(p)
			return
		}
		if t := gd.InodeTable(); b >= t && b < t+uint64(f.InodeBlocksPerGroup) {
			return
		}
		first += uint64(f.BlocksPerGroup)
	}
	if b == uint64(n.Block(12)) || b == uint64(n.Block(13)) || b == uint64(n.Block(14)) {
		p.Code = problem.PR_1_BBINODE_BAD_METABLOCK
		c.fix(p)
		return
	}
	p.Group = 0
	p.Code = problem.PR_1_PROGERR_CLAIMED_BLOCK
	c.fix(p)
}

// endPass1 runs the end-of-pass work: EA refcounts and, when blocks were
// claimed twice, passes 1B-1D. After an inode was cleared part way
// through its blocks, e2fsck restarts from the beginning instead of going
// on (ErrRestart).
func (c *Checker) endPass1() error {
	c.checkEARefcounts()
	if c.p1.restart && c.repairing() && !c.sink.Aborted() {
		return ErrRestart
	}
	if c.dupCount > 0 && !c.sink.Aborted() {
		if c.opt.Preen {
			c.fix(problem.Problem{Code: problem.PR_1_DUP_BLOCKS_PREENSTOP})
		}
		c.passDup()
	}
	return nil
}
