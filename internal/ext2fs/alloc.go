package ext2fs

import (
	"gofsck/internal/bitmap"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// NewCluster is ext2fs_new_block3's search over the cluster bitmap m:
// the first cluster at or after goal's that is clear in m (and that skip,
// when not nil, does not reject), wrapping around once to the first data
// block; a goal of 0 or past the end means the first data block. It
// marks nothing: the caller's allocator does, with the counts it keeps.
func NewCluster(f *fs.FS, m *bitmap.Bitmap, goal uint64, skip func(cl uint64) bool) (uint64, bool) {
	if goal == 0 || goal >= f.BlocksCount {
		goal = f.FirstDataBlock
	}
	first := f.ClusterOf(f.FirstDataBlock)
	last := f.ClusterOf(f.BlocksCount - 1)
	next := func(from uint64) uint64 {
		cl := m.NextClear(from)
		for skip != nil && cl < m.Len() && skip(cl) {
			cl = m.NextClear(cl + 1)
		}
		return cl
	}
	g := f.ClusterOf(goal)
	cl := next(g)
	if cl > last {
		if goal == f.FirstDataBlock {
			return 0, false
		}
		if cl = next(first); cl >= g {
			return 0, false
		}
	}
	return cl, true
}

// NewInodeNum is ext2fs_new_inode's search over the inode bitmap m (bit
// i for inode i): the first inode clear in m from the start of dir's
// group (the first group when dir is 0), never below the first
// non-reserved inode, wrapping around once. It marks nothing.
func NewInodeNum(f *fs.FS, m *bitmap.Bitmap, dir uint32) (uint32, bool) {
	start := uint64(f.FirstIno)
	if dir > 0 && f.InodesPerGroup > 0 {
		start = max(start, uint64((dir-1)/f.InodesPerGroup)*uint64(f.InodesPerGroup)+1)
	}
	end := uint64(f.InodesCount)
	i := m.NextClear(start)
	if i > end {
		if i = m.NextClear(uint64(f.FirstIno)); i > end || i >= start {
			return 0, false
		}
	}
	return uint32(i), true
}

// GetFreeBlocks is ext2fs_get_free_blocks2 over the cluster bitmap m:
// the first block b, stepping by clusters from start (the first data
// block when 0) until finish, such that [b, b+num) is clear in m. A run
// that would pass the end of the filesystem fails when finish > start,
// and wraps around to the first data block otherwise.
func GetFreeBlocks(f *fs.FS, m *bitmap.Bitmap, start, finish, num uint64) (uint64, bool) {
	ratio := uint64(1) << f.ClusterBits
	b := start
	if b == 0 {
		b = f.FirstDataBlock
	}
	if finish == 0 {
		finish = start
	}
	if num == 0 {
		num = 1
	}
	if num > f.BlocksCount {
		return 0, false
	}
	b &^= ratio - 1
	finish &^= ratio - 1
	for wraps := 0; wraps < 3; {
		if b+num-1 >= f.BlocksCount {
			if finish > start {
				return 0, false
			}
			b = f.FirstDataBlock
			wraps++
		}
		lo, hi := b>>f.ClusterBits, (b+num+ratio-1)>>f.ClusterBits
		used := m.NextSet(lo)
		if used >= hi {
			return b, true
		}
		// Every start up to the used cluster includes it: go on just
		// past it, unless finish comes first.
		next := max((used+1)<<f.ClusterBits, b+ratio)
		if b < finish && finish <= next {
			return 0, false
		}
		b = next
	}
	return 0, false
}

// FreeBlocksCount counts the free blocks of the cluster bitmap m: a
// clear cluster counts as its blocks that lie in the filesystem.
func FreeBlocksCount(f *fs.FS, m *bitmap.Bitmap) uint64 {
	ratio := uint64(1) << f.ClusterBits
	n := uint64(0)
	for b := f.FirstDataBlock &^ (ratio - 1); b < f.BlocksCount; b += ratio {
		if !m.Test(f.ClusterOf(b)) {
			n += min(ratio, f.BlocksCount-b)
		}
	}
	return n
}

// TakeBlockStats is the count half of ext2fs_block_alloc_stats2(fs, blk,
// +1) as ext2fs_block_alloc_stats_range counts each block of a range:
// the group's free count (in clusters) drops at a cluster's first block,
// with BLOCK_UNINIT cleared and the descriptor checksum updated, the
// superblock's (in blocks) at each. Both wrap below zero as the
// library's do. The bitmap is the caller's.
func TakeBlockStats(f *fs.FS, blk uint64) {
	if g := f.GroupOfBlock(blk); g < f.Groups && blk&(uint64(1)<<f.ClusterBits-1) == 0 {
		gd := f.Group(g)
		gd.SetFreeBlocks(gd.FreeBlocks() - 1)
		gd.SetFlags(gd.Flags() &^ ondisk.BgBlockUninit)
		gd.UpdateChecksum(f.SB, g)
	}
	f.SB.SetFreeBlocksCount(f.SB.FreeBlocksCount() - 1)
}
