package ext2fs

import "gofsck/internal/ondisk"

// DirExpander is expand_dir_proc's iteration, shared by the library's
// ext2fs_expand_dir (Lib) and e2fsck's e2fsck_expand_directory: the
// directory's block map is walked with BLOCK_FLAG_APPEND, each unmapped
// slot gets a block (the one after the last block when both lie in one
// cluster, else a new one from Fsys.Alloc near the last), a new data
// block is written empty by NewDirBlock and a new mapping block zeroed
// through IO.
type DirExpander struct {
	// Fsys allocates the new blocks and writes the extent handle's
	// tree blocks (and the inode when a node splits).
	Fsys *Filsys
	// IO reads and writes the block-mapped iterator's mapping blocks and
	// zeroes the new ones.
	IO BlockIO
	// NewDirBlock writes an empty directory block at blk.
	NewDirBlock func(blk uint64)
	// Dir is the directory's inode number.
	Dir uint32
	// Guaranteed stops the walk at the first logical block at or past it
	// (es.guaranteed_size; 0 for none).
	Guaranteed int64
	// Num is es.num: the walk stops when it reaches 0 (each new
	// directory block takes one off), so 0 (rehash's -1) never stops it.
	Num int
	// Lib is the library's expand_dir_proc: the goal follows data blocks
	// only, where e2fsck's follows mapping blocks too.
	Lib bool
	// NewBlocks counts the blocks allocated, mapping blocks included;
	// LastBlock is the last logical block seen.
	NewBlocks, LastBlock int64

	lastBlk uint64
	err     error
}

// Expand runs the iteration over the directory held as n, which is
// changed in place (the caller sets i_size and i_blocks and writes it).
// The block-mapped iterator's own error is ignored, as
// e2fsck_expand_directory ignores it; an allocation failure is
// ErrBlockAllocFail.
func (es *DirExpander) Expand(n ondisk.Inode) error {
	if n.Flags()&ondisk.FlagExtents == 0 {
		it := &BlockIter{FS: es.Fsys.FS, IO: es.IO, Flags: BlockFlagAppend}
		_, _ = it.Iterate(n, func(blk *uint64, blockcnt int64, _ uint64, _ int) int { return es.visit(blk, blockcnt) })
		return es.err
	}
	x, err := OpenExtent(es.Fsys, es.Dir, n)
	if err != nil {
		return ErrDirCorrupted
	}
	_, err = x.Iterate(BlockFlagAppend, es.visit)
	if es.err != nil {
		return es.err
	}
	return err
}

// visit is expand_dir_proc for one slot.
func (es *DirExpander) visit(blk *uint64, blockcnt int64) int {
	f := es.Fsys.FS
	if es.Guaranteed != 0 && blockcnt >= es.Guaranteed {
		return BlockAbort
	}
	if blockcnt > 0 {
		es.LastBlock = blockcnt
	}
	if *blk != 0 {
		if !es.Lib || blockcnt >= 0 {
			es.lastBlk = *blk
		}
		return 0
	}
	var nb uint64
	if blockcnt != 0 && f.ClusterOf(es.lastBlk) == f.ClusterOf(es.lastBlk+1) {
		nb = es.lastBlk + 1
	} else {
		var ok bool
		if nb, ok = es.Fsys.Alloc.AllocBlock(es.lastBlk &^ (uint64(1)<<f.ClusterBits - 1)); !ok {
			es.err = ErrBlockAllocFail
			return BlockAbort
		}
		es.NewBlocks++
	}
	if !es.Lib || blockcnt >= 0 {
		es.lastBlk = nb
	}
	if blockcnt > 0 {
		es.NewDirBlock(nb)
		es.Num--
	} else {
		es.IO.WriteBlock(nb, make([]byte, f.BlockSize))
	}
	*blk = nb
	if es.Num == 0 {
		return BlockChanged | BlockAbort
	}
	return BlockChanged
}
