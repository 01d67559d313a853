package ext2fs

import (
	"gofsck/internal/bitmap"
	"gofsck/internal/fs"
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
