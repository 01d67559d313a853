package check

import (
	"sync/atomic"

	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// MemoryEstimate is what a check is expected to allocate for its large
// structures, computed from the superblock and group descriptors before
// the check starts. All sizes are in bytes.
type MemoryEstimate struct {
	Descriptors uint64 // the group descriptors, held whole
	InodeMaps   uint64 // in-use, directory, regular and bad inode bitmaps
	BlockMaps   uint64 // found and metadata cluster bitmaps (the duplicate map is made when needed)
	Pass5Maps   uint64 // the on-disk block and inode bitmaps pass 5 loads
	LinkCounts  uint64 // i_links_count seen in pass 1 and references counted in pass 2
	Dirs        uint64 // per-directory records and at least one directory-list entry each
	Workers     uint64 // read buffers of the pass 1 and pass 2 workers
	Runtime     uint64 // the Go runtime, the program and its small structures
}

// Total is the sum of the parts.
func (m MemoryEstimate) Total() uint64 {
	return m.Descriptors + m.InodeMaps + m.BlockMaps + m.Pass5Maps + m.LinkCounts + m.Dirs + m.Workers + m.Runtime
}

// Sizes of the per-item records the estimate counts; they follow the
// types in check.go and pass2.go.
const (
	dirInfoBytes  = 20 // dirInfo
	dirBlockBytes = 16 // dirBlock
	// A pass 1 worker reads up to 64 blocks of inode table at once and
	// keeps a few single-block buffers besides.
	workerBlocks = 64 + 6
	// A bitmap page (internal/bitmap) covers mapPageBits bits: 4 KiB when
	// dense, about mapRunPageBytes while it holds a few runs.
	mapPageBits     = 1 << 15
	mapPageBytes    = 4096 + 32
	mapRunPageBytes = 128
	// runtimeBytes is what a check of an empty filesystem takes besides
	// its large structures (measured: 6-8 MiB of heap and runtime).
	runtimeBytes = 8 << 20
)

// EstimateMemory returns the memory a check of f with the given number of
// workers (0: the default) will need for its large structures. It follows
// what the descriptors say is in use, as the structures do: a bitmap page
// whose groups hold data is counted dense, one holding only metadata as a
// few runs, an unused one not at all; every map has its page table. The
// number of directories comes from the group descriptors, bounded by the
// inode count since descriptors are not trusted; directories with more
// than one block make the real figure larger.
func EstimateMemory(f *fs.FS, workers int) MemoryEstimate {
	if workers <= 0 {
		workers = (&Checker{}).workers()
	}
	n := uint64(f.InodesCount) + 1
	clusters := (f.BlocksCount + (1 << f.ClusterBits) - 1) >> f.ClusterBits
	table := func(bits uint64) uint64 { return (bits + mapPageBits - 1) / mapPageBits * 8 }
	ipg := uint64(f.InodesPerGroup)
	cpg := uint64(f.SB.ClustersPerGroup())
	// Inode pages in use, cluster pages with data and with metadata only:
	// a group's pages are counted once however many groups share them.
	var inodePages, densePages, runPages uint64
	lastInodePage, lastBlockPage := ^uint64(0), ^uint64(0)
	blockDense := false
	// Metadata a group may hold without data: its own bitmaps and table,
	// a flex group's worth of them, and the descriptor copies.
	flex := uint64(1)
	if f.SB.HasIncompat(ondisk.IncompatFlexBG) {
		flex = max(1, min(uint64(1)<<min(uint64(f.SB.LogGroupsPerFlex()), 20), uint64(f.Groups)))
	}
	metaOnly := flex*(uint64(f.InodeBlocksPerGroup)+2) + uint64(f.SB.ReservedGdtBlocks()) + 64
	var dirs, pages uint64
	for g := uint32(0); g < f.Groups; g++ {
		gd := f.Group(g)
		dirs += uint64(gd.UsedDirs())
		if free := gd.FreeInodes(); free < f.InodesPerGroup {
			used := uint64(f.InodesPerGroup - free)
			pages += (used + 1<<countPageBits - 1) >> countPageBits
			if p := (1 + uint64(g)*ipg) / mapPageBits; p != lastInodePage {
				inodePages++
				lastInodePage = p
			}
		}
		used := cpg - min(cpg, uint64(gd.FreeBlocks()))
		if used == 0 {
			continue
		}
		p := uint64(g) * cpg / mapPageBits
		if p != lastBlockPage {
			lastBlockPage, blockDense = p, false
			runPages++
		}
		if used<<f.ClusterBits > metaOnly && !blockDense {
			blockDense = true
			runPages--
			densePages++
		}
	}
	dirs = min(dirs, n)
	pageTable := (n + 1<<countPageBits - 1) >> countPageBits * 8
	pages = min(pages, (n+1<<countPageBits-1)>>countPageBits)
	inodePages = min(inodePages, (n+mapPageBits-1)/mapPageBits)
	// found: dense or runs as counted; metadata: runs where used; dup:
	// nothing until a block is claimed twice.
	found := table(clusters) + densePages*mapPageBytes + runPages*mapRunPageBytes
	meta := table(clusters) + (densePages+runPages)*mapRunPageBytes
	return MemoryEstimate{
		Descriptors: uint64(f.Groups) * uint64(f.DescSize),
		InodeMaps:   4*table(n) + 3*inodePages*mapPageBytes,
		BlockMaps:   found + meta,
		Pass5Maps:   found + table(n) + inodePages*mapPageBytes,
		// Each counter: its single-count bitmap, dense where inodes are
		// used, and byte pages where counts other than 1 are (one per
		// directory at most).
		LinkCounts: 2 * (pageTable + table(n) + inodePages*mapPageBytes + min(dirs, pages)<<countPageBits),
		Dirs:       dirs * (dirInfoBytes + dirBlockBytes),
		Workers:    uint64(workers) * workerBlocks * uint64(f.BlockSize),
		Runtime:    runtimeBytes,
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
