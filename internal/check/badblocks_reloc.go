package check

import (
	"encoding/binary"
	"sort"

	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Relocation of group bitmaps at the end of pass 1 (e2fsck's
// handle_fs_bad_blocks and new_table_block): a bitmap found on the
// bad-block list (PR_1_BB_BAD_BLOCK, PR_1_IB_BAD_BLOCK answered yes) gets
// a new block, the first free one in its group (in its flex group, then
// anywhere, with flex_bg) by the blocks pass 1 found in use; the old
// contents are copied there, the descriptor points at it, and every
// superblock and descriptor copy is written at the end of the run.

func init() {
	canRepair(problem.PR_1_BB_BAD_BLOCK, problem.PR_1_IB_BAD_BLOCK)
}

// invalidTables are the groups whose bitmaps are to be relocated
// (e2fsck's invalid_block_bitmap_flag and invalid_inode_bitmap_flag).
type invalidTables struct {
	blockBitmap, inodeBitmap map[uint32]bool
}

// markInvalidBitmap records that group g's block (or inode) bitmap must
// be relocated once pass 1 is over.
func (c *Checker) markInvalidBitmap(g uint32, block bool) {
	if !c.repairing() {
		return
	}
	r := c.repair
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.invalid == nil {
		r.invalid = &invalidTables{blockBitmap: map[uint32]bool{}, inodeBitmap: map[uint32]bool{}}
	}
	if block {
		r.invalid.blockBitmap[g] = true
	} else {
		r.invalid.inodeBitmap[g] = true
	}
}

// relocateInvalidTables is handle_fs_bad_blocks, run from the end of
// pass 1 (serial).
func (c *Checker) relocateInvalidTables() {
	r := c.repair
	r.mu.Lock()
	inv := r.invalid
	r.invalid = nil
	r.mu.Unlock()
	if inv == nil {
		return
	}
	groups := make([]uint32, 0, len(inv.blockBitmap)+len(inv.inodeBitmap))
	seen := map[uint32]bool{}
	for _, m := range []map[uint32]bool{inv.blockBitmap, inv.inodeBitmap} {
		for g := range m {
			if !seen[g] {
				seen[g] = true
				groups = append(groups, g)
			}
		}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i] < groups[j] })
	f := c.fs
	for _, g := range groups {
		if c.abort || c.sink.Aborted() {
			return
		}
		gd := f.Group(g)
		if inv.blockBitmap[g] {
			if b, ok := c.newTableBlock(g, "block bitmap", gd.BlockBitmap()); ok {
				setDescLoc(gd, 0x00, 0x20, b)
			}
		}
		if inv.inodeBitmap[g] {
			if b, ok := c.newTableBlock(g, "inode bitmap", gd.InodeBitmap()); ok {
				setDescLoc(gd, 0x04, 0x24, b)
			}
		}
	}
}

// setDescLoc stores a 64-bit block location split at lo and hi (the high
// half only in 64-byte descriptors).
func setDescLoc(gd ondisk.GroupDesc, lo, hi int, v uint64) {
	binary.LittleEndian.PutUint32(gd[lo:], uint32(v))
	if len(gd) >= hi+4 {
		binary.LittleEndian.PutUint32(gd[hi:], uint32(v>>32))
	}
}

// newTableBlock is new_table_block for one block: it finds the new
// location, reports it, marks it in use and copies the old block there
// (or zeroes it). false when no block was free (the run then stops).
func (c *Checker) newTableBlock(g uint32, name string, old uint64) (uint64, bool) {
	f := c.fs
	first := f.GroupFirstBlock(g)
	last := f.GroupLastBlock(g)
	flex := c.sb.HasIncompat(ondisk.IncompatFlexBG)
	if flex {
		size := uint32(1) << min(c.sb.LogGroupsPerFlex(), 31)
		fg := g / size * size
		first = f.GroupFirstBlock(fg)
		lastG := g | (size - 1)
		if lastG >= f.Groups {
			lastG = f.Groups - 1
		}
		last = f.GroupLastBlock(lastG)
	}
	b, ok := c.freeTableBlocks(first, last, 1)
	if !ok && flex {
		b, ok = c.freeTableBlocks(f.FirstDataBlock, f.BlocksCount, 1)
	}
	p := problem.Problem{Group: g, Blk: old, Str: name}
	if !ok {
		p.Num = 1
		p.Code = problem.PR_1_RELOC_BLOCK_ALLOCATE
		p.Err = "Could not allocate block in ext2 filesystem"
		c.fix(p)
		c.abort = true
		return 0, false
	}
	c.repair.allSupers = true
	p.Blk2 = b
	p.Code = problem.PR_1_RELOC_TO
	if old != 0 {
		p.Code = problem.PR_1_RELOC_FROM_TO
	}
	c.fix(p)
	c.blockFound.Set(f.ClusterOf(b))
	buf := make([]byte, f.BlockSize)
	if old != 0 {
		if err := f.ReadBlock(old, buf); err != nil {
			c.fix(problem.Problem{Code: problem.PR_1_RELOC_READ_ERR, Group: g, Blk: 0, Str: name, Err: "Attempt to read block from filesystem resulted in short read"})
		}
	}
	c.writeBlock(b, buf)
	return b, true
}

// freeTableBlocks is ext2fs_get_free_blocks2 over the blocks pass 1 found
// in use: the first run of num free blocks starting in [start, finish)
// (the search wraps to the first data block when it runs off the end of
// the filesystem, unless finish lies beyond start).
func (c *Checker) freeTableBlocks(start, finish uint64, num uint64) (uint64, bool) {
	f := c.fs
	b := start
	if b == 0 {
		b = f.FirstDataBlock
	}
	if finish == 0 {
		finish = start
	}
	for steps := uint64(0); steps <= f.BlocksCount; steps++ {
		if b+num-1 >= f.BlocksCount {
			if finish > start {
				return 0, false
			}
			b = f.FirstDataBlock
		}
		free := true
		for i := uint64(0); i < num; i++ {
			if c.blockFound.Test(f.ClusterOf(b + i)) {
				free = false
				break
			}
		}
		if free {
			return b, true
		}
		b++
		if b == finish {
			break
		}
	}
	return 0, false
}
