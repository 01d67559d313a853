package check

import (
	"encoding/binary"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
)

// Changing one logical block's mapping in an extent tree
// (ext2fs_extent_set_bmap) and the library's block iterator over an
// extent-mapped inode (the extent part of ext2fs_block_iterate3), both on
// the extent handle of pass1e_handle.go.
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

// Block-iterator result bits (BLOCK_CHANGED, BLOCK_ABORT, BLOCK_ERROR).
const (
	iterChanged = 1 << iota
	iterAbort
	iterError
)

// extStepBudget bounds the moves of one walk over a hostile tree (index
// nodes shared by several parents make a tree of many paths).
const extStepBudget = 1 << 22

// iblockEmpty reports an i_block of zeros, which the library's handle
// opens as an empty leaf root (writing nothing while nothing changes).
func iblockEmpty(n ondisk.Inode) bool {
	for _, b := range n.IBlock() {
		if b != 0 {
			return false
		}
	}
	return true
}

// allocBlock is the handle's block allocation (ext2fs_alloc_block2 with
// the caller's allocator; e2fsck's during the passes).
func (x *extHandle) allocBlock(goal uint64) (uint64, bool) {
	if x.alloc != nil {
		return x.alloc(goal)
	}
	return x.c.extentAllocBlock(goal)
}

// freeBlock is ext2fs_block_alloc_stats2(blk, -1) for a tree block the
// handle drops.
func (x *extHandle) freeBlock(blk uint64) {
	if x.free != nil {
		x.free(blk)
		return
	}
	c := x.c
	if blk < c.fs.FirstDataBlock || blk >= c.fs.BlocksCount {
		return
	}
	c.releaseBlock(blk)
}

// currentExt re-reads the current entry after a move made by hand.
func (x *extHandle) currentExt(prior error) (libExtent, error) {
	ext, err := x.get(extOpCurrent)
	if err == nil {
		err = prior
	}
	return ext, err
}

// downLast is EXT2_EXTENT_DOWN_AND_LAST: down to the last entry of the
// child node.
func (x *extHandle) downLast() (libExtent, error) {
	ext, err := x.get(extOpDown)
	if err != nil && err != ext2fs.ErrExtentCsumInvalid {
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
func (x *extHandle) getLeaf(next bool) (libExtent, error) {
	failedCsum := false
	for steps := 0; ; steps++ {
		if steps > extStepBudget {
			return libExtent{}, ext2fs.ErrOpNotSupported
		}
		var ext libExtent
		var err error
		if next {
			ext, err = x.get(extOpNext)
		} else {
			p := &x.path[x.level]
			switch {
			case x.level < x.maxDepth && p.visitNum > 0:
				ext, err = x.downLast()
			case p.left < p.entries-1:
				ext, err = x.get(extOpPrevSib)
			case x.level > 0:
				if _, err = x.get(extOpUp); err == nil {
					x.path[x.level].visitNum = 0
					ext, err = x.get(extOpCurrent)
				}
			default:
				return ext, ext2fs.ErrExtentNoPrev
			}
		}
		if err == ext2fs.ErrExtentCsumInvalid {
			failedCsum, err = true, nil
		}
		if err != nil {
			return ext, err
		}
		if x.level == x.maxDepth {
			if failedCsum {
				return ext, ext2fs.ErrExtentCsumInvalid
			}
			return ext, nil
		}
	}
}

// insert is ext2fs_extent_insert: ext goes before the current entry, or
// after it (after), first in an empty node; a full node is split first.
// A replace that fails takes the entry out again.
func (x *extHandle) insert(ext libExtent, after bool) error {
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
		return ext2fs.ErrCantInsertExtent
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
	if err := x.replace(ext); err != nil {
		x.delete()
		return err
	}
	x.updatePath()
	return nil
}

// delete is ext2fs_extent_delete: the current entry goes; a node below
// the root left empty is taken out of its parent, i_blocks lowered by one
// cluster and the block freed; a root left empty becomes a leaf.
func (x *extHandle) delete() error {
	return x.deleteDepth(0)
}

// deleteDepth is delete, depth levels above the entry first deleted
// (each emptied node's parent entry goes in turn).
func (x *extHandle) deleteDepth(depth int) error {
	p := &x.path[x.level]
	if p.curr < 0 {
		return ext2fs.ErrNoCurrentNode
	}
	if p.left < 0 || p.curr+p.left >= p.maxEntries {
		return ext2fs.ErrExtentLeafBad
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
			return ext2fs.ErrExtentLeafBad
		}
		ext, err := x.get(extOpUp)
		if err != nil {
			return err
		}
		x.deleteDepth(depth + 1)
		// The library lowers the 32-bit i_blocks by one cluster in
		// 512-byte units, whatever huge_file says.
		f := x.c.fs
		units := uint32(f.BlockSize/512) << f.ClusterBits
		binary.LittleEndian.PutUint32(x.n[0x1C:], x.n.BlocksLo()-units)
		x.c.writeInode(x.ino, x.n)
		x.freeBlock(ext.pblk)
		return nil
	}
	setExtEntries(p.buf, p.entries)
	if p.entries == 0 && x.level == 0 {
		binary.LittleEndian.PutUint16(p.buf[6:], 0)
		x.maxDepth = 0
	}
	x.updatePath()
	return nil
}

// setBmap is ext2fs_extent_set_bmap: logical block l is mapped to phys
// (uninit: as an uninitialised extent), or unmapped when phys is 0. The
// handle goes back to the entry it was on.
func (x *extHandle) setBmap(l, phys uint64, uninit bool) (err error) {
	maxLen := uint32(extInitMaxLen)
	newExt := libExtent{lblk: l, pblk: phys, len: 1, flags: extFlagLeaf}
	if uninit {
		maxLen = extUninitMaxLen
		newExt.flags |= extFlagUninit
	}
	p := &x.path[x.level]
	if x.maxDepth == 0 && p.entries == 0 {
		return x.insert(newExt, false)
	}
	ext, err := x.get(extOpCurrent)
	if err != nil {
		if err != ext2fs.ErrNoCurrentNode {
			return err
		}
		ext = libExtent{}
	}
	origHeight := x.maxDepth - x.level
	origLblk := ext.lblk
	defer func() {
		if origHeight > x.maxDepth {
			origHeight = x.maxDepth
		}
		x.goTo(origHeight, origLblk)
	}()

	mapped := true
	if err := x.goTo(0, l); err != nil {
		if err != ext2fs.ErrExtentNotFound {
			return err
		}
		mapped = false
		if phys == 0 {
			return nil
		}
	}
	if ext, err = x.get(extOpCurrent); err != nil {
		return err
	}
	extUninit := ext.flags&extFlagUninit != 0
	next, err := x.getLeaf(true)
	hasNext := err == nil
	if err != nil && err != ext2fs.ErrExtentNoNext {
		return err
	}
	if err := x.goTo(0, l); err != nil && err != ext2fs.ErrExtentNotFound {
		return err
	}
	prev, err := x.getLeaf(false)
	hasPrev := err == nil
	if err != nil && err != ext2fs.ErrExtentNoPrev {
		return err
	}
	if err := x.goTo(0, l); err != nil && err != ext2fs.ErrExtentNotFound {
		return err
	}
	nextUninit := next.flags&extFlagUninit != 0
	prevUninit := prev.flags&extFlagUninit != 0
	elen := uint64(ext.len)

	if mapped && uninit == extUninit && ext.pblk+(l-ext.lblk) == phys {
		return nil
	}
	// joinsNext: the new block continues backwards into the next extent.
	joinsNext := hasNext && l == next.lblk-1 && phys == next.pblk-1 && uninit == nextUninit && next.len < maxLen-1
	growNext := func() error {
		n, err := x.getLeaf(true)
		if err != nil {
			return err
		}
		n.len++
		n.lblk--
		n.pblk--
		return x.replace(n)
	}
	switch {
	case !mapped:
		switch {
		case l == ext.lblk+elen && phys == ext.pblk+elen && uninit == extUninit && ext.len < maxLen-1:
			ext.len++
			err = x.replace(ext)
		case l == ext.lblk-1 && phys == ext.pblk-1 && uninit == extUninit && ext.len < maxLen-1:
			ext.len++
			ext.lblk--
			ext.pblk--
			err = x.replace(ext)
		case joinsNext:
			err = growNext()
		case l < ext.lblk:
			err = x.insert(newExt, false)
		default:
			err = x.insert(newExt, true)
		}
		if err != nil {
			return err
		}
		return x.fixParents()
	case l == ext.lblk && ext.len == 1:
		if phys != 0 {
			return x.replace(newExt)
		}
		if err := x.delete(); err != nil {
			return err
		}
		if err := x.fixParents(); err != ext2fs.ErrNoCurrentNode {
			return err
		}
		return nil
	case l == ext.lblk+elen-1:
		if phys != 0 {
			if joinsNext {
				err = growNext()
			} else {
				err = x.insert(newExt, true)
			}
			if err != nil {
				return err
			}
			if err := x.fixParents(); err != nil {
				return err
			}
			if err := x.goTo(0, l); err != nil {
				return err
			}
			if ext, err = x.get(extOpCurrent); err != nil {
				return err
			}
		}
		ext.len--
		return x.replace(ext)
	case l == ext.lblk:
		if phys != 0 {
			if hasPrev && l == prev.lblk+uint64(prev.len) && phys == prev.pblk+uint64(prev.len) && uninit == prevUninit && prev.len < maxLen-1 {
				pv, err := x.getLeaf(false)
				if err != nil {
					return err
				}
				pv.len++
				err = x.replace(pv)
			} else {
				err = x.insert(newExt, false)
			}
			if err != nil {
				return err
			}
			if err := x.fixParents(); err != nil {
				return err
			}
			if ext, err = x.getLeaf(true); err != nil {
				return err
			}
		}
		ext.pblk++
		ext.lblk++
		ext.len--
		if err := x.replace(ext); err != nil {
			return err
		}
		return x.fixParents()
	}
	// In the middle: the extent is cut after l's predecessors, the new
	// block and the rest inserted after it; a failure puts it back.
	save := ext
	ext.len = uint32(l - ext.lblk)
	if err := x.replace(ext); err != nil {
		return err
	}
	if phys != 0 {
		if err := x.insert(newExt, true); err != nil {
			if x.goTo(0, save.lblk) == nil {
				x.replace(save)
			}
			return err
		}
	}
	ext.pblk += uint64(ext.len) + 1
	ext.lblk += uint64(ext.len) + 1
	ext.len = save.len - ext.len - 1
	if err := x.insert(ext, true); err != nil {
		if phys != 0 && x.goTo(0, newExt.lblk) == nil {
			x.delete()
		}
		if x.goTo(0, save.lblk) == nil {
			x.replace(save)
		}
		return err
	}
	return nil
}

// extVisit is offered each block of the iteration with its block count
// (-1 for a tree block); it may change *blk and returns iterator bits.
type extVisit func(blk *uint64, blockcnt int64) int

// Flags of the block iterator (BLOCK_FLAG_APPEND,
// BLOCK_FLAG_DEPTH_TRAVERSE).
const (
	iterFlagAppend = 1 << iota
	iterFlagDepth
)

// iterate is the extent part of ext2fs_block_iterate3 over the handle's
// inode. With iterFlagAppend, after the last extent the visitor is
// offered block 0 at the next block counts for as long as it maps one;
// with iterFlagDepth an index entry is offered after its subtree instead
// of before. It returns the visitors' bits with iterError and the
// library's error (nil if none).
func (x *extHandle) iterate(flags int, visit extVisit) (int, error) {
	appendBlocks := flags&iterFlagAppend != 0
	depthFirst := flags&iterFlagDepth != 0
	ret := 0
	var iterErr error
	blockcnt := int64(0)
	op := extOpRoot
	var ext libExtent
	for steps := 0; ; steps++ {
		if steps > extStepBudget {
			break
		}
		var err error
		if op != extOpCurrent {
			ext, err = x.get(op)
		}
		if err != nil {
			if err != ext2fs.ErrExtentNoNext {
				iterErr = err
				break
			}
			if !appendBlocks {
				break
			}
			for k := 0; k < extStepBudget; k++ {
				blk := uint64(0)
				r := visit(&blk, blockcnt)
				ret |= r
				if r&iterChanged == 0 {
					break
				}
				iterErr = x.setBmap(uint64(blockcnt), blk, false)
				blockcnt++
				if iterErr != nil || ret&iterAbort != 0 || blk == 0 {
					break
				}
			}
			break
		}
		op = extOpNext
		blk := ext.pblk
		if ext.flags&extFlagLeaf == 0 {
			if (ext.flags&extFlagSecondVisit != 0) == depthFirst {
				ret |= visit(&blk, -1)
				if ret&iterChanged != 0 {
					ext.pblk = blk
					if iterErr = x.replace(ext); iterErr != nil {
						break
					}
				}
				if ret&iterAbort != 0 {
					break
				}
			}
			continue
		}
		uninit := ext.flags&extFlagUninit != 0
		next, nerr := x.get(op)
		if ext.lblk+uint64(ext.len) <= uint64(blockcnt) {
			continue
		}
		if ext.lblk > uint64(blockcnt) {
			blockcnt = int64(ext.lblk)
		}
		// The library advances the first block by what was visited but
		// counts from the extent's start.
		blk += uint64(blockcnt) - ext.lblk
		blockcnt = int64(ext.lblk)
		stop := false
		for j := uint32(0); j < ext.len; j++ {
			nb := blk
			r := visit(&nb, blockcnt)
			ret |= r
			if r&iterChanged != 0 {
				if iterErr = x.setBmap(uint64(blockcnt), nb, uninit); iterErr != nil {
					stop = true
					break
				}
			}
			if ret&iterAbort != 0 {
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
			op = extOpCurrent
		}
	}
	return ret | iterError, iterErr
}
