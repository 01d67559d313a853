package ext2fs

import (
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// IsFastSymlink is e2fsprogs 1.47.0's ext2fs_is_fast_symlink: a symlink
// whose size is not 0 and below that of i_block, whatever its i_blocks
// says (check_blocks may then still walk i_block as block numbers).
func IsFastSymlink(n ondisk.Inode) bool {
	return n.IsSymlink() && n.Size() != 0 && n.Size() < ondisk.IBlockSize
}

// FindInodeGoal is ext2fs_find_inode_goal: where to look for a new block
// for logical block lblk of inode ino (held as n): the block mapping it
// in a depth-0 extent root, or the first block of a block-mapped inode,
// else the first block of the inode's group (of its flex group).
func FindInodeGoal(f *fs.FS, ino uint32, n ondisk.Inode, lblk uint32) uint64 {
	if n.Flags()&ondisk.FlagInlineData == 0 && !IsFastSymlink(n) {
		if n.Flags()&ondisk.FlagExtents != 0 {
			h := ondisk.ExtentHeader(n.IBlock())
			if h.Verify() == nil && h.Depth() == 0 {
				for i := 0; i < int(h.Entries()); i++ {
					e := h.Leaf(i)
					if lblk >= e.Lblk && lblk < e.Lblk+e.Len {
						return e.Pblk + uint64(lblk-e.Lblk)
					}
				}
			}
		} else if b := n.Block(0); b != 0 {
			return uint64(b)
		}
	}
	g := (ino - 1) / f.InodesPerGroup
	if lf := f.SB.LogGroupsPerFlex(); lf > 0 && lf < 32 {
		g &^= 1<<lf - 1
	}
	return f.GroupFirstBlock(g)
}

// IblkAddBlocks is ext2fs_iblk_add_blocks: num filesystem blocks
// (clusters with bigalloc) added to n's i_blocks, in the units huge_file
// and the inode's HUGE_FILE flag give it; ErrOverflow when the count
// does not fit.
func IblkAddBlocks(f *fs.FS, n ondisk.Inode, num uint64) error {
	return iblkAdjust(f, n, num, true)
}

// IblkSubBlocks is ext2fs_iblk_sub_blocks: num blocks (clusters) taken
// from n's i_blocks; ErrOverflow when it holds fewer.
func IblkSubBlocks(f *fs.FS, n ondisk.Inode, num uint64) error {
	return iblkAdjust(f, n, num, false)
}

// iblkAdjust is IblkAddBlocks (add) or IblkSubBlocks.
func iblkAdjust(f *fs.FS, n ondisk.Inode, num uint64, add bool) error {
	huge := f.SB.HasRoCompat(ondisk.RoCompatHugeFile)
	b := uint64(n.BlocksLo())
	if huge {
		b |= uint64(n.BlocksHi()) << 32
	}
	if !huge || n.Flags()&ondisk.FlagHugeFile == 0 {
		num *= uint64(f.BlockSize / 512)
	}
	num <<= f.ClusterBits
	if add {
		b += num
		if !huge && b > 0xFFFFFFFF {
			return ErrOverflow
		}
	} else {
		if num > b {
			return ErrOverflow
		}
		b -= num
	}
	if huge {
		n.SetBlocksHi(uint16(b >> 32))
	}
	n.SetBlocksLo(uint32(b))
	return nil
}

// StatIBlocks is ext2fs_get_stat_i_blocks: n's i_blocks in 512-byte
// units.
func StatIBlocks(f *fs.FS, n ondisk.Inode) uint64 {
	b := uint64(n.BlocksLo())
	if f.SB.HasRoCompat(ondisk.RoCompatHugeFile) {
		b |= uint64(n.BlocksHi()) << 32
		if n.Flags()&ondisk.FlagHugeFile != 0 {
			b *= uint64(f.BlockSize / 512)
		}
	}
	return b
}
