package check

import (
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// maxExtentDepthCount bounds the per-level statistics, as e2fsck's
// MAX_EXTENT_DEPTH_COUNT.
const maxExtentDepthCount = 8

// maxScanDepth bounds the depth of a tree pass 1 walks (the library has
// no bound; a tree this deep takes as many chained blocks).
const maxScanDepth = 64

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
	path [maxScanDepth]uint64
	// cur[l] is the entry of node l being examined, and hlevel the level
	// the library's extent handle is on (repairs move it).
	cur    [maxScanDepth]int
	hlevel int
	// force is set when the tree is too deep: it is rebuilt in pass 1E
	// without a question, and no level statistics are kept.
	force bool
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
		if c.fix(problem.Problem{Code: problem.PR_1_MISSING_EXTENT_HEADER, Ino: w.ino, Inode: c.inodeInfo(n)}) {
			c.clearInode(w.ino, n, false)
		}
		return
	}
	depth := int(root.Depth())
	d := min(depth, len(c.stats.ExtentDepth)-1)
	c.stats.ExtentDepth[d]++
	force := false
	if maxD := maxExtentDepth(f.BlockSize); depth > maxD {
		p := problem.Problem{Code: problem.PR_1_EXTENT_BAD_MAX_DEPTH, Ino: w.ino, Blk: uint64(depth), Blk2: uint64(maxD), Inode: c.inodeInfo(n)}
		force = c.fix(p)
	}
	x := &s.xscan
	*x = extentScan{w: w, s: s, maxDepth: depth, force: force}
	x.eof = (n.Size()+uint64(f.BlockSize)-1)>>f.BlockBits - 1
	x.p = problem.Problem{Ino: w.ino} // Inode is filled in only when reporting
	c.scanExtentNode(x, root, 0, 0, 0, (n.Size()+uint64(f.BlockSize)-1)>>f.BlockBits, true, false)
	if x.err != "" {
		p := problem.Problem{Code: problem.PR_1_EXTENT_ITERATE_FAILURE, Ino: w.ino, Str: x.op, Blk: x.errBlk, Blk2: x.errLblk, Err: x.err, Inode: c.inodeInfo(n)}
		if c.fix(p) {
			// The inode is cleared and the check restarts (check_blocks
			// sees nothing more to do for it).
			w.numBlocks = 0
			n.SetBlocks(uint64(n.BlocksHi()) << 32)
			c.clearInode(w.ino, n, true)
			x.err = ""
		}
	}
	c.shouldRebuildExtents(x)
	if x.err != "" {
		// Declined: the library's error stays set, and the block walk
		// reports it as a failed iteration (which stops the run).
		w.iterErr, w.iterFailed = x.err, true
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
//
// On "yes" to an extent problem the entry is deleted (extentDelete) and
// the entry that moved into its place is examined next; the walk still
// makes as many steps as the node had entries, as e2fsck's does.
func (c *Checker) scanExtentNode(x *extentScan, h ondisk.ExtentHeader, level int, start, end, nodeEnd uint64, tryRepairs, failedCsum bool) {
	f := c.fs
	w := x.w
	entries := int(h.Entries())
	isLeaf := level == x.maxDepth
	x.hlevel = level
	if !x.force && !c.opt.FixesOnly && level < maxExtentDepthCount {
		l := &x.levels[level]
		l.num += int64(entries)
		l.max += int64(h.Max())
		if level > 0 && entries < int(h.Max()) {
			l.max--
		}
	}
	if !isLeaf && level > 0 && c.opt.PrefetchBytes > 0 {
		// The root's children were hinted with its inode's chunk
		// (hintInodeChildren).
		hintExtentChildren(f, h)
	}
	p := &x.p
	pos := 0 // the entry examined; a deletion moves the next one here
	for step := 0; step < entries; step, pos = step+1, pos+1 {
		if pos >= int(h.Entries()) {
			break
		}
		x.cur[level] = pos
		var lblk, pblk uint64
		var length uint64
		var uninit bool
		if isLeaf {
			e := h.Leaf(pos)
			lblk, pblk, length, uninit = uint64(e.Lblk), e.Pblk, uint64(e.Len), e.Uninit
		} else {
			e := h.Idx(pos)
			lblk, pblk = uint64(e.Lblk), e.Leaf
			// An index covers up to the next index's start (or the node's
			// end), computed in 32 bits as the library does.
			endBlk := uint32(nodeEnd)
			if pos+1 < int(h.Entries()) {
				endBlk = h.Idx(pos + 1).Lblk
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
			if c.fixInode(q, w.n) {
				// The flag goes; the entry is rewritten.
				h.Entry(pos).SetRawLen(uint16(length))
				uninit = false
				c.writeExtentNode(x, level)
				failedCsum = false
			}
		}
		if tryRepairs && code != 0 {
			q := *p
			q.Code = code
			if c.fixInode(q, w.n) && !c.invalidBitmaps {
				if c.extentRemove(x, level, pos) {
					return
				}
				failedCsum = false
				pos-- // the next entry moved here
			}
			// Declined: the extent is skipped.
			continue
		}
		if !isLeaf {
			next := tryRepairs
			if w.ino != ondisk.ResizeIno && pblk < f.BlocksCount && c.blockMeta.Test(f.ClusterOf(pblk)) {
				next = false
				c.fix(problem.Problem{Code: problem.PR_1_CRITICAL_METADATA_COLLISION, Ino: w.ino, Blk: pblk})
				if c.repairing() {
					c.p1.restartLater = true
				}
			}
			if level+1 >= maxScanDepth {
				x.err, x.op, x.errBlk, x.errLblk = "Extent tree too deep", "EXT2_EXTENT_DOWN", pblk, lblk
				return
			}
			for level+1 >= len(x.s.levels) {
				x.s.levels = append(x.s.levels, make([]byte, f.BlockSize))
			}
			for l := level; l >= 1; l-- {
				if l < len(x.path) && x.path[l] == pblk {
					x.err, x.op, x.errBlk, x.errLblk = string(ext2fs.ErrExtentCycle), "EXT2_EXTENT_DOWN", pblk, lblk
					return
				}
			}
			if level+1 < len(x.path) {
				x.path[level+1] = pblk
			}
			buf := x.s.levels[level+1]
			if err := c.readBlockIO(x.s, pblk, buf); err != nil {
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
				if c.fixInode(q, w.n) && !c.invalidBitmaps {
					if c.extentRemove(x, level, pos) {
						return
					}
					failedCsum = false
					pos--
				}
				continue
			}
			if child.Entries() == 0 {
				x.err, x.op, x.errBlk, x.errLblk = string(ext2fs.ErrExtentNoDown), "EXT2_EXTENT_DOWN", pblk, lblk
				return
			}
			childCsumBad := false
			if f.MetadataCsum {
				sum, stored, ok := ondisk.ExtentBlockChecksum(buf, f.CsumSeed, w.ino, w.n.Generation())
				childCsumBad = !ok || sum != stored || c.csumInodeRereadFails(x.s, w.ino)
			}
			var first uint64
			if level+1 == x.maxDepth {
				first = uint64(child.Leaf(0).Lblk)
			} else {
				first = uint64(child.Idx(0).Lblk)
			}
			if first != lblk {
				// e2fsck asks ext2fs_extent_get_info for the level here,
				// which clears the checksum error the step down returned:
				// the child is walked as if its checksum matched.
				childCsumBad = false
				x.cur[level+1] = 0
				if c.fix(problem.Problem{Code: problem.PR_1_EXTENT_INDEX_START_INVALID, Ino: w.ino, Blk: lblk, Blk2: first, Num: uint64(level), Inode: c.inodeInfo(w.n)}) {
					if err := c.extentFixParents(x, level+1); err != "" {
						x.err, x.op, x.errBlk, x.errLblk = err, "ext2fs_extent_fix_parents", lblk, first
						return
					}
				}
			}
			c.scanExtentNode(x, child, level+1, first, lastLblk, lastLblk+1, next, childCsumBad)
			if x.err != "" {
				return
			}
			if x.hlevel != level+1 {
				// The child was emptied and removed: the library's handle
				// is on this node already, and going up from it fails at
				// the root (the walk then stops with an error).
				x.err, x.op, x.errBlk, x.errLblk = string(ext2fs.ErrExtentNoUp), "EXT2_EXTENT_UP", p.Blk, p.Blk2
				return
			}
			x.hlevel = level
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
			if c.fix(problem.Problem{Code: problem.PR_1_COLLAPSE_DBLOCK, Ino: w.ino, Blk: lblk, Blk2: newLblk, Inode: c.inodeInfo(w.n)}) {
				// The extent moves down to close the hole.
				h.Entry(pos).SetLblk(uint32(newLblk))
				c.writeExtentNode(x, level)
				c.extentFixParents(x, level)
				lblk = newLblk
				lastLblk = lblk + length - 1
				failedCsum = false
			}
		}
		if w.isDir {
			full := false
			for w.lastDBBlock++; w.lastDBBlock < int64(lblk) && !full; w.lastDBBlock++ {
				full = !c.addDirBlock(w.ino, 0, w.lastDBBlock)
			}
			for k := uint64(0); k < length && !full; k++ {
				full = !c.addDirBlock(w.ino, pblk+k, int64(lblk+k))
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
				// e2fsck sets these in the problem context it goes on
				// with: a later message about this node (its checksum)
				// names the logical block as the physical one and back.
				p.Blk, p.Blk2 = lblk+k, pblk+k
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
		if c.fixInode(q, w.n) {
			// The node is rewritten as it is, with a new checksum.
			c.writeExtentNode(x, level)
		}
	}
}

// extentNode returns node l of the walk: the root in the inode, or the
// block read for level l.
func (x *extentScan) node(l int) ondisk.ExtentHeader {
	if l == 0 {
		return ondisk.ExtentHeader(x.w.n.IBlock())
	}
	return ondisk.ExtentHeader(x.s.levels[l])
}

// writeExtentNode writes node l (update_path): the root by writing the
// inode, a block with its checksum recomputed.
func (c *Checker) writeExtentNode(x *extentScan, l int) {
	w := x.w
	if l == 0 {
		c.putInode(w.ino, w.n)
		return
	}
	buf := x.s.levels[l]
	if c.fs.MetadataCsum {
		if sum, _, ok := ondisk.ExtentBlockChecksum(buf, c.fs.CsumSeed, w.ino, w.n.Generation()); ok {
			ondisk.ExtentHeader(buf).SetTailChecksum(sum)
		}
	}
	c.writeBlockUncounted(x.path[l], buf)
}

// extentRemove is e2fsck's answer to a bad extent: ext2fs_extent_delete
// then ext2fs_extent_fix_parents. It returns true when the node was
// emptied and removed (its walk ends).
//
// When fix_parents fails (the handle cannot go back down past a node
// whose checksum does not match), the walk stops with that error, as
// scan_extent_node returns, and true is returned.
func (c *Checker) extentRemove(x *extentScan, level, pos int) bool {
	emptied := c.extentDelete(x, level, pos)
	if err := c.extentFixParents(x, x.hlevel); err != "" {
		x.err, x.op, x.errBlk, x.errLblk = err, "ext2fs_extent_fix_parents", x.p.Blk, x.p.Blk2
		return true
	}
	return emptied
}

// extentDelete deletes entry pos of node l. A non-root node left empty is
// removed from its parent (recursively), its block freed and the inode's
// i_blocks lowered; the handle is then on the parent (x.hlevel). An empty
// root becomes a leaf.
func (c *Checker) extentDelete(x *extentScan, l, pos int) bool {
	h := x.node(l)
	n := int(h.Entries())
	if pos < 0 || pos >= n {
		return false
	}
	if pos < n-1 {
		copy(h.Entry(pos), h.Entry(pos + 1)[:(n-pos-1)*ondisk.ExtentEntrySize])
	} else {
		x.cur[l] = pos - 1
	}
	n--
	if n == 0 && l > 0 {
		x.hlevel = l - 1
		c.extentDelete(x, l-1, x.cur[l-1])
		w := x.w
		subIBlocks(w.n, uint32(uint64(c.fs.BlockSize)<<c.fs.ClusterBits/512))
		c.putInode(w.ino, w.n)
		c.releaseBlock(x.path[l])
		return true
	}
	h.SetEntries(uint16(n))
	if n == 0 && l == 0 {
		h.SetDepth(0)
	}
	c.writeExtentNode(x, l)
	return false
}

// extentFixParents is ext2fs_extent_fix_parents from the current entry of
// node l: while that entry is the first of its node, the index above it
// gets its logical start. The library then puts its handle back with
// ext2fs_extent_goto2, whose error is returned ("" when none).
func (c *Checker) extentFixParents(x *extentScan, l int) string {
	if l < 0 || x.cur[l] < 0 || x.cur[l] >= int(x.node(l).Entries()) {
		return "" // EXT2_ET_NO_CURRENT_NODE, which e2fsck ignores
	}
	top := l
	start := x.node(l).Entry(x.cur[l]).Lblk()
	for l > 0 && x.cur[l] == 0 {
		l--
		e := x.node(l).Entry(x.cur[l])
		if e.Lblk() == start {
			break
		}
		e.SetLblk(start)
		c.writeExtentNode(x, l)
	}
	return c.extentGoto(x, top, uint64(start))
}

// extentGoto is ext2fs_extent_goto2(handle, height of level top, blk): from
// the root, each index node is left through the last entry at or before
// blk as the library scans them (the first entry when none is), every
// block on the way read again from disk, and at level top an entry must
// cover blk. It returns the library's error, "" when the entry is found.
// A node whose checksum does not match fails the step down into it.
func (c *Checker) extentGoto(x *extentScan, top int, blk uint64) string {
	f := c.fs
	const notFound = string(ext2fs.ErrExtentNotFound)
	h := x.node(0)
	end := (x.w.n.Size() + uint64(f.BlockSize) - 1) >> f.BlockBits // the root's end_blk
	var path [maxScanDepth]uint64
	for l := 0; ; l++ {
		n := int(h.Entries())
		if n == 0 {
			return notFound
		}
		isLeaf := l == x.maxDepth
		if l == top {
			for i := 0; i < n; i++ {
				var lblk, length uint64
				if isLeaf {
					e := h.Leaf(i)
					lblk, length = uint64(e.Lblk), uint64(e.Len)
				} else {
					lblk = uint64(h.Idx(i).Lblk)
					next := uint32(end)
					if i+1 < n {
						next = h.Idx(i + 1).Lblk
					}
					length = uint64(next - uint32(lblk))
				}
				if blk >= lblk && blk < lblk+length {
					return ""
				}
				if blk < lblk {
					return notFound
				}
			}
			return notFound
		}
		if isLeaf || l+1 >= maxScanDepth {
			return notFound
		}
		i := 0
		for i+1 < n {
			next := uint64(h.Idx(i + 1).Lblk)
			if blk < next {
				break
			}
			i++
			if blk == next {
				break
			}
		}
		if i+1 < n {
			end = uint64(h.Idx(i + 1).Lblk)
		}
		child := h.Idx(i).Leaf
		for k := l; k >= 1; k-- {
			if path[k] == child {
				return string(ext2fs.ErrExtentCycle)
			}
		}
		path[l+1] = child
		buf := make([]byte, f.BlockSize)
		if child >= f.BlocksCount {
			return string(ext2fs.ErrShortRead)
		}
		if err := f.ReadBlock(child, buf); err != nil {
			return err.Error()
		}
		h = ondisk.ExtentHeader(buf)
		if h.Verify() != nil {
			return string(ext2fs.ErrExtentHeaderBad)
		}
		if h.Entries() == 0 {
			return string(ext2fs.ErrExtentNoDown)
		}
		if f.MetadataCsum {
			sum, stored, ok := ondisk.ExtentBlockChecksum(buf, f.CsumSeed, x.w.ino, x.w.n.Generation())
			if !ok || sum != stored || c.csumInodeRereadFails(x.s, x.w.ino) {
				return string(ext2fs.ErrExtentCsumInvalid)
			}
		}
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
	if x.w.isDir && c.optimizeAll() {
		return // rebuilt in pass 3A (-D)
	}
	if c.opt.ConvertBmap {
		c.convertBmapLater(x.w)
		return
	}
	if x.force {
		// The tree is too deep: rebuilt without a question.
		if c.rebuildQueued(x.w.ino) {
			c.p1.rebuild.Set(uint64(x.w.ino))
		}
		return
	}
	if c.opt.NoOptimizeExtents {
		return
	}
	if x.maxDepth > maxExtentDepthCount-1 {
		// Deeper than the statistics go: shorter in any case.
		c.askRebuildExtents(x, problem.PR_1E_CAN_COLLAPSE_EXTENT_TREE, x.maxDepth)
		return
	}
	perBlock := int64((c.fs.BlockSize - ondisk.ExtentHeaderSize) / ondisk.ExtentEntrySize)
	for i := 0; i <= x.maxDepth && i < maxExtentDepthCount; i++ {
		ei := x.levels[i]
		if ei.max-ei.num > perBlock {
			c.askRebuildExtents(x, problem.PR_1E_CAN_NARROW_EXTENT_TREE, i)
			return
		}
		for j := 0; j < i; j++ {
			if ei.num < x.levels[j].max {
				c.askRebuildExtents(x, problem.PR_1E_CAN_COLLAPSE_EXTENT_TREE, i)
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

// csumInodeRereadFails reports whether a library checksum check in pass 1
// fails for want of the inode: the extent block and directory block
// checksums reread inode ino with a checked ext2fs_read_inode (for its
// generation), and that read fails while the inode on disk does not
// match its own checksum. Pass 1 answers that read from the inode being
// checked, unchecked, only on 128-byte inode file systems
// (e2fsck_use_inode_shortcuts); otherwise an inode a fix has not
// rewritten fails every such check.
func (c *Checker) csumInodeRereadFails(s *inodeScratch, ino uint32) bool {
	f := c.fs
	if !f.MetadataCsum || f.InodeSize <= ondisk.GoodOldInodeSize {
		return false
	}
	if s.ioIno == 0 && c.p1.wrote {
		// A fix wrote the inode being checked (a pass-1 worker's writes
		// are not on disk yet): the library's cache serves it.
		return false
	}
	if s.itable == nil {
		s.itable = make([]byte, f.BlockSize)
		s.inode = make([]byte, f.InodeSize)
	}
	if f.ReadInode(ino, s.inode, s.itable) != nil {
		return true
	}
	return !ondisk.Inode(s.inode).ChecksumValid(f.CsumSeed, ino)
}
