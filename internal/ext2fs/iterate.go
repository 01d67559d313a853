package ext2fs

import "gofsck/internal/ondisk"

// BlockIterate is ext2fs_block_iterate3 over inode ino, held in memory as
// n: the blocks of an extent-mapped inode (EXTENTS_FL) through an extent
// handle over fsys, those of a block-mapped one with a BlockIter reading
// and writing through fsys.IO. See BlockIter.IterateInode.
func BlockIterate(fsys *Filsys, ino uint32, n ondisk.Inode, flags BlockFlags, fn BlockFunc) (changed bool, err error) {
	it := &BlockIter{FS: fsys.FS, IO: fsys.IO, Flags: flags}
	return it.IterateInode(fsys, ino, n, fn)
}

// IterateInode is ext2fs_block_iterate3 over inode ino (held as n) with
// the iterator's flags. An inode with INLINE_DATA_FL is refused
// (ErrInlineDataCantIterate), a large non-directory under BlockFlagNoLarge
// too (ErrFileTooBig). A block-mapped inode is walked by Iterate, its
// mapping blocks read and written through it.IO. An extent-mapped one is
// walked by the iterator's own extent handle, opened over a copy of
// *fsys (reads, writes and allocations go there) and reused from call to
// call, so that a walk of a tree no deeper than the last allocates
// nothing: fn is called with refBlk and refOffset 0, as the library
// calls it; changed pointers are written by the handle (ExtentHandle.Iterate),
// the inode included, so changed is always false. A handle that cannot
// be opened (a bad root header) maps nothing and is no error, as in the
// library. Opening gives n an empty root (and writes nothing) when
// i_block is all zero, as ext2fs_extent_open2 does, except under
// BlockFlagSkipBadNode, which leaves n alone.
func (it *BlockIter) IterateInode(fsys *Filsys, ino uint32, n ondisk.Inode, fn BlockFunc) (changed bool, err error) {
	if n.Flags()&ondisk.FlagInlineData != 0 {
		return false, ErrInlineDataCantIterate
	}
	if it.Flags&BlockFlagNoLarge != 0 && !n.IsDir() && n.SizeHigh() != 0 {
		return false, ErrFileTooBig
	}
	if n.Flags()&ondisk.FlagExtents == 0 {
		return it.Iterate(n, fn)
	}
	if it.Flags&BlockFlagSkipBadNode != 0 && ondisk.ExtentHeader(n.IBlock()).Verify() != nil {
		return false, nil
	}
	it.fsys = *fsys
	if it.ext.open(&it.fsys, ino, n) != nil {
		// The library's abort_exit: ret has no BLOCK_ERROR, so the
		// handle's error is not returned.
		return false, nil
	}
	_, err = it.ext.Iterate(it.Flags, func(blk *uint64, blockcnt int64) int { return fn(blk, blockcnt, 0, 0) })
	return false, err
}
