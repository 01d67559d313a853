package ext2fs

import "gofsck/internal/ondisk"

// Mapping one logical block of an inode to its physical block
// (ext2fs_bmap2), allocating it when asked (BMAP_ALLOC), as
// ext2fs_file_write maps each block it writes.
//
// An extent-mapped inode is looked up and changed through the extent
// handle of extent.go: a hole gets the block that another block of its
// logical cluster implies (bigalloc), else a new block whose goal is the
// block of the logical block before it, and is then mapped by
// ExtentHandle.SetBmap, which splits full nodes as the library does. A
// block-mapped inode's direct slots take as goal the slot before them
// (for slot 0 the inode's goal); a missing indirect block is allocated
// with the slot before it as goal, and an entry of an indirect block with
// the entry before it (for entry 0 the indirect block itself). A new
// indirect block is zeroed and every one that changes is written through
// the Filsys's Writer at once, as ext2fs_alloc_block and block_ind_bmap
// do; a new data block is not (the caller writes it whole). The blocks
// allocated are added to i_blocks and the inode is written, once per
// call.

// BmapFlags are ext2fs_bmap2's BMAP_* options.
type BmapFlags int

// BmapAlloc fills a hole with a new block (BMAP_ALLOC).
const BmapAlloc BmapFlags = 1

// Bmap2 is ext2fs_bmap2 on inode ino, held in memory as n: the physical
// block of logical block lblk, 0 for a hole (an uninitialised extent's
// block is returned like any other). With BmapAlloc a hole is filled
// through fsys.Alloc and n changed and written; ErrBlockAllocFail when
// the allocator has no block. A block past what the inode's map can
// address is ErrFileTooBig; errors of the extent handle are returned as
// they come.
func Bmap2(fsys *Filsys, ino uint32, n ondisk.Inode, lblk uint64, flags BmapFlags) (uint64, error) {
	var allocated uint64
	var pblk uint64
	var err error
	if n.Flags()&ondisk.FlagExtents != 0 {
		var x *ExtentHandle
		if x, err = OpenExtent(fsys, ino, n); err != nil {
			return 0, err
		}
		pblk, err = extentBmap(fsys, x, lblk, flags, &allocated)
	} else {
		pblk, err = blockBmap(fsys, ino, n, lblk, flags, &allocated)
	}
	if err == nil && allocated > 0 {
		err = IblkAddBlocks(fsys.FS, n, allocated)
		fsys.IO.WriteInode(ino, n)
	}
	return pblk, err
}

// extentLookup is the physical block of lblk in x's tree, 0 for a hole.
func extentLookup(x *ExtentHandle, lblk uint64) (uint64, error) {
	if err := x.Goto(0, lblk); err != nil {
		if err == ErrExtentNotFound {
			return 0, nil
		}
		return 0, err
	}
	ext, err := x.Get(ExtentCurrent)
	if err != nil {
		return 0, err
	}
	return ext.Pblk + (lblk - ext.Lblk), nil
}

// extentBmap is extent_bmap: lblk looked up in x's tree and, with
// BmapAlloc, a hole mapped to the implied cluster's block or a new one.
func extentBmap(fsys *Filsys, x *ExtentHandle, lblk uint64, flags BmapFlags, allocated *uint64) (uint64, error) {
	if lblk >= 1<<32 {
		return 0, ErrFileTooBig
	}
	pblk, err := extentLookup(x, lblk)
	if err != nil || pblk != 0 || flags&BmapAlloc == 0 {
		return pblk, err
	}
	f := fsys.FS
	mask := uint64(1)<<f.ClusterBits - 1
	// implied_cluster_alloc: another block of lblk's logical cluster
	// already has a physical cluster.
	if mask != 0 {
		base := lblk &^ mask
		for i := uint64(0); i <= mask && pblk == 0; i++ {
			if base+i == lblk {
				continue
			}
			if p, err := extentLookup(x, base+i); err == nil && p != 0 {
				pblk = p - i + (lblk - base)
			}
		}
	}
	if pblk == 0 {
		// The goal is the block before lblk (none for block 0); a tree
		// the lookup cannot walk gives the inode's goal instead.
		var goal uint64
		if lblk > 0 {
			if goal, err = extentLookup(x, lblk-1); err != nil {
				goal = FindInodeGoal(f, x.ino, x.n, uint32(lblk))
			}
		}
		blk, ok := fsys.Alloc.AllocBlock(goal)
		if !ok {
			return 0, ErrBlockAllocFail
		}
		*allocated++
		pblk = blk&^mask + lblk&mask
	}
	if err := x.SetBmap(lblk, pblk, false); err != nil {
		return 0, err
	}
	return pblk, nil
}

// blockBmap is ext2fs_bmap2's walk of a block-mapped inode.
func blockBmap(fsys *Filsys, ino uint32, n ondisk.Inode, lblk uint64, flags BmapFlags, allocated *uint64) (uint64, error) {
	f := fsys.FS
	alloc := func(goal uint64) (uint64, error) {
		blk, ok := fsys.Alloc.AllocBlock(goal)
		if !ok {
			return 0, ErrBlockAllocFail
		}
		*allocated++
		return blk, nil
	}
	if lblk < ondisk.NDirBlocks {
		pblk := uint64(n.Block(int(lblk)))
		if pblk != 0 || flags&BmapAlloc == 0 {
			return pblk, nil
		}
		var goal uint64
		if lblk > 0 {
			goal = uint64(n.Block(int(lblk - 1)))
		} else {
			goal = FindInodeGoal(f, ino, n, 0)
		}
		blk, err := alloc(goal)
		if err != nil {
			return 0, err
		}
		n.SetBlock(int(lblk), uint32(blk))
		return blk, nil
	}
	per := uint64(f.BlockSize / 4)
	rel := lblk - ondisk.NDirBlocks
	span := per
	for level := 1; level <= 3; level++ {
		if rel >= span {
			rel -= span
			span *= per
			continue
		}
		slot := ondisk.IndBlock - 1 + level
		blk := uint64(n.Block(slot))
		if blk == 0 {
			if flags&BmapAlloc == 0 {
				return 0, nil
			}
			b, err := alloc(uint64(n.Block(slot - 1)))
			if err != nil {
				return 0, err
			}
			fsys.IO.WriteBlock(b, make([]byte, f.BlockSize))
			n.SetBlock(slot, uint32(b))
			blk = b
		}
		buf := make([]byte, f.BlockSize)
		for l := level; l >= 1; l-- {
			span /= per
			var err error
			if blk, err = indBmap(fsys, blk, int(rel/span), l > 1, flags, buf, alloc); err != nil || blk == 0 {
				return blk, err
			}
			rel %= span
		}
		return blk, nil
	}
	return 0, ErrFileTooBig
}

// indBmap is block_ind_bmap: entry nr of indirect block ind, allocated
// (goal the entry before it, or ind for entry 0) and written into ind
// when it is a hole and flags has BmapAlloc; the new block is zeroed when
// mapping says it is itself an indirect block. buf is a block-sized
// scratch buffer. ind past the end of the filesystem is ErrBadIndBlock;
// any other block number is the Writer's ReadBlock to refuse.
func indBmap(fsys *Filsys, ind uint64, nr int, mapping bool, flags BmapFlags, buf []byte, alloc func(uint64) (uint64, error)) (uint64, error) {
	f := fsys.FS
	if ind >= f.BlocksCount {
		return 0, ErrBadIndBlock
	}
	if err := fsys.IO.ReadBlock(ind, buf); err != nil {
		return 0, err
	}
	m := ondisk.MapBlock(buf)
	b := uint64(m.Ptr(nr))
	if b != 0 || flags&BmapAlloc == 0 {
		return b, nil
	}
	goal := ind
	if nr > 0 {
		goal = uint64(m.Ptr(nr - 1))
	}
	b, err := alloc(goal)
	if err != nil {
		return 0, err
	}
	if mapping {
		fsys.IO.WriteBlock(b, make([]byte, f.BlockSize))
	}
	m.SetPtr(nr, uint32(b))
	fsys.IO.WriteBlock(ind, buf)
	return b, nil
}
