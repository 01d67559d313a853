package check

import (
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// maxExtentDepthCount bounds the per-level statistics, as e2fsck's
// MAX_EXTENT_DEPTH_COUNT.
const maxExtentDepthCount = 5

// extentLevel counts entries used and available at one tree level.
type extentLevel struct{ num, max int64 }

// extentScan is the per-inode state of an extent tree walk.
type extentScan struct {
	w        *blockWalk
	s        *inodeScratch
	eof      uint64
	levels   [maxExtentDepthCount]extentLevel
	maxDepth int
	// path[l] is the block of the index node being walked at level l
	// (l >= 1; the root lives in the inode). Going down to a block that
	// is already on the path is a cycle, as the library reports.
	path [maxExtentDepthCount + 8]uint64
	// last extent context for messages
	p               problem.Problem
	err             string // set when the walk failed (library op + message)
	op              string
	errBlk, errLblk uint64
}

// extentBlocks checks an extent-mapped inode (check_blocks_extents).
func (c *Checker) extentBlocks(s *inodeScratch, w *blockWalk) {
	f := c.fs
	n := w.n
	root := ondisk.ExtentHeader(n.IBlock())
	if root.Verify() != nil {
		c.fix(problem.Problem{Code: problem.PR_1_MISSING_EXTENT_HEADER, Ino: w.ino, Inode: c.inodeInfo(n)})
		return
	}
	depth := int(root.Depth())
	d := min(depth, len(c.stats.ExtentDepth)-1)
	c.stats.ExtentDepth[d]++
	if maxD := maxExtentDepth(f.BlockSize); depth > maxD {
		c.fix(problem.Problem{Code: problem.PR_1_EXTENT_BAD_MAX_DEPTH, Ino: w.ino, Blk: uint64(depth), Blk2: uint64(maxD), Inode: c.inodeInfo(n)})
	}
	x := &s.xscan
	*x = extentScan{w: w, s: s, maxDepth: depth}
	x.eof = (n.Size()+uint64(f.BlockSize)-1)>>f.BlockBits - 1
	x.p = problem.Problem{Ino: w.ino} // Inode is filled in only when reporting
	c.scanExtentNode(x, root, 0, 0, 0, (n.Size()+uint64(f.BlockSize)-1)>>f.BlockBits, true, false)
	if x.err != "" {
		p := problem.Problem{Code: problem.PR_1_EXTENT_ITERATE_FAILURE, Ino: w.ino, Str: x.op, Blk: x.errBlk, Blk2: x.errLblk, Err: x.err, Inode: c.inodeInfo(n)}
		if c.fix(p) {
			w.clear = true
			return
		}
	}
	c.shouldRebuildExtents(x)
	if x.err != "" {
		// Declined: the library's error stays set, and the block walk
		// reports it as a failed iteration (which stops the run).
		w.iterErr = x.err
	}
}

// maxExtentDepth is the deepest tree needed to map 2^32 blocks.
func maxExtentDepth(blockSize int) int {
	perBlock := (blockSize - ondisk.ExtentHeaderSize) / ondisk.ExtentEntrySize
	return 1 + (log2(uint64(1)<<32-1)-log2(4))/log2(uint64(perBlock))
}

func log2(v uint64) int {
	n := -1
	for v != 0 {
		v >>= 1
		n++
	}
	return n
}

// scanExtentNode walks one node (scan_extent_node). level is the node's
// depth from the root; start/end bound the logical range its parent gave.
// nodeEnd is the exclusive logical end the library assigns the node (used
// to compute the length of its last index entry, in 32-bit arithmetic).
func (c *Checker) scanExtentNode(x *extentScan, h ondisk.ExtentHeader, level int, start, end, nodeEnd uint64, tryRepairs, failedCsum bool) {
	f := c.fs
	w := x.w
	entries := int(h.Entries())
	isLeaf := level == x.maxDepth
	if level < maxExtentDepthCount {
		l := &x.levels[level]
		l.num += int64(entries)
		l.max += int64(h.Max())
		if level > 0 && entries < int(h.Max()) {
			l.max--
		}
	}
	p := &x.p
	for i := 0; i < entries; i++ {
		var lblk, pblk uint64
		var length uint64
		var uninit bool
		if isLeaf {
			e := h.Leaf(i)
			lblk, pblk, length, uninit = uint64(e.Lblk), e.Pblk, uint64(e.Len), e.Uninit
		} else {
			e := h.Idx(i)
			lblk, pblk = uint64(e.Lblk), e.Leaf
			// An index covers up to the next index's start (or the node's
			// end), computed in 32 bits as the library does.
			endBlk := uint32(nodeEnd)
			if i+1 < entries {
				endBlk = h.Idx(i + 1).Lblk
			}
			length = uint64(endBlk - uint32(lblk))
		}
		lastLblk := lblk + length - 1
		p.Blk, p.Blk2, p.Num, p.BlkCount = pblk, lblk, length, int64(lblk+length)
		var code problem.Code
		switch {
		case pblk == 0 || pblk < f.FirstDataBlock || pblk >= f.BlocksCount:
			code = problem.PR_1_EXTENT_BAD_START_BLK
		case lblk < start:
			code = problem.PR_1_OUT_OF_ORDER_EXTENTS
		case end != 0 && lastLblk > end && !(lastLblk > x.eof && (uninit || w.n.Flags()&ondisk.FlagVerity != 0)):
			code = problem.PR_1_EXTENT_END_OUT_OF_BOUNDS
		case isLeaf && length == 0:
			code = problem.PR_1_EXTENT_LENGTH_ZERO
		case isLeaf && pblk+length > f.BlocksCount:
			code = problem.PR_1_EXTENT_ENDS_BEYOND
		case isLeaf && w.isDir && w.n.SizeHigh() == 0 && !c.sb.HasIncompat(ondisk.IncompatLargeDir) &&
			lblk+length > 1<<(21-c.sb.LogBlockSize()):
			code = problem.PR_1_TOOBIG_DIR
		}
		if isLeaf && code == 0 && length > 0 {
			if lblk < w.nextLblock {
				code = problem.PR_1_EXTENT_COLLISION
			} else if lblk+length > w.nextLblock {
				w.nextLblock = lblk + length
			}
		}
		if tryRepairs && w.isDir && code == 0 && uninit {
			q := *p
			q.Code = problem.PR_1_UNINIT_DBLOCK
			c.fixInode(q, w.n)
		}
		if tryRepairs && code != 0 {
			q := *p
			q.Code = code
			c.fixInode(q, w.n)
			// Declined (or fixed): the extent is skipped either way.
			continue
		}
		if !isLeaf {
			next := tryRepairs
			if w.ino != ondisk.ResizeIno && pblk < f.BlocksCount && c.blockMeta.Test(f.ClusterOf(pblk)) {
				next = false
				c.fix(problem.Problem{Code: problem.PR_1_CRITICAL_METADATA_COLLISION, Ino: w.ino, Blk: pblk})
			}
			if level+1 >= len(x.s.levels) {
				x.err, x.op, x.errBlk, x.errLblk = "Extent tree too deep", "EXT2_EXTENT_DOWN", pblk, lblk
				return
			}
			for l := level; l >= 1; l-- {
				if l < len(x.path) && x.path[l] == pblk {
					x.err, x.op, x.errBlk, x.errLblk = "Found cyclic loop in extent tree", "EXT2_EXTENT_DOWN", pblk, lblk
					return
				}
			}
			if level+1 < len(x.path) {
				x.path[level+1] = pblk
			}
			buf := x.s.levels[level+1]
			if err := f.ReadBlock(pblk, buf); err != nil {
				x.err, x.op, x.errBlk, x.errLblk = err.Error(), "EXT2_EXTENT_DOWN", pblk, lblk
				return
			}
			child := ondisk.ExtentHeader(buf)
			if child.Verify() != nil {
				if !next {
					return
				}
				q := *p
				q.Code = problem.PR_1_EXTENT_HEADER_INVALID
				q.Str = "EXT2_EXTENT_DOWN"
				c.fixInode(q, w.n)
				continue
			}
			if child.Entries() == 0 {
				x.err, x.op, x.errBlk, x.errLblk = "No 'down' extent", "EXT2_EXTENT_DOWN", pblk, lblk
				return
			}
			childCsumBad := false
			if f.MetadataCsum {
				sum, stored, ok := ondisk.ExtentBlockChecksum(buf, f.CsumSeed, w.ino, w.n.Generation())
				childCsumBad = !ok || sum != stored
			}
			var first uint64
			if level+1 == x.maxDepth {
				first = uint64(child.Leaf(0).Lblk)
			} else {
				first = uint64(child.Idx(0).Lblk)
			}
			if first != lblk {
				c.fix(problem.Problem{Code: problem.PR_1_EXTENT_INDEX_START_INVALID, Ino: w.ino, Blk: lblk, Blk2: first, Num: uint64(level), Inode: c.inodeInfo(w.n)})
			}
			c.scanExtentNode(x, child, level+1, first, lastLblk, lastLblk+1, next, childCsumBad)
			if x.err != "" {
				return
			}
			c.markBlockUsed(pblk)
			w.numBlocks++
			continue
		}
		// Leaf extent.
		if w.previousBlock != 0 && w.previousBlock+1 != pblk {
			w.fragmented = true
		}
		if tryRepairs && w.isDir && w.lastBlock+1 < int64(lblk) {
			newLblk := uint64(w.lastBlock + 1)
			if f.ClusterBits > 0 {
				mask := uint64(1)<<f.ClusterBits - 1
				newLblk = (newLblk+mask)&^mask | pblk&mask
			}
			c.fix(problem.Problem{Code: problem.PR_1_COLLAPSE_DBLOCK, Ino: w.ino, Blk: lblk, Blk2: newLblk, Inode: c.inodeInfo(w.n)})
		}
		if w.isDir {
			for w.lastDBBlock++; w.lastDBBlock < int64(lblk); w.lastDBBlock++ {
				c.addDirBlock(w.ino, 0, w.lastDBBlock)
			}
			for k := uint64(0); k < length; k++ {
				c.addDirBlock(w.ino, pblk+k, int64(lblk+k))
			}
			if length > 0 {
				w.lastDBBlock = int64(lblk + length - 1)
			}
		}
		if f.ClusterBits > 0 && c.unalignedCluster(w, pblk, lblk) {
			for k := uint64(0); k < length; k++ {
				c.fix(problem.Problem{Code: problem.PR_1_MISALIGNED_CLUSTER, Ino: w.ino, Blk: lblk + k, Blk2: pblk + k})
				c.markBlockUsed(pblk + k)
				c.markBlockUsed(pblk + k)
			}
		}
		var blk uint64
		if f.ClusterBits > 0 && w.previousBlock != 0 && f.ClusterOf(pblk) == f.ClusterOf(w.previousBlock) {
			blk = (f.ClusterOf(pblk) + 1) << f.ClusterBits
		} else {
			blk = f.ClusterOf(pblk) << f.ClusterBits
		}
		if blk < pblk+length {
			c.markBlocksUsed(blk, pblk+length-blk)
			ratio := uint64(1) << f.ClusterBits
			w.numBlocks += (pblk + length - blk + ratio - 1) / ratio
		}
		w.lastBlock = int64(lastLblk)
		w.previousBlock = pblk + length - 1
		start = lastLblk
		if !w.isDir && !uninit {
			w.lastInitLblock = int64(lastLblk)
		}
	}
	if failedCsum {
		q := *p
		q.Code = problem.PR_1_EXTENT_ONLY_CSUM_INVALID
		c.fixInode(q, w.n)
	}
}

// unalignedCluster is has_unaligned_cluster_map for bigalloc.
func (c *Checker) unalignedCluster(w *blockWalk, pblk, lblk uint64) bool {
	f := c.fs
	mask := uint64(1)<<f.ClusterBits - 1
	if pblk&mask != lblk&mask {
		return true
	}
	last := w.lastBlock
	prev := w.previousBlock
	if last >= 0 && prev != 0 && uint64(last)>>f.ClusterBits == lblk>>f.ClusterBits {
		if prev>>f.ClusterBits != pblk>>f.ClusterBits {
			return true
		}
	}
	return false
}

// shouldRebuildExtents offers pass-1E optimisation as e2fsck does.
func (c *Checker) shouldRebuildExtents(x *extentScan) {
	perBlock := int64((c.fs.BlockSize - ondisk.ExtentHeaderSize) / ondisk.ExtentEntrySize)
	for i := 0; i <= x.maxDepth && i < maxExtentDepthCount; i++ {
		ei := x.levels[i]
		if ei.max-ei.num > perBlock {
			c.fix(problem.Problem{Code: problem.PR_1E_CAN_NARROW_EXTENT_TREE, Ino: x.w.ino, Blk: uint64(i), Inode: c.inodeInfo(x.w.n)})
			return
		}
		for j := 0; j < i; j++ {
			if ei.num < x.levels[j].max {
				c.fix(problem.Problem{Code: problem.PR_1E_CAN_COLLAPSE_EXTENT_TREE, Ino: x.w.ino, Blk: uint64(i), Inode: c.inodeInfo(x.w.n)})
				return
			}
		}
	}
}

// fixInode reports q, filling in the inode fields of the message first.
func (c *Checker) fixInode(q problem.Problem, n ondisk.Inode) bool {
	if q.Inode == nil {
		q.Inode = c.inodeInfo(n)
	}
	return c.fix(q)
}
