package check

import (
	"slices"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Relocating group metadata (e2fsck's handle_fs_bad_blocks and
// new_table_block). A group's block bitmap, inode bitmap or inode table is
// marked for relocation when check_super_block finds its location outside
// the group (PR_0_*_NOT_GROUP answered yes zeroes it) or zero, when pass 1
// finds it overlapping other metadata (PR_1_*_CONFLICT) or listed as a bad
// block (badblocks_reloc.go). Once pass 1 has mapped
// every block in use, each marked structure gets the first free run of
// blocks in its group (flex group, then anywhere, with flex_bg); the new
// blocks are zeroed, or hold a copy of the old ones when there were any.
// A new inode table makes e2fsck check everything again from the start.
// Repair only: a read-only check never marks anything.

// What a group has to relocate (e2fsck's invalid_*_flag arrays).
const (
	relocBlockBitmap uint8 = 1 << iota
	relocInodeBitmap
	relocInodeTable
)

// relocState is the end-of-pass-1 work the checks before it leave: the
// group metadata to relocate and the resize inode to re-create (e2fsck's
// E2F_FLAG_RESIZE_INODE, resize_repair.go). It lives in the repairState,
// which pass 1's units share.
type relocState struct {
	// groups maps a group to its reloc* bits.
	groups map[uint32]uint8
	// resize asks for the resize inode to be (re)created.
	resize bool
	// restart is set when an inode table moved (E2F_FLAG_RESTART).
	restart bool
}

// markRelocate records that group g's structures in what must move and,
// like e2fsck's invalid_bitmaps, that the bitmaps cannot be trusted until
// they have.
func (c *Checker) markRelocate(g uint32, what uint8) {
	c.repair.mu.Lock()
	r := &c.repair.reloc
	if r.groups == nil {
		r.groups = map[uint32]uint8{}
	}
	r.groups[g] |= what
	c.repair.mu.Unlock()
	c.invalidBitmaps = true
}

// relocating reports whether group g has structures in what to move.
func (c *Checker) relocating(g uint32, what uint8) bool {
	return c.repair.reloc.groups[g]&what != 0
}

// relocatedMeta reports whether a relocation made every superblock and
// descriptor copy to be written (e2fsck's EXT2_FLAG_MASTER_SB_ONLY
// cleared), also before a restart (FlushForRestart).
func (c *Checker) relocatedMeta() bool { return c.repair.allSupers }

// relocateGroupMetadata is handle_fs_bad_blocks: every marked structure,
// group by group (block bitmap, inode bitmap, inode table), gets its new
// place. The bitmaps are trusted again afterwards.
func (c *Checker) relocateGroupMetadata() {
	r := &c.repair.reloc
	if len(r.groups) == 0 {
		return
	}
	groups := make([]uint32, 0, len(r.groups))
	for g := range r.groups {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	f := c.fs
	// A failed allocation aborts the run, but every group is tried
	// first: handle_fs_bad_blocks does not stop.
	for _, g := range groups {
		what := r.groups[g]
		gd := f.Group(g)
		if what&relocBlockBitmap != 0 {
			if b, ok := c.newTableBlock(g, "block bitmap", 1, gd.BlockBitmap()); ok {
				gd.SetBlockBitmap(b)
			}
		}
		if what&relocInodeBitmap != 0 {
			if b, ok := c.newTableBlock(g, "inode bitmap", 1, gd.InodeBitmap()); ok {
				gd.SetInodeBitmap(b)
			}
		}
		if what&relocInodeTable != 0 {
			if b, ok := c.newTableBlock(g, "inode table", uint64(f.InodeBlocksPerGroup), gd.InodeTable()); ok {
				gd.SetInodeTable(b)
			}
			r.restart = true
		}
	}
	r.groups = nil
	c.invalidBitmaps = false
}

// newTableBlock is new_table_block: it finds num free blocks for group
// g's structure name (old is its current location, 0 when there is none),
// reports the move, claims the blocks in the found map and writes them
// (copied from old, or zeroed). It returns false, marking the filesystem
// not valid and aborting the run, when there is no room.
func (c *Checker) newTableBlock(g uint32, name string, num, old uint64) (uint64, bool) {
	f := c.fs
	sb := c.sb
	first := f.GroupFirstBlock(g)
	last := f.GroupLastBlock(g)
	flex := sb.HasIncompat(ondisk.IncompatFlexBG)
	if flex {
		size := uint32(1) << min(sb.LogGroupsPerFlex(), 31)
		first = f.GroupFirstBlock(g / size * size)
		lastGrp := g | (size - 1)
		if lastGrp >= f.Groups {
			lastGrp = f.Groups - 1
		}
		last = f.GroupLastBlock(lastGrp)
	}
	last = min(last, f.BlocksCount-1)
	blk, ok := ext2fs.GetFreeBlocks(f, c.blockFound, first, last, num)
	if !ok && flex {
		blk, ok = ext2fs.GetFreeBlocks(f, c.blockFound, f.FirstDataBlock, f.BlocksCount, num)
	}
	p := problem.Problem{Group: g, Blk: old, Str: name}
	if !ok {
		p.Code, p.Num, p.Err = problem.PR_1_RELOC_BLOCK_ALLOCATE, num, string(ext2fs.ErrBlockAllocFail)
		c.fix(p)
		c.unmarkValid()
		c.abort = true
		return 0, false
	}
	c.repair.allSupers = true
	p.Code, p.Blk2 = problem.PR_1_RELOC_TO, blk
	if old != 0 {
		p.Code = problem.PR_1_RELOC_FROM_TO
	}
	c.fix(p)
	buf := make([]byte, f.BlockSize)
	for i := uint64(0); i < num; i++ {
		c.blockFound.Set(f.ClusterOf(blk + i))
		clear(buf)
		if old != 0 {
			if old+i >= f.BlocksCount || f.ReadBlock(old+i, buf) != nil {
				// What the library's read leaves in the buffer is not
				// defined; the block is written zeroed.
				clear(buf)
				c.fix(problem.Problem{Code: problem.PR_1_RELOC_READ_ERR, Blk: i, Str: name, Err: string(ext2fs.ErrShortRead)})
			}
		}
		c.writeBlock(blk+i, buf)
	}
	return blk, true
}

// holdRepairBlocks keeps free the blocks e2fsck reserves at pass 1's end
// for re-creating the root directory and /lost+found when pass 1 did not
// find them (reserve_block_for_root_repair and _lnf_repair: the first free
// blocks); the allocations of pass 1's end go around them. The returned
// function releases them again (pass 3 allocates from the same start).
func (c *Checker) holdRepairBlocks() (release func()) {
	f := c.fs
	var held []uint64
	hold := func() {
		if b, ok := ext2fs.GetFreeBlocks(f, c.blockFound, f.FirstDataBlock, f.BlocksCount, 1); ok {
			cl := f.ClusterOf(b)
			c.blockFound.Set(cl)
			held = append(held, cl)
		}
	}
	if !c.inodeUsed.Test(ondisk.RootIno) {
		hold()
	}
	if _, found := c.lookupName(ondisk.RootIno, "lost+found"); !found {
		hold()
	}
	return func() {
		for _, cl := range held {
			c.blockFound.Clear(cl)
		}
	}
}
