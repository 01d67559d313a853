package ext2fs

import (
	"gofsck/internal/ondisk"
)

// Truncating an extent-mapped inode (ext2fs_punch from a block to the end
// of the file) on the library's extent handle (extent.go), for the
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

// PunchExtents is ext2fs_punch_extent(dir, n, start, ~0): the blocks of
// inode dir (held as n) from logical block start on are unmapped and
// freed through fsys.Alloc. An error is one of the handle's on a tree it
// cannot walk; the caller then stops the rebuild before anything is
// written.
func PunchExtents(fsys *Filsys, dir uint32, n ondisk.Inode, start uint64) error {
	x, err := OpenExtent(fsys, dir, n)
	if err != nil {
		return err
	}
	// goto leaves the handle on the extent before start when start is
	// in a hole, and on no extent when the tree cannot be read.
	_ = x.Goto(0, start)
	ext, err := x.Get(ExtentCurrent)
	if err == ErrNoCurrentNode {
		return nil
	}
	if err != nil {
		return err
	}
	var freed uint64
	for steps := 0; ; steps++ {
		if steps > extStepBudget {
			return ErrOpNotSupported
		}
		op := ExtentNext // as EXT2_EXTENT_NEXT_LEAF, through getLeaf
		next := ext.Lblk + uint64(ext.Len)
		var pfree, lfree uint64
		var count uint32
		switch {
		case start <= ext.Lblk:
			// The whole extent goes (the punch has no end).
			pfree, lfree, count = ext.Pblk, ext.Lblk, ext.Len
			ext.Len = 0
		case start >= next:
			// start lies in a hole after this extent.
			goto nextExtent
		default:
			keep := uint32(start - ext.Lblk)
			pfree, lfree, count = ext.Pblk+uint64(keep), ext.Lblk+uint64(keep), ext.Len-keep
			ext.Len = keep
		}
		if ext.Len > 0 {
			if err := x.Replace(ext); err != nil {
				return err
			}
			if err := x.FixParents(); err != nil {
				return err
			}
		} else {
			cur, err := x.Get(ExtentCurrent)
			if err != nil {
				return err
			}
			nextL := cur.Lblk
			nx, err := x.getLeaf(true)
			switch {
			case err == ErrExtentNoNext:
			case err != nil:
				return err
			default:
				nextL = nx.Lblk
			}
			if err := x.Goto(0, cur.Lblk); err != nil {
				return err
			}
			if err := x.Delete(); err != nil {
				return err
			}
			if err := x.FixParents(); err != nil && err != ErrNoCurrentNode {
				return err
			}
			_ = x.Goto(0, nextL)
			op = ExtentCurrent
		}
		freed += punchExtentBlocks(fsys, dir, n, lfree, pfree, count)
	nextExtent:
		if op == ExtentCurrent {
			ext, err = x.Get(ExtentCurrent)
		} else {
			ext, err = x.getLeaf(true)
		}
		if err == ErrExtentNoNext || err == ErrNoCurrentNode {
			break
		}
		if err != nil {
			return err
		}
	}
	return IblkSubBlocks(fsys.FS, n, freed)
}

// punchExtentBlocks is punch_extent_blocks: count blocks from physical
// pfree (logical lfree) are freed. With bigalloc a partial cluster at
// either end is freed only when no other block of its logical cluster is
// still mapped (ext2fs_map_cluster_block). It returns the clusters freed.
func punchExtentBlocks(fsys *Filsys, dir uint32, n ondisk.Inode, lfree, pfree uint64, count uint32) uint64 {
	f := fsys.FS
	if pfree < f.FirstDataBlock || pfree+uint64(count) >= f.BlocksCount {
		return 0 // EXT2_ET_BAD_BLOCK_NUM, which e2fsck's rebuild ignores
	}
	ratio := uint64(1) << f.ClusterBits
	if ratio == 1 {
		for k := uint64(0); k < uint64(count); k++ {
			fsys.Alloc.FreeBlock(pfree + k)
		}
		return uint64(count)
	}
	mask := ratio - 1
	left := uint64(count)
	var freed uint64
	if pfree&mask != 0 {
		if !clusterMapped(fsys, dir, n, lfree) {
			fsys.Alloc.FreeBlock(pfree)
			freed++
		}
		step := min(ratio-pfree&mask, left)
		left -= step
		pfree += step
		lfree += step
	}
	for left > 0 && left >= ratio {
		fsys.Alloc.FreeBlock(pfree)
		freed++
		left -= ratio
		pfree += ratio
		lfree += ratio
	}
	if left > 0 && !clusterMapped(fsys, dir, n, lfree) {
		fsys.Alloc.FreeBlock(pfree)
		freed++
	}
	return freed
}

// clusterMapped is ext2fs_map_cluster_block's answer being a block: some
// other block of l's logical cluster is mapped in the tree as it is now.
func clusterMapped(fsys *Filsys, dir uint32, n ondisk.Inode, l uint64) bool {
	ratio := uint64(1) << fsys.FS.ClusterBits
	base := l &^ (ratio - 1)
	for b := base; b < base+ratio; b++ {
		if b == l {
			continue
		}
		x, err := OpenExtent(fsys, dir, n)
		if err != nil {
			return false
		}
		if x.Goto(0, b) == nil {
			return true
		}
	}
	return false
}
