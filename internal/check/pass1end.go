package check

import (
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// checkBadBlocksInode walks inode 1's block list: every listed block must
// be inside the filesystem; each is marked in use.
func (c *Checker) checkBadBlocksInode(s *inodeScratch, ino uint32, n ondisk.Inode) {
	f := c.fs
	if n.Flags()&(ondisk.FlagExtents|ondisk.FlagInlineData) != 0 {
		return
	}
	for i := 0; i < ondisk.NBlocks; i++ {
		b := uint64(n.Block(i))
		if b == 0 {
			continue
		}
		if b < f.FirstDataBlock || b >= f.BlocksCount {
			c.fix(problem.Problem{Code: problem.PR_1_BB_ILLEGAL_BLOCK_NUM, Ino: ino, Blk: b, BlkCount: int64(i)})
			continue
		}
		if i >= 12 {
			// Indirect blocks of the bad-block list: must not be metadata.
			if c.blockMeta.Test(f.ClusterOf(b)) {
				c.fix(problem.Problem{Code: problem.PR_1_BB_FS_BLOCK, Ino: ino, Blk: b, BlkCount: int64(-(i - 11))})
				continue
			}
			c.markBlockUsed(b)
			continue
		}
		c.markBlockUsed(b)
	}
}

// endPass1 runs the end-of-pass work: EA refcounts and, when blocks were
// claimed twice, passes 1B-1D.
func (c *Checker) endPass1() {
	c.checkEARefcounts()
	if c.dupCount > 0 && !c.sink.Aborted() {
		c.passDup()
	}
}
