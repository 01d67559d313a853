package ext2fs

import (
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// Writer is how the library's mechanics read and write the filesystem:
// through the caller's write path (e2fsck's overlay and undo file), so
// that a repair is written only where and when the caller writes.
type Writer interface {
	// ReadBlock reads block blk into buf (one block).
	ReadBlock(blk uint64, buf []byte) error
	// WriteBlock writes a tree block the way the library's extent and
	// block iterators do.
	WriteBlock(blk uint64, data []byte)
	// WriteInode writes inode ino, its checksum recomputed.
	WriteInode(ino uint32, n ondisk.Inode)
}

// Allocator is the caller's block allocator: e2fsck's
// set_alloc_block_callback and block_alloc_stats callback, which decide
// which bitmaps and counts a new or freed block changes (the found map
// during the passes, the on-disk bitmaps before them).
type Allocator interface {
	// AllocBlock returns a free block at or after goal (wrapping),
	// marked in use; false when there is none.
	AllocBlock(goal uint64) (uint64, bool)
	// FreeBlock marks blk free (ext2fs_block_alloc_stats2(blk, -1)).
	FreeBlock(blk uint64)
}

// AllocFuncs is an Allocator made of two functions.
type AllocFuncs struct {
	Alloc func(goal uint64) (uint64, bool)
	Free  func(blk uint64)
}

// AllocBlock calls a.Alloc.
func (a AllocFuncs) AllocBlock(goal uint64) (uint64, bool) { return a.Alloc(goal) }

// FreeBlock calls a.Free.
func (a AllocFuncs) FreeBlock(blk uint64) { a.Free(blk) }

// Filsys is the library's ext2_filsys as its mechanics use it: the
// geometry, and the caller's I/O and allocator.
type Filsys struct {
	FS    *fs.FS
	IO    Writer
	Alloc Allocator
}
