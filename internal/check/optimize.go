package check

import (
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// After pass 3A rewrote a directory, e2fsck looks at its extent tree again
// (e2fsck_check_rebuild_extents) and, since allocation is open by then,
// rebuilds it at once when it could be shallower or narrower: a directory
// that shrank may leave an index level it no longer needs. -D, which
// rebuilds every directory, meets this on any directory the kernel grew.

// rehashCheckExtents is e2fsck_check_rebuild_extents for directory dir
// after its rebuild. It returns the rebuild's error, if any.
func (c *Checker) rehashCheckExtents(dir uint32) error {
	f := c.fs
	n := c.readFullInode(dir)
	if n.Flags()&ondisk.FlagExtents == 0 {
		return nil
	}
	m := make(ondisk.Inode, len(n))
	copy(m, n)
	x, err := c.openExtHandle(dir, m)
	if err != nil {
		return nil
	}
	force := false
	depth := x.Info().MaxDepth
	if maxD := maxExtentDepth(f.BlockSize); depth > maxD {
		force = c.fix(problem.Problem{Code: problem.PR_1_EXTENT_BAD_MAX_DEPTH, Ino: dir,
			Blk: uint64(depth), Blk2: uint64(maxD)})
	}
	// Entries and capacity per level, as the library's handle visits
	// the nodes; a partly filled non-root node counts one entry less
	// (e2fsck's allowance for the block an append split leaves).
	var num, max [maxExtentDepthCount]int64
	ext, err := x.Get(ext2fs.ExtentRoot)
	for steps := 0; err == nil && steps < 1<<24; steps++ {
		info := x.Info()
		if lv := info.CurrLevel; info.CurrEntry == 1 && ext.Flags&ext2fs.ExtentFlagSecondVisit == 0 && !force && lv < maxExtentDepthCount {
			num[lv] += int64(info.NumEntries)
			max[lv] += int64(info.MaxEntries)
			if lv > 0 && info.NumEntries < info.MaxEntries {
				max[lv]--
			}
		}
		if ext.Flags&ext2fs.ExtentFlagLeaf != 0 {
			if ext, err = x.Get(ext2fs.ExtentLastSib); err != nil {
				break
			}
		}
		ext, err = x.Get(ext2fs.ExtentNext)
	}
	code, lvl := problem.Code(0), 0
	perBlock := int64((f.BlockSize - ondisk.ExtentHeaderSize) / ondisk.ExtentEntrySize)
	switch {
	case force:
	case depth > maxExtentDepthCount-1:
		code, lvl = problem.PR_1E_CAN_COLLAPSE_EXTENT_TREE, depth
	default:
	levels:
		for i := 0; i <= depth; i++ {
			if max[i]-num[i] > perBlock {
				code, lvl = problem.PR_1E_CAN_NARROW_EXTENT_TREE, i
				break
			}
			for j := 0; j < i; j++ {
				if num[i] < max[j] {
					code, lvl = problem.PR_1E_CAN_COLLAPSE_EXTENT_TREE, i
					break levels
				}
			}
		}
		if code == 0 {
			return nil
		}
	}
	if !force && !c.fix(problem.Problem{Code: code, Ino: dir, Blk: uint64(lvl)}) {
		return nil
	}
	if !c.repairing() || !c.sb.HasIncompat(ondisk.IncompatExtents) ||
		(dir != ondisk.RootIno && dir < c.fs.FirstIno) {
		return nil
	}
	// rebuild_extent_tree, at once.
	n = c.readFullInode(dir)
	if n.LinksCount() == 0 || n.Flags()&ondisk.FlagInlineData != 0 {
		return nil
	}
	list, freed, err := c.loadExtentList(dir, n, nil)
	if err != nil {
		return err
	}
	return c.rewriteExtents(dir, n, list, freed)
}
