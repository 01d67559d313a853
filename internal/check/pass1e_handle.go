package check

import (
	"encoding/binary"

	"gofsck/internal/ext2fs"
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

// The handle's errors are the library's (ext2fs.Err*); pass 1E prints
// them in PR_1E_OPTIMIZE_EXT_ERR.

// Extent flags as the library reports them.
const (
	extFlagLeaf        = 1
	extFlagUninit      = 2
	extFlagSecondVisit = 4
)

// Largest lengths of an initialised and an uninitialised leaf extent.
const (
	extInitMaxLen   = 1 << 15
	extUninitMaxLen = extInitMaxLen - 1
)

// Moves of the handle (EXT2_EXTENT_*).
const (
	extOpCurrent = iota
	extOpRoot
	extOpFirstSib
	extOpNextSib
	extOpPrevSib
	extOpLastSib
	extOpUp
	extOpDown
	extOpNext
)

// libExtent is struct ext2fs_extent.
type libExtent struct {
	pblk, lblk uint64
	len        uint32
	flags      int
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

// extHandle is the library's extent handle over inode n (whose i_block
// is the root node).
type extHandle struct {
	c        *Checker
	ino      uint32
	n        ondisk.Inode
	level    int
	maxDepth int
	path     []extPath
	// alloc and free, when set, replace e2fsck's allocator of the
	// passes for new and dropped tree blocks (extent_setbmap.go).
	alloc func(goal uint64) (uint64, bool)
	free  func(blk uint64)
}

const extEntrySize = ondisk.ExtentEntrySize

// openExtHandle is ext2fs_extent_open2 over an inode in memory. An inode
// whose i_block is all zero gets an empty leaf root (and the extents
// flag).
func (c *Checker) openExtHandle(ino uint32, n ondisk.Inode) (*extHandle, error) {
	ib := n.IBlock()
	empty := true
	for _, b := range ib {
		if b != 0 {
			empty = false
			break
		}
	}
	if empty {
		binary.LittleEndian.PutUint16(ib[0:], ondisk.ExtentMagic)
		binary.LittleEndian.PutUint16(ib[2:], 0)
		binary.LittleEndian.PutUint16(ib[4:], uint16((len(ib)-ondisk.ExtentHeaderSize)/extEntrySize))
		binary.LittleEndian.PutUint16(ib[6:], 0)
		n.SetFlags(n.Flags() | ondisk.FlagExtents)
	}
	if n.Flags()&ondisk.FlagExtents == 0 {
		return nil, ext2fs.ErrInodeNotExtent
	}
	h := ondisk.ExtentHeader(ib)
	if h.Verify() != nil {
		return nil, ext2fs.ErrExtentHeaderBad
	}
	x := &extHandle{c: c, ino: ino, n: n, maxDepth: int(h.Depth())}
	x.path = make([]extPath, x.maxDepth+1)
	p := &x.path[0]
	p.buf = ib
	p.entries = int(h.Entries())
	p.left = p.entries
	p.maxEntries = int(h.Max())
	p.curr = -1
	bs := uint64(c.fs.BlockSize)
	p.endBlk = (n.Size() + bs - 1) >> c.fs.BlockBits
	p.visitNum = 1
	return x, nil
}

func extEntry(buf []byte, i int) []byte {
	return buf[ondisk.ExtentHeaderSize+i*extEntrySize:]
}

func setExtEntries(buf []byte, n int) { binary.LittleEndian.PutUint16(buf[2:], uint16(n)) }

// indexLeaf is an index entry's child block.
func indexLeaf(e []byte) uint64 {
	return uint64(binary.LittleEndian.Uint32(e[4:])) | uint64(binary.LittleEndian.Uint16(e[8:]))<<32
}

// leafStart is a leaf entry's first physical block.
func leafStart(e []byte) uint64 {
	return uint64(binary.LittleEndian.Uint32(e[8:])) | uint64(binary.LittleEndian.Uint16(e[6:]))<<32
}

// get is ext2fs_extent_get: the move op, then the current entry.
func (x *extHandle) get(op int) (libExtent, error) {
	var ext libExtent
	origOp := op
	p := &x.path[x.level]
	if origOp == extOpNext {
		switch {
		case x.level < x.maxDepth && p.visitNum == 0:
			p.visitNum++
			op = extOpDown
		case p.left > 0:
			op = extOpNextSib
		case x.level > 0:
			op = extOpUp
		default:
			return ext, ext2fs.ErrExtentNoNext
		}
	}
	ix := -1
	failedCsum := false
	switch op {
	case extOpCurrent:
		ix = p.curr
	case extOpRoot, extOpFirstSib, extOpNextSib:
		if op == extOpRoot {
			x.level = 0
			p = &x.path[0]
		}
		if op != extOpNextSib {
			p.left = p.entries
			p.curr = -1
		}
		if p.left <= 0 {
			return ext, ext2fs.ErrExtentNoNext
		}
		if p.curr >= 0 {
			ix = p.curr + 1
		} else {
			ix = 0
		}
		p.left--
		p.curr = ix
		p.visitNum = 0
	case extOpPrevSib:
		if p.curr < 0 || p.left+1 >= p.entries {
			return ext, ext2fs.ErrExtentNoPrev
		}
		ix = p.curr - 1
		p.curr = ix
		p.left++
		if x.level < x.maxDepth {
			p.visitNum = 1
		}
	case extOpLastSib:
		ix = int(binary.LittleEndian.Uint16(p.buf[2:])) - 1
		p.curr = ix
		p.left = 0
		p.visitNum = 0
	case extOpUp:
		if x.level <= 0 {
			return ext, ext2fs.ErrExtentNoUp
		}
		x.level--
		p = &x.path[x.level]
		ix = p.curr
	case extOpDown:
		if p.curr < 0 || x.level >= x.maxDepth {
			return ext, ext2fs.ErrExtentNoDown
		}
		ix = p.curr
		np := &x.path[x.level+1]
		if np.buf == nil {
			np.buf = make([]byte, x.c.fs.BlockSize)
		}
		blk := indexLeaf(extEntry(p.buf, ix))
		for l := x.level; l > 0; l-- {
			if blk == x.path[l].blk {
				return ext, ext2fs.ErrExtentCycle
			}
		}
		np.blk = blk
		if blk >= x.c.fs.BlocksCount || x.c.fs.ReadBlock(blk, np.buf) != nil {
			return ext, ext2fs.ErrShortRead
		}
		x.level++
		eh := ondisk.ExtentHeader(np.buf)
		if eh.Verify() != nil {
			x.level--
			return ext, ext2fs.ErrExtentHeaderBad
		}
		if x.c.fs.MetadataCsum {
			sum, stored, ok := ondisk.ExtentBlockChecksum(np.buf, x.c.fs.CsumSeed, x.ino, x.n.Generation())
			failedCsum = !ok || sum != stored
		}
		np.entries = int(eh.Entries())
		np.left = np.entries
		np.maxEntries = int(eh.Max())
		if np.left <= 0 {
			return ext, ext2fs.ErrExtentNoDown
		}
		if p.left > 0 {
			np.endBlk = uint64(binary.LittleEndian.Uint32(extEntry(p.buf, ix+1)))
		} else {
			np.endBlk = p.endBlk
		}
		p = np
		ix = 0
		p.curr = 0
		p.left = p.entries - 1
		p.visitNum = 0
	default:
		return ext, ext2fs.ErrOpNotSupported
	}
	if ix < 0 {
		return ext, ext2fs.ErrNoCurrentNode
	}
	e := extEntry(p.buf, ix)
	if x.level == x.maxDepth {
		ext.pblk = leafStart(e)
		ext.lblk = uint64(binary.LittleEndian.Uint32(e))
		ext.len = uint32(binary.LittleEndian.Uint16(e[4:]))
		ext.flags |= extFlagLeaf
		if ext.len > extInitMaxLen {
			ext.len -= extInitMaxLen
			ext.flags |= extFlagUninit
		}
	} else {
		ext.pblk = indexLeaf(e)
		ext.lblk = uint64(binary.LittleEndian.Uint32(e))
		end := p.endBlk
		if p.left > 0 {
			end = uint64(binary.LittleEndian.Uint32(extEntry(p.buf, ix+1)))
		}
		ext.len = uint32(end - ext.lblk)
	}
	if p.visitNum != 0 {
		ext.flags |= extFlagSecondVisit
	}
	if failedCsum {
		return ext, ext2fs.ErrExtentCsumInvalid
	}
	return ext, nil
}

// goTo is ext2fs_extent_goto2: from the root down to the entry of level
// leafLevel (counted from the leaves) that holds blk.
func (x *extHandle) goTo(leafLevel int, blk uint64) error {
	ext, err := x.get(extOpRoot)
	if err != nil {
		if err == ext2fs.ErrExtentNoNext {
			err = ext2fs.ErrExtentNotFound
		}
		return err
	}
	if leafLevel > x.maxDepth {
		return ext2fs.ErrOpNotSupported
	}
	for {
		if x.maxDepth-x.level == leafLevel {
			if blk >= ext.lblk && blk < ext.lblk+uint64(ext.len) {
				return nil
			}
			if blk < ext.lblk {
				x.get(extOpPrevSib)
				return ext2fs.ErrExtentNotFound
			}
			ext, err = x.get(extOpNextSib)
			if err == ext2fs.ErrExtentNoNext {
				return ext2fs.ErrExtentNotFound
			}
			if err != nil {
				return err
			}
			continue
		}
		ext, err = x.get(extOpNextSib)
		switch {
		case err == ext2fs.ErrExtentNoNext:
		case err != nil:
			return err
		case blk == ext.lblk:
		case blk > ext.lblk:
			continue
		default:
			if ext, err = x.get(extOpPrevSib); err != nil {
				return err
			}
		}
		if ext, err = x.get(extOpDown); err != nil {
			return err
		}
	}
}

// updatePath is update_path: the inode for the root, else the current
// node, written where the parent's current index points.
func (x *extHandle) updatePath() {
	c := x.c
	if x.level == 0 {
		c.writeInode(x.ino, x.n)
		return
	}
	pp := &x.path[x.level-1]
	blk := indexLeaf(extEntry(pp.buf, pp.curr))
	buf := x.path[x.level].buf
	x.setCsum(buf)
	if blk < c.fs.BlocksCount {
		c.writeBlockUncounted(blk, buf)
	}
}

// setCsum is ext2fs_extent_block_csum_set.
func (x *extHandle) setCsum(buf []byte) {
	f := x.c.fs
	if !f.MetadataCsum {
		return
	}
	if sum, _, ok := ondisk.ExtentBlockChecksum(buf, f.CsumSeed, x.ino, x.n.Generation()); ok {
		h := ondisk.ExtentHeader(buf)
		binary.LittleEndian.PutUint32(buf[ondisk.ExtentHeaderSize+int(h.Max())*extEntrySize:], sum)
	}
}

// replace is ext2fs_extent_replace: the current entry becomes ext.
func (x *extHandle) replace(ext libExtent) error {
	p := &x.path[x.level]
	if p.curr < 0 {
		return ext2fs.ErrNoCurrentNode
	}
	e := extEntry(p.buf, p.curr)
	if x.level == x.maxDepth {
		binary.LittleEndian.PutUint32(e[0:], uint32(ext.lblk))
		binary.LittleEndian.PutUint32(e[8:], uint32(ext.pblk))
		binary.LittleEndian.PutUint16(e[6:], uint16(ext.pblk>>32))
		if ext.flags&extFlagUninit != 0 {
			if ext.len > extUninitMaxLen {
				return ext2fs.ErrExtentInvalidLength
			}
			binary.LittleEndian.PutUint16(e[4:], uint16(ext.len+extInitMaxLen))
		} else {
			if ext.len > extInitMaxLen {
				return ext2fs.ErrExtentInvalidLength
			}
			binary.LittleEndian.PutUint16(e[4:], uint16(ext.len))
		}
	} else {
		binary.LittleEndian.PutUint32(e[4:], uint32(ext.pblk))
		binary.LittleEndian.PutUint16(e[8:], uint16(ext.pblk>>32))
		binary.LittleEndian.PutUint32(e[0:], uint32(ext.lblk))
		binary.LittleEndian.PutUint16(e[10:], 0)
	}
	x.updatePath()
	return nil
}

// splittingAtEOF is splitting_at_eof: every level from the current one up
// is on its last entry.
func (x *extHandle) splittingAtEOF() bool {
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
func (x *extHandle) split(expandAllowed bool) error {
	c := x.c
	f := c.fs
	ext, err := x.get(extOpCurrent)
	if err != nil {
		return err
	}
	origHeight := x.maxDepth - x.level
	origLblk := ext.lblk
	p := &x.path[x.level]
	var goal uint64
	if x.level == x.maxDepth {
		goal = leafStart(extEntry(p.buf, 0))
	} else {
		goal = indexLeaf(extEntry(p.buf, 0))
	}
	ratio := uint64(1) << f.ClusterBits
	goal -= ratio
	goal &^= ratio - 1
	if x.level > 0 && x.path[x.level-1].entries >= x.path[x.level-1].maxEntries {
		if _, err := x.get(extOpUp); err != nil {
			return err
		}
		if err := x.split(expandAllowed); err != nil {
			return err
		}
		if err := x.goTo(origHeight, origLblk); err != nil {
			return err
		}
	}
	p = &x.path[x.level]
	if p.curr < 0 {
		return ext2fs.ErrNoCurrentNode
	}
	noBalance := expandAllowed && x.splittingAtEOF()
	nodeEntries := int(binary.LittleEndian.Uint16(p.buf[2:]))
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
		return ext2fs.ErrCantSplitExtent
	}
	if goal == 0 {
		goal = c.extInodeGoal(x.ino, x.n)
	}
	newBlk, ok := x.allocBlock(goal)
	if !ok {
		return ext2fs.ErrBlockAllocFail
	}
	nb := make([]byte, f.BlockSize)
	copy(nb, p.buf[:ondisk.ExtentHeaderSize])
	setExtEntries(nb, tocopy)
	binary.LittleEndian.PutUint16(nb[4:], uint16((f.BlockSize-ondisk.ExtentHeaderSize)/extEntrySize))
	from := nodeEntries - tocopy
	if from < 0 {
		from = 0
	}
	copy(nb[ondisk.ExtentHeaderSize:], p.buf[ondisk.ExtentHeaderSize+from*extEntrySize:ondisk.ExtentHeaderSize+nodeEntries*extEntrySize])
	newStart := uint64(binary.LittleEndian.Uint32(nb[ondisk.ExtentHeaderSize:]))
	x.setCsum(nb)
	c.writeBlockUncounted(newBlk, nb)
	if newRoot {
		np := make([]extPath, len(x.path)+1)
		copy(np, x.path)
		x.path = np
		p = &x.path[0]
		p.entries = 1
		p.left = p.maxEntries - 1
		x.maxDepth++
		binary.LittleEndian.PutUint16(p.buf[6:], uint16(x.maxDepth))
	} else {
		p.entries -= tocopy
		p.left -= tocopy
	}
	setExtEntries(p.buf, p.entries)
	x.updatePath()
	if newRoot {
		ext, err = x.get(extOpFirstSib)
		if err != nil {
			return err
		}
		ext.lblk = newStart
		ext.pblk = newBlk
		ext.len = uint32(x.path[0].endBlk - ext.lblk)
		if err := x.replace(ext); err != nil {
			return err
		}
	} else {
		ext, _ = x.get(extOpUp)
		newLen := uint32(newStart - ext.lblk)
		ext.len -= newLen
		if err := x.replace(ext); err != nil {
			return err
		}
		ext.lblk = newStart
		ext.pblk = newBlk
		ext.len = newLen
		if err := x.insertAfter(ext); err != nil {
			return err
		}
	}
	if err := x.goTo(origHeight, origLblk); err != nil {
		return err
	}
	x.addIBlocks(1)
	c.writeInode(x.ino, x.n)
	return nil
}

// insertAfter is ext2fs_extent_insert(EXT2_EXTENT_INSERT_AFTER): ext
// goes after the current entry (first in an empty node), the node split
// first when full.
func (x *extHandle) insertAfter(ext libExtent) error {
	p := &x.path[x.level]
	if p.entries >= p.maxEntries {
		if err := x.split(true); err != nil {
			return err
		}
		p = &x.path[x.level]
	}
	ix := 0
	if p.curr >= 0 {
		ix = p.curr + 1
		p.left--
	} else {
		p.left = -1
	}
	p.curr = ix
	if p.left >= 0 {
		start := ondisk.ExtentHeaderSize + ix*extEntrySize
		end := start + (p.left+1)*extEntrySize
		if end+extEntrySize <= len(p.buf) {
			copy(p.buf[start+extEntrySize:end+extEntrySize], p.buf[start:end])
		}
	}
	p.left++
	p.entries++
	setExtEntries(p.buf, p.entries)
	if err := x.replace(ext); err != nil {
		return err
	}
	x.updatePath()
	return nil
}

// fixParents is ext2fs_extent_fix_parents: while the current entry is
// the first of its node, the index above gets its start; the handle then
// goes back to it.
func (x *extHandle) fixParents() error {
	p := &x.path[x.level]
	if p.curr < 0 {
		return ext2fs.ErrNoCurrentNode
	}
	ext, err := x.get(extOpCurrent)
	if err != nil {
		return err
	}
	start := ext.lblk
	origHeight := x.maxDepth - x.level
	for x.level > 0 && p.left == p.entries-1 {
		if ext, err = x.get(extOpUp); err != nil {
			return err
		}
		if ext.lblk == start {
			break
		}
		p = &x.path[x.level]
		ext.len += uint32(ext.lblk - start)
		ext.lblk = start
		if err := x.replace(ext); err != nil {
			return err
		}
		x.updatePath()
	}
	return x.goTo(origHeight, start)
}

// addIBlocks is ext2fs_iblk_add_blocks.
func (x *extHandle) addIBlocks(num uint64) error {
	return iblkAdjust(x.c, x.n, num, true)
}

// iblkAdjust is ext2fs_iblk_add_blocks (add) or ext2fs_iblk_sub_blocks:
// num filesystem blocks (clusters) added to or taken from i_blocks.
func iblkAdjust(c *Checker, n ondisk.Inode, num uint64, add bool) error {
	f := c.fs
	huge := c.sb.HasRoCompat(ondisk.RoCompatHugeFile)
	b := uint64(n.BlocksLo())
	if huge {
		b |= uint64(n.BlocksHi()) << 32
	}
	if !huge || n.Flags()&ondisk.FlagHugeFile == 0 {
		num *= uint64(f.BlockSize / 512)
	}
	num <<= f.ClusterBits
	if add {
		b += num
		if !huge && b > 0xFFFFFFFF {
			return ext2fs.ErrOverflow
		}
	} else {
		if num > b {
			return ext2fs.ErrOverflow
		}
		b -= num
	}
	if huge {
		binary.LittleEndian.PutUint16(n[0x74:], uint16(b>>32))
	}
	binary.LittleEndian.PutUint32(n[0x1C:], uint32(b))
	return nil
}

// statIBlocks is ext2fs_get_stat_i_blocks: i_blocks in 512-byte units.
func (c *Checker) statIBlocks(n ondisk.Inode) uint64 {
	b := uint64(n.BlocksLo())
	if c.sb.HasRoCompat(ondisk.RoCompatHugeFile) {
		b |= uint64(n.BlocksHi()) << 32
		if n.Flags()&ondisk.FlagHugeFile != 0 {
			b *= uint64(c.fs.BlockSize / 512)
		}
	}
	return b
}

// extInodeGoal is ext2fs_find_inode_goal for logical block 0 of an
// extent inode whose tree may be deeper than the root: the block mapping
// it, else what inodeGoal finds.
func (c *Checker) extInodeGoal(ino uint32, n ondisk.Inode) uint64 {
	if n.Flags()&ondisk.FlagInlineData == 0 && n.Flags()&ondisk.FlagExtents != 0 && !c.isFastSymlink(n) {
		m := make(ondisk.Inode, len(n))
		copy(m, n)
		if x, err := c.openExtHandle(ino, m); err == nil && x.goTo(0, 0) == nil {
			if ext, err := x.get(extOpCurrent); err == nil {
				return ext.pblk - ext.lblk
			}
		}
		m = make(ondisk.Inode, len(n))
		copy(m, n)
		clear(m.IBlock())
		return c.inodeGoal(ino, m, 0)
	}
	return c.inodeGoal(ino, n, 0)
}

// extentAllocBlock is ext2fs_alloc_block2 with e2fsck's allocator: a
// block free in the block found map at or after goal, marked in use with
// the group and superblock counts (the library zeroes it; the caller
// writes it whole).
func (c *Checker) extentAllocBlock(goal uint64) (uint64, bool) {
	f := c.fs
	if goal == 0 || goal >= f.BlocksCount {
		goal = f.FirstDataBlock
	}
	return c.newBlock(goal)
}
