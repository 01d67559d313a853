package check

import (
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
)

// The checker's side of internal/ext2fs: the library's mechanics write
// through the checker's repair path and allocate from its maps, as
// e2fsck hands libext2fs its io channel and allocation callbacks.

// libIO is ext2fs.Writer over the checker: reads through the filesystem
// (and so the overlay), writes through the repair path, which a
// read-only or speculative run does not let through.
type libIO struct{ c *Checker }

// ReadBlock reads one block.
func (w libIO) ReadBlock(blk uint64, buf []byte) error { return w.c.fs.ReadBlock(blk, buf) }

// WriteBlock writes a tree block, not counted as a change (see
// writeBlockUncounted).
func (w libIO) WriteBlock(blk uint64, data []byte) { w.c.writeBlockUncounted(blk, data) }

// WriteInode writes an inode with its checksum.
func (w libIO) WriteInode(ino uint32, n ondisk.Inode) { w.c.writeInode(ino, n) }

// passAlloc is e2fsck's allocator of the passes as an ext2fs.Allocator:
// new blocks from the block found map, freed blocks released from it and
// from the on-disk bitmap with the group and superblock counts.
type passAlloc struct{ c *Checker }

// AllocBlock is ext2fs_alloc_block2 with e2fsck's allocator: a block
// free in the block found map at or after goal, marked in use with the
// group and superblock counts (the library zeroes it; the caller writes
// it whole).
func (a passAlloc) AllocBlock(goal uint64) (uint64, bool) {
	f := a.c.fs
	if goal == 0 || goal >= f.BlocksCount {
		goal = f.FirstDataBlock
	}
	return a.c.newBlock(goal)
}

// FreeBlock is releaseBlock, which ignores a block outside the
// filesystem.
func (a passAlloc) FreeBlock(blk uint64) { a.c.releaseBlock(blk) }

// WriteInode writes an inode with its checksum: with ReadBlock and
// WriteBlock (orphan_repair.go), repairIO is the ext2fs.Writer of the
// library's creators, whose block writes count as changes.
func (o repairIO) WriteInode(ino uint32, n ondisk.Inode) { o.c.writeInode(ino, n) }

// libfs is the filesystem as the library's mechanics see it during the
// passes. It is made for each use, so that a worker's shard of the
// checker writes and allocates through itself.
func (c *Checker) libfs() *ext2fs.Filsys {
	return &ext2fs.Filsys{FS: c.fs, IO: libIO{c}, Alloc: passAlloc{c}}
}

// openExtHandle opens the library's extent handle on inode ino (held as
// n) with the allocator of the passes.
func (c *Checker) openExtHandle(ino uint32, n ondisk.Inode) (*ext2fs.ExtentHandle, error) {
	return ext2fs.OpenExtent(c.libfs(), ino, n)
}

// zeroedReads is the BlockIO of pass 1B's walks and of pass 1E's: a
// mapping block that cannot be read is taken as zeros, so that it maps
// nothing (and, given failed, the short read is noted there); a changed
// one is written through the repair path.
type zeroedReads struct {
	c      *Checker
	failed *error
}

func (r zeroedReads) ReadBlock(blk uint64, buf []byte) error {
	if r.c.fs.ReadBlock(blk, buf) != nil {
		clear(buf)
		if r.failed != nil {
			*r.failed = ext2fs.ErrShortRead
		}
	}
	return nil
}

func (r zeroedReads) WriteBlock(blk uint64, data []byte) { r.c.writeBlock(blk, data) }

// blockIter is the scratch's block-map iterator, set up for one walk
// through io with flags.
func (s *inodeScratch) blockIter(c *Checker, io ext2fs.BlockIO, flags ext2fs.BlockFlags) *ext2fs.BlockIter {
	it := &s.biter
	it.FS, it.IO, it.Flags, it.Prefetch = c.fs, io, flags, nil
	return it
}

// asBlockMap is n for a walk that reads i_block as a block map whatever
// its flags say, as the checker's read-only walks always have: with
// INLINE_DATA_FL set (which the library's iterator refuses) a copy
// without it.
func asBlockMap(n ondisk.Inode) ondisk.Inode {
	if n.Flags()&ondisk.FlagInlineData == 0 {
		return n
	}
	m := append(ondisk.Inode(nil), n...)
	m.SetFlags(m.Flags() &^ ondisk.FlagInlineData)
	return m
}

var (
	_ ext2fs.BlockIO = (*pass1IO)(nil)
	_ ext2fs.BlockIO = zeroedReads{}
	_ ext2fs.BlockIO = bbIO{}
	_ ext2fs.BlockIO = repairIO{}
	_ ext2fs.BlockIO = libIO{}
	_ ext2fs.Writer  = repairIO{}
)
