package ext2fs

import (
	"errors"
	"slices"

	"gofsck/internal/ondisk"
)

// ErrOrphanFileNotModelled is an orphan file ext2fs_create_orphan_file
// would build in a way not followed here (bigalloc, a block map past the
// single indirect block, an extent tree error other than a failed
// allocation); nothing was written.
var ErrOrphanFileNotModelled = errors.New("orphan file layout not modelled")

// DefaultOrphanFileBlocks is ext2fs_default_orphan_file_blocks for a
// filesystem of blocks blocks.
func DefaultOrphanFileBlocks(blocks uint64) uint64 {
	switch {
	case blocks < 128*1024:
		return 32
	case blocks < 2*1024*1024:
		return blocks / 4096
	}
	return 512
}

// CreateOrphanFile is ext2fs_create_orphan_file on the truncated inode
// ino: num blocks, each allocated through fsys.Alloc with the previous
// one as goal and written empty through fsys.IO (the block tail's magic,
// and with metadata_csum its checksum over generation 0), mapped as
// ext2fs_block_iterate3 with BLOCK_FLAG_APPEND maps them (a block-mapped
// file's indirect block is allocated before the block it maps); then the
// inode as ext2fs_write_new_inode writes it (times now) and the
// orphan_file feature is set in fsys.FS.SB. An extent-mapped file's
// blocks are mapped one by one by ExtentHandle.SetBmap, which grows the
// tree when the inode's four extents do not hold them.
//
// It returns ErrBlockAllocFail when the filesystem is full (the blocks
// taken so far stay taken, as in the library) and
// ErrOrphanFileNotModelled for what it does not follow (before anything
// is written, but for an extent tree error).
func CreateOrphanFile(fsys *Filsys, ino uint32, num uint64, now uint32) error {
	f := fsys.FS
	extents := f.SB.HasIncompat(ondisk.IncompatExtents)
	per := uint64(f.BlockSize / 4)
	if f.ClusterBits != 0 || (!extents && num > ondisk.NDirBlocks+per) {
		return ErrOrphanFileNotModelled
	}
	bs := f.BlockSize
	empty := make([]byte, bs)
	ondisk.OrphanBlock(empty).SetMagic(ondisk.OrphanBlockMagic)
	var (
		last   uint64
		allocs uint64
		ind    ondisk.MapBlock
		indBlk uint64
		x      *ExtentHandle
	)
	base := make(ondisk.Inode, ondisk.GoodOldInodeSize)
	base.SetMode(ondisk.SIFREG | 0o600)
	n := NewInode(f, base, now)
	if extents {
		// The library writes the inode with only the extents flag and
		// opens a handle on it: an empty leaf root.
		var err error
		if x, err = OpenExtent(fsys, ino, n); err != nil {
			return ErrOrphanFileNotModelled
		}
	}
	alloc := func() (uint64, bool) {
		b, ok := fsys.Alloc.AllocBlock(last)
		if !ok {
			return 0, false
		}
		last = b
		allocs++
		return b, true
	}
	for lblk := uint64(0); lblk < num; lblk++ {
		if !extents && lblk == ondisk.NDirBlocks {
			b, ok := alloc()
			if !ok {
				return ErrBlockAllocFail
			}
			indBlk, ind = b, make([]byte, bs)
			fsys.IO.WriteBlock(b, ind)
		}
		b, ok := alloc()
		if !ok {
			return ErrBlockAllocFail
		}
		blk := slices.Clone(empty)
		if f.MetadataCsum {
			ondisk.OrphanBlock(blk).SetChecksum(f.CsumSeed, ino, 0, b)
		}
		fsys.IO.WriteBlock(b, blk)
		switch {
		case extents:
			if err := x.SetBmap(lblk, b, false); err != nil {
				// No block for a new tree node fails the creation as
				// a data block does; other errors cannot happen on
				// the tree built here.
				if err != ErrBlockAllocFail {
					return ErrOrphanFileNotModelled
				}
				return ErrBlockAllocFail
			}
		case lblk < ondisk.NDirBlocks:
			n.SetBlock(int(lblk), uint32(b))
		default:
			ind.SetPtr(int(lblk-ondisk.NDirBlocks), uint32(b))
		}
	}
	if ind != nil {
		n.SetBlock(ondisk.IndBlock, uint32(indBlk))
		fsys.IO.WriteBlock(indBlk, ind)
	}
	n.SetLinksCount(1)
	n.SetSize(num * uint64(bs))
	n.SetBlocks(allocs * uint64(bs/512))
	fsys.IO.WriteInode(ino, n)
	f.SB.SetFeatureCompat(f.SB.FeatureCompat() | ondisk.CompatOrphanFile)
	return nil
}
