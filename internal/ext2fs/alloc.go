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
