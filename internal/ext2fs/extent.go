package ext2fs

import (
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// The extent tree that pass 1E writes is built by the library's extent
// handle (ext2fs_extent_insert after the last entry, then
// ext2fs_extent_fix_parents, splitting full nodes on the way). Its
// results depend on details of the handle — which entries a split moves,
// the stale entries a new root keeps, the goal of each new tree block and
// when the inode is written — so this file models the handle itself: a
// path of nodes from the root in the inode to the current leaf, with the
// current entry and the entries left after it on each level, moved by the
// same operations as the library's.

// The handle's errors are the library's Errcodes; pass 1E prints them
// in PR_1E_OPTIMIZE_EXT_ERR.

// Flags of an Extent as the library reports them
// (EXT2_EXTENT_FLAGS_*).
const (
	ExtentFlagLeaf        = 1
	ExtentFlagUninit      = 2
	ExtentFlagSecondVisit = 4
)

// Largest lengths of an initialised and an uninitialised leaf extent
// (EXT_INIT_MAX_LEN, EXT_UNINIT_MAX_LEN).
const (
	ExtInitMaxLen   = ondisk.ExtentInitMaxLen
	ExtUninitMaxLen = ExtInitMaxLen - 1
)

// ExtentOp is a move of the handle (EXT2_EXTENT_*).
type ExtentOp int

// The moves of the handle that Get makes before it returns the current
// entry.
const (
	ExtentCurrent  ExtentOp = iota // stay (EXT2_EXTENT_CURRENT)
	ExtentRoot                     // first entry of the root
	ExtentFirstSib                 // first entry of the current node
	ExtentNextSib                  // next entry of the current node
	ExtentPrevSib                  // previous entry of the current node
	ExtentLastSib                  // last entry of the current node
	ExtentUp                       // the index entry above
	ExtentDown                     // first entry of the current index entry's child
	ExtentNext                     // next entry in a depth-first walk, index entries visited twice
)

// Extent is struct ext2fs_extent: an entry as the handle returns it. An
// index entry's Len runs to the next index entry (or the end of its
// parent's range).
type Extent struct {
	Pblk, Lblk uint64
	Len        uint32
	Flags      int
}

// extPath is one level of the handle: its node, entry counts, the current
// entry (-1: none) and how many entries follow it.
type extPath struct {
	buf        []byte
	entries    int
	maxEntries int
	left       int
	curr       int
	visitNum   int
	endBlk     uint64
	blk        uint64
}

// ExtentHandle is the library's extent handle over inode n (whose i_block
// is the root node): a path of nodes from the root to the current entry.
// It writes every node it changes through the Filsys's Writer as it
// changes, and allocates and frees tree blocks through its Allocator.
type ExtentHandle struct {
	fsys     *Filsys
	f        *fs.FS
	ino      uint32
	n        ondisk.Inode
	level    int
	maxDepth int
	path     []extPath
	alloc    Allocator
	// ignoreCsum is EXT2_FLAG_IGNORE_CSUM_ERRORS for this handle: a tree
	// block's checksum is not verified (BlockFlagIgnoreCsum).
	ignoreCsum bool
	// visitBlk is the block Iterate's visitor is given.
	visitBlk uint64
}

const extEntrySize = ondisk.ExtentEntrySize

// OpenExtent is ext2fs_extent_open2 over inode ino, held in memory as n
// (which the handle changes and writes). An inode whose i_block is all
// zero gets an empty leaf root (and the extents flag). Tree blocks are
// allocated and freed through fsys.Alloc until SetAllocator says
// otherwise.
func OpenExtent(fsys *Filsys, ino uint32, n ondisk.Inode) (*ExtentHandle, error) {
	x := &ExtentHandle{}
	if err := x.open(fsys, ino, n); err != nil {
		return nil, err
	}
	return x, nil
}

// open is OpenExtent into x, whose path and node buffers are reused: a
// walk from inode to inode with one handle allocates nothing once its
// buffers are as deep as the trees. The checksum check is back on.
func (x *ExtentHandle) open(fsys *Filsys, ino uint32, n ondisk.Inode) error {
	ib := n.IBlock()
	if IblockEmpty(n) {
		h := ondisk.ExtentHeader(ib)
		h.SetMagic(ondisk.ExtentMagic)
		h.SetEntries(0)
		h.SetMax(uint16((len(ib) - ondisk.ExtentHeaderSize) / extEntrySize))
		h.SetDepth(0)
		n.SetFlags(n.Flags() | ondisk.FlagExtents)
	}
	if n.Flags()&ondisk.FlagExtents == 0 {
		return ErrInodeNotExtent
	}
	h := ondisk.ExtentHeader(ib)
	if h.Verify() != nil {
		return ErrExtentHeaderBad
	}
	f := fsys.FS
	path := x.path[:cap(x.path)]
	depth := int(h.Depth())
	if len(path) < depth+1 {
		path = append(path, make([]extPath, depth+1-len(path))...)
	}
	for i := range path {
		path[i] = extPath{buf: path[i].buf}
	}
	*x = ExtentHandle{fsys: fsys, f: f, ino: ino, n: n, maxDepth: depth, alloc: fsys.Alloc, path: path[:depth+1]}
	p := &x.path[0]
	p.buf = ib
	p.entries = int(h.Entries())
	p.left = p.entries
	p.maxEntries = int(h.Max())
	p.curr = -1
	bs := uint64(f.BlockSize)
	p.endBlk = (n.Size() + bs - 1) >> f.BlockBits
	p.visitNum = 1
	return nil
}

// SetAllocator makes a the allocator of the handle's new and dropped
// tree blocks, in place of its Filsys's (as e2fsck's callers swap the
// library's allocation callbacks around one operation).
func (x *ExtentHandle) SetAllocator(a Allocator) { x.alloc = a }

// ExtentInfo is struct ext2_extent_info, the part of it the checker
// reads: the current entry (1-based, 0 for none), level, and the current
// node's entries and capacity, and the tree's depth.
type ExtentInfo struct {
	CurrEntry, CurrLevel   int
	NumEntries, MaxEntries int
	MaxDepth               int
}

// Info is ext2fs_extent_get_info.
func (x *ExtentHandle) Info() ExtentInfo {
	p := &x.path[x.level]
	return ExtentInfo{CurrEntry: p.curr + 1, CurrLevel: x.level,
		NumEntries: p.entries, MaxEntries: p.maxEntries, MaxDepth: x.maxDepth}
}

// extEntry is entry i of node buf.
func extEntry(buf []byte, i int) ondisk.ExtentEntry { return ondisk.ExtentHeader(buf).Entry(i) }

func setExtEntries(buf []byte, n int) { ondisk.ExtentHeader(buf).SetEntries(uint16(n)) }

// Get is ext2fs_extent_get: the move op, then the current entry.
func (x *ExtentHandle) Get(op ExtentOp) (Extent, error) {
	var ext Extent
	origOp := op
	p := &x.path[x.level]
	if origOp == ExtentNext {
		switch {
		case x.level < x.maxDepth && p.visitNum == 0:
			p.visitNum++
			op = ExtentDown
		case p.left > 0:
			op = ExtentNextSib
		case x.level > 0:
			op = ExtentUp
		default:
			return ext, ErrExtentNoNext
		}
	}
	ix := -1
	failedCsum := false
	switch op {
	case ExtentCurrent:
		ix = p.curr
	case ExtentRoot, ExtentFirstSib, ExtentNextSib:
		if op == ExtentRoot {
			x.level = 0
			p = &x.path[0]
		}
		if op != ExtentNextSib {
			p.left = p.entries
			p.curr = -1
		}
		if p.left <= 0 {
			return ext, ErrExtentNoNext
		}
		if p.curr >= 0 {
			ix = p.curr + 1
		} else {
			ix = 0
		}
		p.left--
		p.curr = ix
		p.visitNum = 0
	case ExtentPrevSib:
		if p.curr < 0 || p.left+1 >= p.entries {
			return ext, ErrExtentNoPrev
		}
		ix = p.curr - 1
		p.curr = ix
		p.left++
		if x.level < x.maxDepth {
			p.visitNum = 1
		}
	case ExtentLastSib:
		ix = int(ondisk.ExtentHeader(p.buf).Entries()) - 1
		p.curr = ix
		p.left = 0
		p.visitNum = 0
	case ExtentUp:
		if x.level <= 0 {
			return ext, ErrExtentNoUp
		}
		x.level--
		p = &x.path[x.level]
		ix = p.curr
	case ExtentDown:
		if p.curr < 0 || x.level >= x.maxDepth {
			return ext, ErrExtentNoDown
		}
		ix = p.curr
		np := &x.path[x.level+1]
		if np.buf == nil {
			np.buf = make([]byte, x.f.BlockSize)
		}
		blk := extEntry(p.buf, ix).Leaf()
		for l := x.level; l > 0; l-- {
			if blk == x.path[l].blk {
				return ext, ErrExtentCycle
			}
		}
		np.blk = blk
		if blk >= x.f.BlocksCount || x.fsys.IO.ReadBlock(blk, np.buf) != nil {
			return ext, ErrShortRead
		}
		x.level++
		eh := ondisk.ExtentHeader(np.buf)
		if eh.Verify() != nil {
			x.level--
			return ext, ErrExtentHeaderBad
		}
		if x.f.MetadataCsum && !x.ignoreCsum {
			sum, stored, ok := ondisk.ExtentBlockChecksum(np.buf, x.f.CsumSeed, x.ino, x.n.Generation())
			failedCsum = !ok || sum != stored
		}
		np.entries = int(eh.Entries())
		np.left = np.entries
		np.maxEntries = int(eh.Max())
		if np.left <= 0 {
			return ext, ErrExtentNoDown
		}
		if p.left > 0 {
			np.endBlk = uint64(extEntry(p.buf, ix+1).Lblk())
		} else {
			np.endBlk = p.endBlk
		}
		p = np
		ix = 0
		p.curr = 0
		p.left = p.entries - 1
		p.visitNum = 0
	default:
		return ext, ErrOpNotSupported
	}
	if ix < 0 {
		return ext, ErrNoCurrentNode
	}
	e := extEntry(p.buf, ix)
	if x.level == x.maxDepth {
		ext.Pblk = e.Start()
		ext.Lblk = uint64(e.Lblk())
		ext.Len = uint32(e.RawLen())
		ext.Flags |= ExtentFlagLeaf
		if ext.Len > ExtInitMaxLen {
			ext.Len -= ExtInitMaxLen
			ext.Flags |= ExtentFlagUninit
		}
	} else {
		ext.Pblk = e.Leaf()
		ext.Lblk = uint64(e.Lblk())
		end := p.endBlk
		if p.left > 0 {
			end = uint64(extEntry(p.buf, ix+1).Lblk())
		}
		ext.Len = uint32(end - ext.Lblk)
	}
	if p.visitNum != 0 {
		ext.Flags |= ExtentFlagSecondVisit
	}
	if failedCsum {
		return ext, ErrExtentCsumInvalid
	}
	return ext, nil
}

// Goto is ext2fs_extent_goto2: from the root down to the entry of level
// leafLevel (counted from the leaves) that holds blk.
func (x *ExtentHandle) Goto(leafLevel int, blk uint64) error {
	ext, err := x.Get(ExtentRoot)
	if err != nil {
		if err == ErrExtentNoNext {
			err = ErrExtentNotFound
		}
		return err
	}
	if leafLevel > x.maxDepth {
		return ErrOpNotSupported
	}
	for {
		if x.maxDepth-x.level == leafLevel {
			if blk >= ext.Lblk && blk < ext.Lblk+uint64(ext.Len) {
				return nil
			}
			if blk < ext.Lblk {
				x.Get(ExtentPrevSib)
				return ErrExtentNotFound
			}
			ext, err = x.Get(ExtentNextSib)
			if err == ErrExtentNoNext {
				return ErrExtentNotFound
			}
			if err != nil {
				return err
			}
			continue
		}
		ext, err = x.Get(ExtentNextSib)
		switch {
		case err == ErrExtentNoNext:
		case err != nil:
			return err
		case blk == ext.Lblk:
		case blk > ext.Lblk:
			continue
		default:
			if ext, err = x.Get(ExtentPrevSib); err != nil {
				return err
			}
		}
		if ext, err = x.Get(ExtentDown); err != nil {
			return err
		}
	}
}

// updatePath is update_path: the inode for the root, else the current
// node, written where the parent's current index points.
func (x *ExtentHandle) updatePath() {
	if x.level == 0 {
		x.fsys.IO.WriteInode(x.ino, x.n)
		return
	}
	pp := &x.path[x.level-1]
	blk := extEntry(pp.buf, pp.curr).Leaf()
	buf := x.path[x.level].buf
	x.setCsum(buf)
	if blk < x.f.BlocksCount {
		x.fsys.IO.WriteBlock(blk, buf)
	}
}

// setCsum is ext2fs_extent_block_csum_set.
func (x *ExtentHandle) setCsum(buf []byte) {
	f := x.f
	if !f.MetadataCsum {
		return
	}
	if sum, _, ok := ondisk.ExtentBlockChecksum(buf, f.CsumSeed, x.ino, x.n.Generation()); ok {
		ondisk.ExtentHeader(buf).SetTailChecksum(sum)
	}
}

// Replace is ext2fs_extent_replace: the current entry becomes ext.
func (x *ExtentHandle) Replace(ext Extent) error {
	p := &x.path[x.level]
	if p.curr < 0 {
		return ErrNoCurrentNode
	}
	e := extEntry(p.buf, p.curr)
	if x.level == x.maxDepth {
		e.SetLblk(uint32(ext.Lblk))
		e.SetStart(ext.Pblk)
		if ext.Flags&ExtentFlagUninit != 0 {
			if ext.Len > ExtUninitMaxLen {
				return ErrExtentInvalidLength
			}
			e.SetRawLen(uint16(ext.Len + ExtInitMaxLen))
		} else {
			if ext.Len > ExtInitMaxLen {
				return ErrExtentInvalidLength
			}
			e.SetRawLen(uint16(ext.Len))
		}
	} else {
		e.SetLeaf(ext.Pblk)
		e.SetLblk(uint32(ext.Lblk))
		e.SetIdxUnused(0)
	}
	x.updatePath()
	return nil
}

// splittingAtEOF is splitting_at_eof: every level from the current one up
// is on its last entry.
func (x *ExtentHandle) splittingAtEOF() bool {
	if x.level == 0 {
		return false
	}
	for l := x.level; l >= 0; l-- {
		if x.path[l].left != 0 {
			return false
		}
	}
	return true
}

// split is extent_node_split: a new tree block takes entries of the
// current node (all of the root's, which becomes one index deeper; the
// last one when appending; else half), the parent gets an index for it
// (splitting the parent first when full) and the handle goes back to the
// entry it was on.
func (x *ExtentHandle) split(expandAllowed bool) error {
	f := x.f
	ext, err := x.Get(ExtentCurrent)
	if err != nil {
		return err
	}
	origHeight := x.maxDepth - x.level
	origLblk := ext.Lblk
	p := &x.path[x.level]
	var goal uint64
	if x.level == x.maxDepth {
		goal = extEntry(p.buf, 0).Start()
	} else {
		goal = extEntry(p.buf, 0).Leaf()
	}
	ratio := uint64(1) << f.ClusterBits
	goal -= ratio
	goal &^= ratio - 1
	if x.level > 0 && x.path[x.level-1].entries >= x.path[x.level-1].maxEntries {
		if _, err := x.Get(ExtentUp); err != nil {
			return err
		}
		if err := x.split(expandAllowed); err != nil {
			return err
		}
		if err := x.Goto(origHeight, origLblk); err != nil {
			return err
		}
	}
	p = &x.path[x.level]
	if p.curr < 0 {
		return ErrNoCurrentNode
	}
	noBalance := expandAllowed && x.splittingAtEOF()
	nodeEntries := int(ondisk.ExtentHeader(p.buf).Entries())
	newRoot := x.level == 0
	var tocopy int
	switch {
	case newRoot:
		tocopy = nodeEntries
	case noBalance:
		tocopy = 1
	default:
		tocopy = nodeEntries / 2
	}
	if tocopy == 0 && !noBalance {
		return ErrCantSplitExtent
	}
	if goal == 0 {
		goal = extInodeGoal(x.fsys, x.ino, x.n)
	}
	newBlk, ok := x.allocBlock(goal)
	if !ok {
		return ErrBlockAllocFail
	}
	nb := make([]byte, f.BlockSize)
	copy(nb, p.buf[:ondisk.ExtentHeaderSize])
	setExtEntries(nb, tocopy)
	ondisk.ExtentHeader(nb).SetMax(uint16((f.BlockSize - ondisk.ExtentHeaderSize) / extEntrySize))
	from := nodeEntries - tocopy
	if from < 0 {
		from = 0
	}
	copy(nb[ondisk.ExtentHeaderSize:], p.buf[ondisk.ExtentHeaderSize+from*extEntrySize:ondisk.ExtentHeaderSize+nodeEntries*extEntrySize])
	newStart := uint64(extEntry(nb, 0).Lblk())
	x.setCsum(nb)
	x.fsys.IO.WriteBlock(newBlk, nb)
	if newRoot {
		np := make([]extPath, len(x.path)+1)
		copy(np, x.path)
		x.path = np
		p = &x.path[0]
		p.entries = 1
		p.left = p.maxEntries - 1
		x.maxDepth++
		ondisk.ExtentHeader(p.buf).SetDepth(uint16(x.maxDepth))
	} else {
		p.entries -= tocopy
		p.left -= tocopy
	}
	setExtEntries(p.buf, p.entries)
	x.updatePath()
	if newRoot {
		ext, err = x.Get(ExtentFirstSib)
		if err != nil {
			return err
		}
		ext.Lblk = newStart
		ext.Pblk = newBlk
		ext.Len = uint32(x.path[0].endBlk - ext.Lblk)
		if err := x.Replace(ext); err != nil {
			return err
		}
	} else {
		ext, _ = x.Get(ExtentUp)
		newLen := uint32(newStart - ext.Lblk)
		ext.Len -= newLen
		if err := x.Replace(ext); err != nil {
			return err
		}
		ext.Lblk = newStart
		ext.Pblk = newBlk
		ext.Len = newLen
		if err := x.Insert(ext, true); err != nil {
			return err
		}
	}
	if err := x.Goto(origHeight, origLblk); err != nil {
		return err
	}
	x.addIBlocks(1)
	x.fsys.IO.WriteInode(x.ino, x.n)
	return nil
}

// FixParents is ext2fs_extent_fix_parents: while the current entry is
// the first of its node, the index above gets its start; the handle then
// goes back to it.
func (x *ExtentHandle) FixParents() error {
	p := &x.path[x.level]
	if p.curr < 0 {
		return ErrNoCurrentNode
	}
	ext, err := x.Get(ExtentCurrent)
	if err != nil {
		return err
	}
	start := ext.Lblk
	origHeight := x.maxDepth - x.level
	for x.level > 0 && p.left == p.entries-1 {
		if ext, err = x.Get(ExtentUp); err != nil {
			return err
		}
		if ext.Lblk == start {
			break
		}
		p = &x.path[x.level]
		ext.Len += uint32(ext.Lblk - start)
		ext.Lblk = start
		if err := x.Replace(ext); err != nil {
			return err
		}
		x.updatePath()
	}
	return x.Goto(origHeight, start)
}

// addIBlocks is ext2fs_iblk_add_blocks.
func (x *ExtentHandle) addIBlocks(num uint64) error {
	return iblkAdjust(x.f, x.n, num, true)
}

// extInodeGoal is ext2fs_find_inode_goal for logical block 0 of an
// extent inode whose tree may be deeper than the root: the block mapping
// it, else what FindInodeGoal finds.
func extInodeGoal(fsys *Filsys, ino uint32, n ondisk.Inode) uint64 {
	if n.Flags()&ondisk.FlagInlineData == 0 && n.Flags()&ondisk.FlagExtents != 0 && !IsFastSymlink(n) {
		m := make(ondisk.Inode, len(n))
		copy(m, n)
		if x, err := OpenExtent(fsys, ino, m); err == nil && x.Goto(0, 0) == nil {
			if ext, err := x.Get(ExtentCurrent); err == nil {
				return ext.Pblk - ext.Lblk
			}
		}
		m = make(ondisk.Inode, len(n))
		copy(m, n)
		clear(m.IBlock())
		return FindInodeGoal(fsys.FS, ino, m, 0)
	}
	return FindInodeGoal(fsys.FS, ino, n, 0)
}
