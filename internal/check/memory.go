package check

import (
	"sync/atomic"

	"gofsck/internal/fs"
)

// MemoryEstimate is what a check is expected to allocate for its large
// structures, computed from the superblock and group descriptors before
// the check starts. All sizes are in bytes.
type MemoryEstimate struct {
	InodeMaps  uint64 // in-use, directory, regular and bad inode bitmaps
	BlockMaps  uint64 // found, metadata and duplicate cluster bitmaps
	LinkCounts uint64 // i_links_count seen in pass 1 and references counted in pass 2
	Dirs       uint64 // per-directory records and at least one directory-list entry each
	Workers    uint64 // read buffers of the pass 1 and pass 2 workers
}

// Total is the sum of the parts.
func (m MemoryEstimate) Total() uint64 {
	return m.InodeMaps + m.BlockMaps + m.LinkCounts + m.Dirs + m.Workers
}

// Sizes of the per-item records the estimate counts; they follow the
// types in check.go and pass2.go.
const (
	dirInfoBytes  = 20 // dirInfo
	dirBlockBytes = 16 // dirBlock
	// A pass 1 worker reads up to 64 blocks of inode table at once and
	// keeps a few single-block buffers besides.
	workerBlocks = 64 + 6
)

// EstimateMemory returns the memory a check of f with the given number of
// workers (0: the default) will need for its large structures. The number
// of directories comes from the group descriptors, bounded by the inode
// count since descriptors are not trusted; directories with more than one
// block make the real figure larger.
func EstimateMemory(f *fs.FS, workers int) MemoryEstimate {
	if workers <= 0 {
		workers = (&Checker{}).workers()
	}
	n := uint64(f.InodesCount) + 1
	clusters := (f.BlocksCount + (1 << f.ClusterBits) - 1) >> f.ClusterBits
	bytesOf := func(bits uint64) uint64 { return (bits + 63) / 64 * 8 }
	// Count pages are allocated only for groups with used inodes; the
	// used inodes of a group are assumed to be at its start.
	var dirs, pages uint64
	for g := uint32(0); g < f.Groups; g++ {
		gd := f.Group(g)
		dirs += uint64(gd.UsedDirs())
		if free := gd.FreeInodes(); free < f.InodesPerGroup {
			used := uint64(f.InodesPerGroup - free)
			pages += (used + 1<<countPageBits - 1) >> countPageBits
		}
	}
	dirs = min(dirs, n)
	pageTable := (n + 1<<countPageBits - 1) >> countPageBits * 8
	pages = min(pages, (n+1<<countPageBits-1)>>countPageBits)
	return MemoryEstimate{
		InodeMaps:  4 * bytesOf(n),
		BlockMaps:  3 * bytesOf(clusters),
		LinkCounts: 2 * (pageTable + pages<<countPageBits),
		Dirs:       dirs * (dirInfoBytes + dirBlockBytes),
		Workers:    uint64(workers) * workerBlocks * uint64(f.BlockSize),
	}
}

// dblistHoleRoom is how many directory block list entries a check allows
// beyond one per filesystem block: room for the holes of directories
// (16 MiB of entries).
const dblistHoleRoom = 1 << 20

// dblistCap bounds the directory block list. Each directory block and
// each hole before one becomes an entry, and a directory's holes cost no
// disk space: one extent at logical block 2^32-2 makes 2^32 entries
// (64 GiB), which e2fsck tries to allocate until it fails with "Memory
// allocation failed". gofsck fails the same way, with the same fatal
// problem, once the list holds one entry per block of the filesystem
// plus dblistHoleRoom: a sound filesystem never needs more, since its
// directory blocks are distinct blocks and its directories rarely have
// holes.
type dblistCap struct {
	room atomic.Int64
	full atomic.Bool // the fatal problem has been reported
}

func newDblistCap(f *fs.FS) *dblistCap {
	c := &dblistCap{}
	c.room.Store(int64(min(f.BlocksCount, 1<<40)) + dblistHoleRoom)
	return c
}

// dblistBatch is how many entries a shard reserves at once, so that the
// workers do not all update one counter per directory block. The list
// may overshoot the cap by less than a batch per shard.
const dblistBatch = 1024

// take reserves room for one entry; false means the list is full. taken
// is the caller's (one shard's) count of entries added since its last
// reservation.
func (d *dblistCap) take(taken *int) bool {
	if d.full.Load() {
		return false
	}
	if *taken++; *taken < dblistBatch {
		return true
	}
	*taken = 0
	return d.room.Add(-dblistBatch) >= 0
}
