package ext2fs

import "gofsck/internal/ondisk"

// Changing one logical block's mapping in an extent tree
// (ext2fs_extent_set_bmap) and the library's block iterator over an
// extent-mapped inode (the extent part of ext2fs_block_iterate3), both on
// the extent handle of extent.go.
//
// set_bmap maps, remaps or unmaps one block: it merges the block into the
// extent before or after it when it continues one, cuts the extent
// holding it in two or three, inserts the new single-block extent, and
// through the handle's insert splits a full node (a full root moves all
// its entries to a new block and the tree grows one level; a full node
// below it gives half its entries, or only the last one when appending at
// the end of the file, to a new block allocated near its first entry).
// Index starts are corrected upwards as the library's fix_parents does,
// and a node left empty is removed from its parent and freed. The
// iterator visits index entries before their subtrees and each leaf
// extent's blocks, calling set_bmap for a block the visitor changed and
// carrying on from where set_bmap leaves the handle, with the library's
// quirks (the next extent is read before the current one is changed, a
// visited range is skipped by its block count).

// extStepBudget bounds the moves of one walk over a hostile tree (index
// nodes shared by several parents make a tree of many paths).
const extStepBudget = 1 << 22

// IblockEmpty reports an i_block of zeros, which the library's handle
// opens as an empty leaf root (writing nothing while nothing changes).
func IblockEmpty(n ondisk.Inode) bool {
	for _, b := range n.IBlock() {
		if b != 0 {
			return false
		}
	}
	return true
}

// allocBlock is the handle's block allocation (ext2fs_alloc_block2 with
// the caller's allocator; e2fsck's during the passes).
func (x *ExtentHandle) allocBlock(goal uint64) (uint64, bool) {
	return x.alloc.AllocBlock(goal)
}

// freeBlock is ext2fs_block_alloc_stats2(blk, -1) for a tree block the
// handle drops.
func (x *ExtentHandle) freeBlock(blk uint64) {
	x.alloc.FreeBlock(blk)
}

// currentExt re-reads the current entry after a move made by hand.
func (x *ExtentHandle) currentExt(prior error) (Extent, error) {
	ext, err := x.Get(ExtentCurrent)
	if err == nil {
		err = prior
	}
	return ext, err
}

// downLast is EXT2_EXTENT_DOWN_AND_LAST: down to the last entry of the
// child node.
func (x *ExtentHandle) downLast() (Extent, error) {
	ext, err := x.Get(ExtentDown)
	if err != nil && err != ErrExtentCsumInvalid {
		return ext, err
	}
	p := &x.path[x.level]
	p.curr = p.entries - 1
	p.left = 0
	if x.level < x.maxDepth {
		p.visitNum = 1
	}
	return x.currentExt(err)
}

// getLeaf is EXT2_EXTENT_NEXT_LEAF (next) or EXT2_EXTENT_PREV_LEAF: moves
// as EXT2_EXTENT_NEXT or PREV until a leaf entry is current. A checksum
// failure on the way is returned once the leaf is reached, as the
// library's does.
func (x *ExtentHandle) getLeaf(next bool) (Extent, error) {
	failedCsum := false
	for steps := 0; ; steps++ {
		if steps > extStepBudget {
			return Extent{}, ErrOpNotSupported
		}
		var ext Extent
		var err error
		if next {
			ext, err = x.Get(ExtentNext)
		} else {
			p := &x.path[x.level]
			switch {
			case x.level < x.maxDepth && p.visitNum > 0:
				ext, err = x.downLast()
			case p.left < p.entries-1:
				ext, err = x.Get(ExtentPrevSib)
			case x.level > 0:
				if _, err = x.Get(ExtentUp); err == nil {
					x.path[x.level].visitNum = 0
					ext, err = x.Get(ExtentCurrent)
				}
			default:
				return ext, ErrExtentNoPrev
			}
		}
		if err == ErrExtentCsumInvalid {
			failedCsum, err = true, nil
		}
		if err != nil {
			return ext, err
		}
		if x.level == x.maxDepth {
			if failedCsum {
				return ext, ErrExtentCsumInvalid
			}
			return ext, nil
		}
	}
}

// Insert is ext2fs_extent_insert: ext goes before the current entry, or
// after it (after), first in an empty node; a full node is split first.
// A replace that fails takes the entry out again.
func (x *ExtentHandle) Insert(ext Extent, after bool) error {
	p := &x.path[x.level]
	if p.entries >= p.maxEntries {
		if err := x.split(true); err != nil {
			return err
		}
		p = &x.path[x.level]
	}
	ix := 0
	if p.curr >= 0 {
		ix = p.curr
		if after {
			ix++
			p.left--
		}
	} else {
		p.left = -1
	}
	if ix+p.left+2 > p.maxEntries || ix >= p.maxEntries {
		return ErrCantInsertExtent
	}
	p.curr = ix
	if p.left >= 0 {
		start := ondisk.ExtentHeaderSize + ix*extEntrySize
		end := start + (p.left+1)*extEntrySize
		copy(p.buf[start+extEntrySize:end+extEntrySize], p.buf[start:end])
	}
	p.left++
	p.entries++
	setExtEntries(p.buf, p.entries)
	if err := x.Replace(ext); err != nil {
		x.Delete()
		return err
	}
	x.updatePath()
	return nil
}

// Delete is ext2fs_extent_delete: the current entry goes; a node below
// the root left empty is taken out of its parent, i_blocks lowered by one
// cluster and the block freed; a root left empty becomes a leaf.
func (x *ExtentHandle) Delete() error {
	return x.deleteDepth(0)
}

// deleteDepth is delete, depth levels above the entry first deleted
// (each emptied node's parent entry goes in turn).
func (x *ExtentHandle) deleteDepth(depth int) error {
	p := &x.path[x.level]
	if p.curr < 0 {
		return ErrNoCurrentNode
	}
	if p.left < 0 || p.curr+p.left >= p.maxEntries {
		return ErrExtentLeafBad
	}
	if p.left > 0 {
		start := ondisk.ExtentHeaderSize + p.curr*extEntrySize
		copy(p.buf[start:], p.buf[start+extEntrySize:start+(p.left+1)*extEntrySize])
		p.left--
	} else {
		p.curr--
	}
	p.entries--
	if p.entries <= 0 {
		p.entries = 0
		p.curr = -1
	}
	if p.entries == 0 && x.level > 0 {
		if depth > len(x.path) {
			return ErrExtentLeafBad
		}
		ext, err := x.Get(ExtentUp)
		if err != nil {
			return err
		}
		x.deleteDepth(depth + 1)
		// The library lowers the 32-bit i_blocks by one cluster in
		// 512-byte units, whatever huge_file says.
		f := x.f
		units := uint32(f.BlockSize/512) << f.ClusterBits
		x.n.SetBlocksLo(x.n.BlocksLo() - units)
		x.fsys.IO.WriteInode(x.ino, x.n)
		x.freeBlock(ext.Pblk)
		return nil
	}
	setExtEntries(p.buf, p.entries)
	if p.entries == 0 && x.level == 0 {
		ondisk.ExtentHeader(p.buf).SetDepth(0)
		x.maxDepth = 0
	}
	x.updatePath()
	return nil
}

// SetBmap is ext2fs_extent_set_bmap: logical block l is mapped to phys
// (uninit: as an uninitialised extent), or unmapped when phys is 0. The
// handle goes back to the entry it was on.
func (x *ExtentHandle) SetBmap(l, phys uint64, uninit bool) (err error) {
	maxLen := uint32(ExtInitMaxLen)
	newExt := Extent{Lblk: l, Pblk: phys, Len: 1, Flags: ExtentFlagLeaf}
	if uninit {
		maxLen = ExtUninitMaxLen
		newExt.Flags |= ExtentFlagUninit
	}
	p := &x.path[x.level]
	if x.maxDepth == 0 && p.entries == 0 {
		return x.Insert(newExt, false)
	}
	ext, err := x.Get(ExtentCurrent)
	if err != nil {
		if err != ErrNoCurrentNode {
			return err
		}
		ext = Extent{}
	}
	origHeight := x.maxDepth - x.level
	origLblk := ext.Lblk
	defer func() {
		if origHeight > x.maxDepth {
			origHeight = x.maxDepth
		}
		x.Goto(origHeight, origLblk)
	}()

	mapped := true
	if err := x.Goto(0, l); err != nil {
		if err != ErrExtentNotFound {
			return err
		}
		mapped = false
		if phys == 0 {
			return nil
		}
	}
	if ext, err = x.Get(ExtentCurrent); err != nil {
		return err
	}
	extUninit := ext.Flags&ExtentFlagUninit != 0
	next, err := x.getLeaf(true)
	hasNext := err == nil
	if err != nil && err != ErrExtentNoNext {
		return err
	}
	if err := x.Goto(0, l); err != nil && err != ErrExtentNotFound {
		return err
	}
	prev, err := x.getLeaf(false)
	hasPrev := err == nil
	if err != nil && err != ErrExtentNoPrev {
		return err
	}
	if err := x.Goto(0, l); err != nil && err != ErrExtentNotFound {
		return err
	}
	nextUninit := next.Flags&ExtentFlagUninit != 0
	prevUninit := prev.Flags&ExtentFlagUninit != 0
	elen := uint64(ext.Len)

	if mapped && uninit == extUninit && ext.Pblk+(l-ext.Lblk) == phys {
		return nil
	}
	// joinsNext: the new block continues backwards into the next extent.
	joinsNext := hasNext && l == next.Lblk-1 && phys == next.Pblk-1 && uninit == nextUninit && next.Len < maxLen-1
	growNext := func() error {
		n, err := x.getLeaf(true)
		if err != nil {
			return err
		}
		n.Len++
		n.Lblk--
		n.Pblk--
		return x.Replace(n)
	}
	switch {
	case !mapped:
		switch {
		case l == ext.Lblk+elen && phys == ext.Pblk+elen && uninit == extUninit && ext.Len < maxLen-1:
			ext.Len++
			err = x.Replace(ext)
		case l == ext.Lblk-1 && phys == ext.Pblk-1 && uninit == extUninit && ext.Len < maxLen-1:
			ext.Len++
			ext.Lblk--
			ext.Pblk--
			err = x.Replace(ext)
		case joinsNext:
			err = growNext()
		case l < ext.Lblk:
			err = x.Insert(newExt, false)
		default:
			err = x.Insert(newExt, true)
		}
		if err != nil {
			return err
		}
		return x.FixParents()
	case l == ext.Lblk && ext.Len == 1:
		if phys != 0 {
			return x.Replace(newExt)
		}
		if err := x.Delete(); err != nil {
			return err
		}
		if err := x.FixParents(); err != ErrNoCurrentNode {
			return err
		}
		return nil
	case l == ext.Lblk+elen-1:
		if phys != 0 {
			if joinsNext {
				err = growNext()
			} else {
				err = x.Insert(newExt, true)
			}
			if err != nil {
				return err
			}
			if err := x.FixParents(); err != nil {
				return err
			}
			if err := x.Goto(0, l); err != nil {
				return err
			}
			if ext, err = x.Get(ExtentCurrent); err != nil {
				return err
			}
		}
		ext.Len--
		return x.Replace(ext)
	case l == ext.Lblk:
		if phys != 0 {
			if hasPrev && l == prev.Lblk+uint64(prev.Len) && phys == prev.Pblk+uint64(prev.Len) && uninit == prevUninit && prev.Len < maxLen-1 {
				pv, err := x.getLeaf(false)
				if err != nil {
					return err
				}
				pv.Len++
				err = x.Replace(pv)
			} else {
				err = x.Insert(newExt, false)
			}
			if err != nil {
				return err
			}
			if err := x.FixParents(); err != nil {
				return err
			}
			if ext, err = x.getLeaf(true); err != nil {
				return err
			}
		}
		ext.Pblk++
		ext.Lblk++
		ext.Len--
		if err := x.Replace(ext); err != nil {
			return err
		}
		return x.FixParents()
	}
	// In the middle: the extent is cut after l's predecessors, the new
	// block and the rest inserted after it; a failure puts it back.
	save := ext
	ext.Len = uint32(l - ext.Lblk)
	if err := x.Replace(ext); err != nil {
		return err
	}
	if phys != 0 {
		if err := x.Insert(newExt, true); err != nil {
			if x.Goto(0, save.Lblk) == nil {
				x.Replace(save)
			}
			return err
		}
	}
	ext.Pblk += uint64(ext.Len) + 1
	ext.Lblk += uint64(ext.Len) + 1
	ext.Len = save.Len - ext.Len - 1
	if err := x.Insert(ext, true); err != nil {
		if phys != 0 && x.Goto(0, newExt.Lblk) == nil {
			x.Delete()
		}
		if x.Goto(0, save.Lblk) == nil {
			x.Replace(save)
		}
		return err
	}
	return nil
}

// ExtentVisit is offered each block of the iteration with its block count
// (-1 for a tree block); it may change *blk and returns iterator bits.
type ExtentVisit func(blk *uint64, blockcnt int64) int

// Iterate is the extent part of ext2fs_block_iterate3 over the handle's
// inode. With BlockFlagAppend, after the last extent the visitor is
// offered block 0 at the next block counts for as long as it maps one;
// with BlockFlagDepthTraverse an index entry is offered after its subtree
// instead of before, with BlockFlagDataOnly not at all; under
// BlockFlagReadOnly a BlockChanged result ends the walk with
// ErrROBlockIterate. BlockFlagSkipBadNode and BlockFlagIgnoreCsum are
// gofsck's (see their doc). It returns the visitors' bits with BlockError
// and the library's error (nil if none).
func (x *ExtentHandle) Iterate(flags BlockFlags, visit ExtentVisit) (int, error) {
	appendBlocks := flags&BlockFlagAppend != 0
	depthFirst := flags&BlockFlagDepthTraverse != 0
	readOnly := flags&BlockFlagReadOnly != 0
	skipBad := flags&BlockFlagSkipBadNode != 0
	x.ignoreCsum = flags&BlockFlagIgnoreCsum != 0
	ret := 0
	var iterErr error
	// roViolation is check_for_ro_violation_goto.
	roViolation := func() bool {
		if readOnly && ret&BlockChanged != 0 {
			iterErr = ErrROBlockIterate
			ret |= BlockAbort | BlockError
			return true
		}
		return false
	}
	// The pointer the visitor is given lives in the handle: a walk
	// allocates nothing.
	vb := &x.visitBlk
	blockcnt := int64(0)
	op := ExtentRoot
	var ext Extent
	for steps := 0; ; steps++ {
		if steps > extStepBudget {
			break
		}
		var err error
		if op != ExtentCurrent {
			lvl := x.level
			ext, err = x.Get(op)
			if skipBad && x.skipChild(lvl, err) {
				continue
			}
		}
		if err != nil {
			if err != ErrExtentNoNext {
				iterErr = err
				break
			}
			if !appendBlocks {
				break
			}
			for k := 0; k < extStepBudget; k++ {
				*vb = 0
				r := visit(vb, blockcnt)
				ret |= r
				if roViolation() || r&BlockChanged == 0 {
					break
				}
				iterErr = x.SetBmap(uint64(blockcnt), *vb, false)
				blockcnt++
				if iterErr != nil || ret&BlockAbort != 0 || *vb == 0 {
					break
				}
			}
			break
		}
		op = ExtentNext
		blk := ext.Pblk
		if ext.Flags&ExtentFlagLeaf == 0 {
			if flags&BlockFlagDataOnly != 0 {
				continue
			}
			if (ext.Flags&ExtentFlagSecondVisit != 0) == depthFirst {
				*vb = blk
				ret |= visit(vb, -1)
				if ret&BlockChanged != 0 {
					ext.Pblk = *vb
					if iterErr = x.Replace(ext); iterErr != nil {
						break
					}
				}
				if ret&BlockAbort != 0 {
					break
				}
			}
			continue
		}
		uninit := ext.Flags&ExtentFlagUninit != 0
		next, nerr := x.Get(op)
		if ext.Lblk+uint64(ext.Len) <= uint64(blockcnt) {
			continue
		}
		if ext.Lblk > uint64(blockcnt) {
			blockcnt = int64(ext.Lblk)
		}
		// The library advances the first block by what was visited but
		// counts from the extent's start.
		blk += uint64(blockcnt) - ext.Lblk
		blockcnt = int64(ext.Lblk)
		stop := false
		for j := uint32(0); j < ext.Len; j++ {
			*vb = blk
			r := visit(vb, blockcnt)
			ret |= r
			if roViolation() {
				stop = true
				break
			}
			if r&BlockChanged != 0 {
				if iterErr = x.SetBmap(uint64(blockcnt), *vb, uninit); iterErr != nil {
					stop = true
					break
				}
			}
			if ret&BlockAbort != 0 {
				stop = true
				break
			}
			blk++
			blockcnt++
		}
		if stop {
			break
		}
		if nerr == nil {
			ext = next
			op = ExtentCurrent
		}
	}
	return ret | BlockError, iterErr
}

// skipDepth is how deep BlockFlagSkipBadNode descends: the root and
// seven levels below it, as the checker's own walks held one buffer for
// each of eight levels.
const skipDepth = 8

// skipChild is BlockFlagSkipBadNode's step: when a move from level lvl
// went down (or failed to) into a child that is unreadable or out of
// range, has a bad header or no entries, is an ancestor, or lies below
// skipDepth (then whatever its checksum), the handle goes back to the
// index entry naming it, already visited, and reports true; the walk
// goes on with the entry after it. A child above skipDepth whose
// checksum fails is not skipped: the walk ends there.
func (x *ExtentHandle) skipChild(lvl int, err error) bool {
	if x.level <= lvl && (err == nil || err == ErrExtentNoNext) {
		return false
	}
	if lvl+1 < skipDepth && (err == nil || err == ErrExtentCsumInvalid) {
		return false
	}
	x.level = lvl
	x.path[lvl].visitNum = 1
	return true
}
