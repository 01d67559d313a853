package ext2fs

import (
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// BlockFlags are ext2fs_block_iterate3's BLOCK_FLAG_* options.
type BlockFlags int

// The library's flags, with its values, and gofsck's own above them.
const (
	// BlockFlagAppend (BLOCK_FLAG_APPEND) calls back for unmapped slots
	// too: every direct slot, every slot of a mapped indirect block, and
	// a zero indirect, doubly or triply indirect pointer (which maps
	// nothing below it).
	BlockFlagAppend BlockFlags = 1
	// BlockFlagHole (BLOCK_FLAG_HOLE) is BLOCK_FLAG_APPEND.
	BlockFlagHole = BlockFlagAppend
	// BlockFlagDepthTraverse (BLOCK_FLAG_DEPTH_TRAVERSE) calls back for a
	// mapping block after the blocks it maps, not before; a mapping
	// block whose walk aborted is not called back at all.
	BlockFlagDepthTraverse BlockFlags = 2
	// BlockFlagDataOnly (BLOCK_FLAG_DATA_ONLY) never calls back for
	// mapping blocks.
	BlockFlagDataOnly BlockFlags = 4
	// BlockFlagReadOnly (BLOCK_FLAG_READ_ONLY) turns a BLOCK_CHANGED
	// result into ErrROBlockIterate, ending the walk.
	BlockFlagReadOnly BlockFlags = 8
	// BlockFlagNoLarge (BLOCK_FLAG_NO_LARGE) refuses a non-directory
	// with i_size_high set (ErrFileTooBig).
	BlockFlagNoLarge BlockFlags = 0x10

	// BlockFlagStopOnError is gofsck's, not the library's: the first
	// BLOCK_ERROR (a mapping block out of range or unreadable) is also a
	// BLOCK_ABORT, ending the whole walk with no post-order callback for
	// the blocks above it, where the library goes on with the next
	// pointer. For callers that give up on a block map they cannot
	// follow.
	BlockFlagStopOnError BlockFlags = 0x10000
	// BlockFlagSkipBadNode is gofsck's, for an extent-mapped inode: a
	// root whose header is bad maps nothing (no error, and the inode is
	// not given an empty root); a child node that cannot be read or is
	// out of range, whose header is bad, that has no entries, that is
	// one of its own ancestors or that lies more than seven levels below
	// the root maps nothing either: its index entry is still visited and
	// the walk goes on with the next one, where the library ends the walk
	// with the error. A child whose checksum fails still ends it
	// (ErrExtentCsumInvalid, unless BlockFlagIgnoreCsum). For the
	// checker's read-only walks, which list what a damaged tree still
	// maps.
	BlockFlagSkipBadNode BlockFlags = 0x20000
	// BlockFlagIgnoreCsum is the library's EXT2_FLAG_IGNORE_CSUM_ERRORS
	// (a filesystem flag there) for one walk: extent tree blocks are not
	// checksummed.
	BlockFlagIgnoreCsum BlockFlags = 0x40000
)

// The callback's results (BLOCK_CHANGED, BLOCK_ABORT, BLOCK_ERROR).
const (
	// BlockChanged says the callback changed *blk: the iterator stores
	// it and writes the block (or inode) holding the pointer.
	BlockChanged = 1
	// BlockAbort ends the walk.
	BlockAbort = 2
	// BlockError is the iterator's own: a mapping block failed.
	BlockError = 4
)

// The logical block numbers (blockcnt) given for mapping blocks
// (BLOCK_COUNT_IND, _DIND, _TIND).
const (
	BlockCountInd  = -1
	BlockCountDind = -2
	BlockCountTind = -3
)

// BlockFunc is the iterator's callback for one pointer: *blk is the block
// (0 for an unmapped slot under BlockFlagAppend), blockcnt its logical
// number or a BlockCount* value, refBlk the mapping block holding the
// pointer (0 for i_block) and refOffset the pointer's byte offset in it
// (its index for i_block). It may change *blk; a change is kept in the
// iterator's copy, and written only when the result has BlockChanged.
type BlockFunc func(blk *uint64, blockcnt int64, refBlk uint64, refOffset int) int

// BlockIO is how the iterator reads and writes mapping blocks
// (ext2fs_read_ind_block, ext2fs_write_ind_block). Writer satisfies it.
// The caller's ReadBlock decides what a failed read is: its error fails
// the mapping block (the error is the walk's result unless a later
// mapping block is read or written successfully); a reader that fills
// buf with zeros and returns nil makes the block map nothing, as
// e2fsck's read-error handler does when the error is ignored.
type BlockIO interface {
	ReadBlock(blk uint64, buf []byte) error
	WriteBlock(blk uint64, data []byte)
}

var _ BlockIO = Writer(nil)

// BlockIter is ext2fs_block_iterate3 for block-mapped inodes: it walks
// i_block's twelve direct pointers, then the indirect, doubly and triply
// indirect trees, calling back with each pointer, in the library's
// order and with its quirks:
//
//   - A mapping block is called back before the blocks it maps (after
//     them with BlockFlagDepthTraverse, never with BlockFlagDataOnly).
//   - Unmapped slots are skipped (called back with BlockFlagAppend),
//     and the logical count advances over what they would map.
//   - A mapping block outside [s_first_data_block, blocks_count) fails
//     with BadMapBlock(level); one whose read fails, with the read's
//     error. Either way the logical count does not advance over it, so
//     later blocks are numbered as the library numbers them; inside a
//     doubly or triply indirect block the failure ends the walk of that
//     block, but the top level goes on with the next pointer. Each
//     mapping block read or written sets the pending error again, so a
//     later good read clears an earlier failure (ctx->errcode), and
//     the walk fails only when the last one set stands.
//   - A pointer the callback changes is written back with its mapping
//     block when the result has BlockChanged (the block is written even
//     if the walk then aborts), and into the caller's inode (Iterate
//     reports it; the caller writes the inode, as the library does).
//   - A callback that zeroes *blk without BlockChanged clears the
//     pointer in the iterator's copy only: a zeroed mapping block is
//     then not descended into.
//   - In a doubly or triply indirect block without BlockFlagAppend, the
//     ref offset does not advance over an unmapped slot (the library's
//     "continue" skips its offset += 4).
//
// Not modelled: the Hurd translator block (BLOCK_COUNT_TRANSLATOR; the
// checker does not visit it). Iterate reads i_block as a block map
// whatever EXTENTS_FL says; IterateInode (and BlockIterate) dispatch on
// it, as ext2fs_block_iterate3 does.
//
// The checker had this walk written out again in eleven places. What
// each did its own way, and how it is said now (flags, callback, BlockIO):
//
//   - check_blocks (pass 1, blocks.go, process_block): pre-order,
//     BLOCK_FLAG_HOLE for a directory (its unmapped block 0 is listed);
//     cleared pointers written back (BLOCK_CHANGED) or cleared in the copy
//     only (a pointer in a metadata block); reads through the pass's
//     read-error handler, written uncounted; the library's errcode and
//     bcount quirks; a doubly or triply indirect block's children
//     prefetched (Prefetch).
//   - pass 1B and the read-only walks built on it (dup.go's
//     iterateBlocksErr: delete_file, dir_repair, dirwalk, pass3_repair,
//     quota_repair): pre-order, BLOCK_FLAG_READ_ONLY; an unreadable
//     mapping block maps nothing (the reader zeroes it); i_block read as
//     a block map even with INLINE_DATA_FL set (the caller clears the flag
//     on a copy).
//   - clone_file (pass 1D, dupclone.go): pre-order, cloned pointers
//     written back, a cloned mapping block read from its new place;
//     unreadable blocks map nothing. It kept an out-of-range block's error
//     even after a later good read; it now follows the library.
//   - inode 1 in pass 1 (badblocks_pass1.go): pre-order; any read failure
//     is EXT2_ET_SHORT_READ (the BlockIO's error); changes written only
//     when repairing (the BlockIO); a cleared mapping block does not
//     abort; a visit budget (callback).
//   - the bad-block list update (badblocks.go): three walks of inode 1,
//     pre-order clearing out-of-range pointers, a read-only listing, and a
//     BLOCK_FLAG_DEPTH_TRAVERSE release; each stops at the first failure
//     (BlockFlagStopOnError) with a message of its own.
//   - the orphan inodes (orphan.go, orphan_repair.go): the data blocks
//     with BLOCK_FLAG_DATA_ONLY (and HOLE for the quota's holes); the
//     release with BLOCK_FLAG_DEPTH_TRAVERSE, released pointers written
//     through the repair path; both give up on a map they cannot follow
//     (BlockFlagStopOnError).
//   - the journal inode (journal.go): BLOCK_FLAG_HOLE, the callback
//     aborting at the first zero or unusable block, an unreadable mapping
//     block ending the walk (BlockFlagStopOnError).
//   - rebuild_extent_tree's find_blocks (pass 1E, pass1e.go):
//     BLOCK_FLAG_READ_ONLY, mapping blocks freed and counted; an
//     out-of-range one is skipped by the callback (cleared in the copy)
//     and an unreadable one maps nothing, so its blocks keep their places
//     in the count.
//   - expand_directory (pass 3 and the rehash, rehash.go):
//     BLOCK_FLAG_APPEND, new mapping blocks read back and filled. The copy
//     stopped at an unreadable mapping block and skipped an out-of-range
//     one; it now follows the library, whose error expand_directory
//     ignores.
//
// A BlockIter holds one buffer per level and is reused from inode to
// inode; it is not safe for concurrent use.
type BlockIter struct {
	FS *fs.FS
	IO BlockIO
	// Flags are the walk's BLOCK_FLAG_* options.
	Flags BlockFlags
	// Prefetch, when set, is given each nonzero pointer of a doubly or
	// triply indirect block as soon as that block is read (the
	// children are read one after another below it).
	Prefetch func(blk uint64)

	// ext and fsys are IterateInode's extent handle and its filesystem,
	// reused from inode to inode.
	ext  ExtentHandle
	fsys Filsys

	bcount  int64
	errcode error
	bufs    [4][]byte // one mapping block per level, 1..3
	// ptrs[level] is the pointer a walk of that level is given (0: a
	// data pointer), what the callback's *blk points to: held here, the
	// walk allocates nothing.
	ptrs [4]uint64
}

// Iterate walks n's block map, calling fn for each pointer. n's i_block
// is updated in place with the pointers fn changed; changed reports
// whether the library would write the inode (a BlockChanged result for
// an i_block pointer). err is the library's return: the pending error
// when a mapping block failed, else nil.
func (it *BlockIter) Iterate(n ondisk.Inode, fn BlockFunc) (changed bool, err error) {
	if n.Flags()&ondisk.FlagInlineData != 0 {
		return false, ErrInlineDataCantIterate
	}
	if it.Flags&BlockFlagNoLarge != 0 && !n.IsDir() && n.SizeHigh() != 0 {
		return false, ErrFileTooBig
	}
	it.bcount, it.errcode = 0, nil
	ret := 0
	for i := 0; i < ondisk.NDirBlocks; i, it.bcount = i+1, it.bcount+1 {
		b := &it.ptrs[0]
		if *b = uint64(n.Block(i)); *b == 0 && it.Flags&BlockFlagAppend == 0 {
			continue
		}
		ret |= fn(b, it.bcount, 0, i)
		n.SetBlock(i, uint32(*b))
		if ret&BlockAbort != 0 {
			return it.done(ret)
		}
	}
	if r, bad := it.roViolation(ret); bad {
		return it.done(r)
	}
	per := int64(it.FS.BlockSize / 4)
	for level := 1; level <= 3; level++ {
		slot := ondisk.IndBlock - 1 + level
		b := &it.ptrs[level]
		if *b = uint64(n.Block(slot)); *b == 0 && it.Flags&BlockFlagAppend == 0 {
			it.bcount += span(per, level)
			continue
		}
		ret |= it.walk(b, level, 0, slot, fn)
		n.SetBlock(slot, uint32(*b))
		if ret&BlockAbort != 0 {
			break
		}
	}
	return it.done(ret)
}

// done is the library's abort_exit: the inode is written when an i_block
// pointer changed, and the pending error is the result of a failed walk.
func (it *BlockIter) done(ret int) (bool, error) {
	if ret&BlockError != 0 {
		return ret&BlockChanged != 0, it.errcode
	}
	return ret&BlockChanged != 0, nil
}

// roViolation is check_for_ro_violation: under BlockFlagReadOnly a
// change fails the walk, and bad says the caller returns ret at once.
func (it *BlockIter) roViolation(ret int) (_ int, bad bool) {
	if it.Flags&BlockFlagReadOnly != 0 && ret&BlockChanged != 0 {
		it.errcode = ErrROBlockIterate
		return ret | BlockAbort | BlockError, true
	}
	return ret, false
}

// failed adds BlockError to ret for a failed mapping block, and
// BlockAbort under BlockFlagStopOnError.
func (it *BlockIter) failed(ret int) int {
	if it.Flags&BlockFlagStopOnError != 0 {
		return ret | BlockError | BlockAbort
	}
	return ret | BlockError
}

// span is the number of logical blocks a mapping block of the level maps.
func span(per int64, level int) int64 {
	s := int64(1)
	for ; level > 0; level-- {
		s *= per
	}
	return s
}

// walk is block_iterate_ind, _dind and _tind (level 1, 2, 3) for the
// pointer *blk held at refOffset of refBlk.
func (it *BlockIter) walk(blk *uint64, level int, refBlk uint64, refOffset int, fn BlockFunc) int {
	f := it.FS
	per := int64(f.BlockSize / 4)
	meta := it.Flags&(BlockFlagDepthTraverse|BlockFlagDataOnly) == 0
	ret := 0
	if meta {
		ret = fn(blk, -int64(level), refBlk, refOffset)
	}
	if r, bad := it.roViolation(ret); bad {
		return r
	}
	if *blk == 0 || ret&BlockAbort != 0 {
		it.bcount += span(per, level)
		return ret
	}
	if *blk >= f.BlocksCount || *blk < f.FirstDataBlock {
		it.errcode = BadMapBlock(level)
		return it.failed(ret)
	}
	if it.bufs[level] == nil {
		it.bufs[level] = make([]byte, f.BlockSize)
	}
	buf := ondisk.MapBlock(it.bufs[level])
	if it.errcode = it.IO.ReadBlock(*blk, buf); it.errcode != nil {
		return it.failed(ret)
	}
	if level > 1 && it.Prefetch != nil {
		for i := int64(0); i < per; i++ {
			if c := uint64(buf.Ptr(int(i))); c != 0 {
				it.Prefetch(c)
			}
		}
	}
	changed := 0
	offset := 0
	appendAll := it.Flags&BlockFlagAppend != 0
	c := &it.ptrs[level-1]
	for i := int64(0); i < per; i++ {
		*c = uint64(buf.Ptr(int(i)))
		if level == 1 {
			if *c != 0 || appendAll {
				r := fn(c, it.bcount, *blk, offset)
				buf.SetPtr(int(i), uint32(*c))
				changed |= r
				if r&BlockAbort != 0 {
					ret |= BlockAbort
					break
				}
			}
			it.bcount++
			offset += 4
			continue
		}
		if *c == 0 && !appendAll {
			it.bcount += span(per, level-1)
			continue
		}
		r := it.walk(c, level-1, *blk, offset, fn)
		buf.SetPtr(int(i), uint32(*c))
		changed |= r
		if r&(BlockAbort|BlockError) != 0 {
			ret |= r & (BlockAbort | BlockError)
			if r&BlockError != 0 {
				ret = it.failed(ret)
			}
			break
		}
		offset += 4
	}
	if r, bad := it.roViolation(changed); bad {
		return r
	}
	if changed&BlockChanged != 0 {
		it.IO.WriteBlock(*blk, buf)
		it.errcode = nil
	}
	if it.Flags&BlockFlagDepthTraverse != 0 && it.Flags&BlockFlagDataOnly == 0 && ret&BlockAbort == 0 {
		ret |= fn(blk, -int64(level), refBlk, refOffset)
	}
	ret, _ = it.roViolation(ret)
	return ret
}
