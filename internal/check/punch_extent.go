package check

import (
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
)

// Truncating an extent-mapped inode (ext2fs_punch from a block to the end
// of the file) on the library's extent handle (pass1e_handle.go), for the
// tail of a directory that pass 3A rebuilt smaller.
//
// The punch walks the leaf extents from the one holding start (or the
// last one before it) to the end: an extent that starts before start is
// cut to end there (replace, then fix_parents); any other is deleted —
// the handle moves back to it after looking up the next leaf extent, so
// the delete shifts the entries after it down a slot, a node left empty
// goes from its parent and is freed, and the start of a node whose first
// entry went is carried up by fix_parents. Every node the handle changes
// is written as it changes, so a tree block freed later keeps what was
// last written to it (one entry fewer than it had); these bytes are what
// make the images the same as e2fsck's. Data blocks are freed as
// punch_extent_blocks frees them, and i_blocks lowered by their count at
// the end.

// punchExtents is ext2fs_punch_extent(dir, n, start, ~0). An error is
// one of the handle's on a tree it cannot walk; the caller then stops the
// rebuild before anything is written.
func (c *Checker) punchExtents(dir uint32, n ondisk.Inode, start uint64) error {
	x, err := c.openExtHandle(dir, n)
	if err != nil {
		return err
	}
	// goto leaves the handle on the extent before start when start is
	// in a hole, and on no extent when the tree cannot be read.
	_ = x.goTo(0, start)
	ext, err := x.get(extOpCurrent)
	if err == ext2fs.ErrNoCurrentNode {
		return nil
	}
	if err != nil {
		return err
	}
	var freed uint64
	for steps := 0; ; steps++ {
		if steps > extStepBudget {
			return ext2fs.ErrOpNotSupported
		}
		op := extOpNext // as EXT2_EXTENT_NEXT_LEAF, through getLeaf
		next := ext.lblk + uint64(ext.len)
		var pfree, lfree uint64
		var count uint32
		switch {
		case start <= ext.lblk:
			// The whole extent goes (the punch has no end).
			pfree, lfree, count = ext.pblk, ext.lblk, ext.len
			ext.len = 0
		case start >= next:
			// start lies in a hole after this extent.
			goto nextExtent
		default:
			keep := uint32(start - ext.lblk)
			pfree, lfree, count = ext.pblk+uint64(keep), ext.lblk+uint64(keep), ext.len-keep
			ext.len = keep
		}
		if ext.len > 0 {
			if err := x.replace(ext); err != nil {
				return err
			}
			if err := x.fixParents(); err != nil {
				return err
			}
		} else {
			cur, err := x.get(extOpCurrent)
			if err != nil {
				return err
			}
			nextL := cur.lblk
			nx, err := x.getLeaf(true)
			switch {
			case err == ext2fs.ErrExtentNoNext:
			case err != nil:
				return err
			default:
				nextL = nx.lblk
			}
			if err := x.goTo(0, cur.lblk); err != nil {
				return err
			}
			if err := x.delete(); err != nil {
				return err
			}
			if err := x.fixParents(); err != nil && err != ext2fs.ErrNoCurrentNode {
				return err
			}
			_ = x.goTo(0, nextL)
			op = extOpCurrent
		}
		freed += c.punchExtentBlocks(dir, n, lfree, pfree, count)
	nextExtent:
		if op == extOpCurrent {
			ext, err = x.get(extOpCurrent)
		} else {
			ext, err = x.getLeaf(true)
		}
		if err == ext2fs.ErrExtentNoNext || err == ext2fs.ErrNoCurrentNode {
			break
		}
		if err != nil {
			return err
		}
	}
	return iblkAdjust(c, n, freed, false)
}

// punchExtentBlocks is punch_extent_blocks: count blocks from physical
// pfree (logical lfree) are freed. With bigalloc a partial cluster at
// either end is freed only when no other block of its logical cluster is
// still mapped (ext2fs_map_cluster_block). It returns the clusters freed.
func (c *Checker) punchExtentBlocks(dir uint32, n ondisk.Inode, lfree, pfree uint64, count uint32) uint64 {
	f := c.fs
	if pfree < f.FirstDataBlock || pfree+uint64(count) >= f.BlocksCount {
		return 0 // EXT2_ET_BAD_BLOCK_NUM, which e2fsck's rebuild ignores
	}
	ratio := uint64(1) << f.ClusterBits
	if ratio == 1 {
		for k := uint64(0); k < uint64(count); k++ {
			c.releaseBlock(pfree + k)
		}
		return uint64(count)
	}
	mask := ratio - 1
	left := uint64(count)
	var freed uint64
	if pfree&mask != 0 {
		if !c.clusterMapped(dir, n, lfree) {
			c.releaseBlock(pfree)
			freed++
		}
		step := min(ratio-pfree&mask, left)
		left -= step
		pfree += step
		lfree += step
	}
	for left > 0 && left >= ratio {
		c.releaseBlock(pfree)
		freed++
		left -= ratio
		pfree += ratio
		lfree += ratio
	}
	if left > 0 && !c.clusterMapped(dir, n, lfree) {
		c.releaseBlock(pfree)
		freed++
	}
	return freed
}

// clusterMapped is ext2fs_map_cluster_block's answer being a block: some
// other block of l's logical cluster is mapped in the tree as it is now.
func (c *Checker) clusterMapped(dir uint32, n ondisk.Inode, l uint64) bool {
	ratio := uint64(1) << c.fs.ClusterBits
	base := l &^ (ratio - 1)
	for b := base; b < base+ratio; b++ {
		if b == l {
			continue
		}
		x, err := c.openExtHandle(dir, n)
		if err != nil {
			return false
		}
		if x.goTo(0, b) == nil {
			return true
		}
	}
	return false
}
