package ext2fs

import (
	"errors"
	"io"

	"gofsck/internal/ondisk"
)

// Reading a file's contents (ext2fs_file_open and ext2fs_file_read), as
// e2fsck's quota code reads the quota files: up to i_size, a hole or an
// uninitialised extent as zeros, an inline-data inode as its i_block
// (the part of the data the reader takes, the rest as zeros). Blocks are
// looked up without allocation: a block-mapped inode through Bmap2's
// walk, an extent-mapped one by a descent of the tree that checks each
// node's header and depth (not its checksum) and takes, on each index
// level, the last entry starting at or before the block. A block past
// what the map can address reads as zeros.

// File is an inode opened for reading.
type File struct {
	fsys *Filsys
	n    ondisk.Inode
	buf  []byte // one filesystem block
}

// OpenFile is ext2fs_file_open for reading inode ino: ErrBadInodeNum for
// a number outside the inode table, ErrShortRead when the inode cannot
// be read.
func OpenFile(fsys *Filsys, ino uint32) (*File, error) {
	f := fsys.FS
	if ino == 0 || ino > f.InodesCount {
		return nil, ErrBadInodeNum
	}
	n := make(ondisk.Inode, f.InodeSize)
	if err := f.ReadInode(ino, n, make([]byte, f.BlockSize)); err != nil {
		return nil, ErrShortRead
	}
	return &File{fsys: fsys, n: n, buf: make([]byte, f.BlockSize)}, nil
}

// Inode is the inode as it was read.
func (r *File) Inode() ondisk.Inode { return r.n }

// Size is EXT2_I_SIZE.
func (r *File) Size() uint64 { return r.n.Size() }

// errNegativeOffset is a read before the start of the file.
var errNegativeOffset = errors.New("ext2fs: negative offset")

// ReadAt implements io.ReaderAt over the file's blocks: a read reaching
// i_size returns what comes before it and io.EOF; an error reading the
// map or a block returns no data.
func (r *File) ReadAt(p []byte, off int64) (int, error) {
	size := r.Size()
	if off < 0 {
		return 0, errNegativeOffset
	}
	done := 0
	f := r.fsys.FS
	for done < len(p) {
		pos := uint64(off) + uint64(done)
		if pos >= size {
			return done, io.EOF
		}
		lblk := pos >> f.BlockBits
		start := int(pos & uint64(f.BlockSize-1))
		k := min(len(p)-done, f.BlockSize-start)
		if left := size - pos; uint64(k) > left {
			k = int(left)
		}
		if r.n.Flags()&ondisk.FlagInlineData != 0 {
			// Only the i_block part of inline data is read.
			clear(r.buf)
			if lblk == 0 {
				copy(r.buf, r.n.IBlock())
			}
		} else {
			pblk, err := r.lookup(lblk)
			if err != nil {
				return 0, err
			}
			if pblk == 0 {
				clear(r.buf)
			} else if err := r.fsys.IO.ReadBlock(pblk, r.buf); err != nil {
				return 0, err
			}
		}
		copy(p[done:done+k], r.buf[start:start+k])
		done += k
	}
	return done, nil
}

// lookup is the physical block of lblk, 0 for a hole, an uninitialised
// extent or a block past the map. r.buf is its scratch buffer.
func (r *File) lookup(lblk uint64) (uint64, error) {
	if r.n.Flags()&ondisk.FlagExtents == 0 {
		var none uint64
		pblk, err := blockBmap(r.fsys, 0, r.n, lblk, 0, &none)
		if err == ErrFileTooBig {
			return 0, nil
		}
		return pblk, err
	}
	if lblk >= 1<<32 {
		return 0, nil
	}
	node := ondisk.ExtentHeader(r.n.IBlock())
	if node.Verify() != nil {
		return 0, ErrExtentHeaderBad
	}
	for level := int(node.Depth()); ; level-- {
		if int(node.Depth()) != level {
			return 0, ErrExtentHeaderBad
		}
		if level == 0 {
			for i := 0; i < int(node.Entries()); i++ {
				e := node.Leaf(i)
				if uint64(e.Lblk) <= lblk && lblk < uint64(e.Lblk)+uint64(e.Len) {
					if e.Uninit {
						return 0, nil
					}
					return e.Pblk + (lblk - uint64(e.Lblk)), nil
				}
			}
			return 0, nil
		}
		next := -1
		for i := 0; i < int(node.Entries()); i++ {
			if uint64(node.Idx(i).Lblk) <= lblk {
				next = i
			}
		}
		if next < 0 {
			return 0, nil
		}
		if err := r.fsys.IO.ReadBlock(node.Idx(next).Leaf, r.buf); err != nil {
			return 0, err
		}
		node = ondisk.ExtentHeader(r.buf)
		if node.Verify() != nil {
			return 0, ErrExtentHeaderBad
		}
	}
}
