package ext2fs

import (
	"gofsck/internal/bitmap"
	"gofsck/internal/ondisk"
)

// A new journal whose free runs need more than the four extents an inode
// holds (PlanJournal gives up): ext2fs_fallocate's ext_falloc_helper
// takes one free run after the other (ext2fs_new_range from where the
// previous run ended, up to EXT_INIT_MAX_LEN), claims it in the alloc
// stats and in i_blocks, and inserts its extent after the last one
// through the extent handle, which splits full nodes: the tree blocks
// come from the same free space, each zeroed and claimed as it is taken.
// On bigalloc the runs are of whole clusters and a tree block takes a
// cluster.

// CreateJournalTree creates the n-block journal (fc of them for fast
// commits) from goal on, with an extent tree. Free blocks are searched
// in used (indexed by cluster); stats is the caller's alloc stats,
// called for every block of each cluster taken, and must mark that
// cluster in used (e2fsck's callbacks mark its found map). The extent
// handle works through fsys (its tree-block writes; its allocator is
// replaced by the search in used); the zeroed blocks, the journal
// superblock and inode 8 are written through io, and the superblock's
// journal fields set (WriteJournalInode).
//
// It returns false when the library's path is not followed here (an
// extent operation fails, or a tree block would be freed); nothing is
// written before a failure of the first run's search, but a later
// failure leaves what was written.
func CreateJournalTree(fsys *Filsys, io Writer, used *bitmap.Bitmap, n, fc, goal uint64, now uint32, stats func(blk uint64)) bool {
	f := fsys.FS
	ratio := uint64(1) << f.ClusterBits
	// claim is the alloc stats of the cluster holding b (every block of
	// it, so that the superblock's count drops by the ratio).
	claim := func(b uint64) {
		for k := b &^ (ratio - 1); k < (b|(ratio-1))+1 && k < f.BlocksCount; k++ {
			stats(k)
		}
	}
	bs := uint64(f.BlockSize)
	zero := make([]byte, bs)
	// The inode as write_journal_inode hands it to ext2fs_fallocate: the
	// size set first (it bounds the handle's end block).
	ino := make(ondisk.Inode, f.InodeSize)
	ino.SetMode(ondisk.SIFREG | 0o600)
	ino.SetSize(n * bs)
	ino.SetLinksCount(1)
	x, err := OpenExtent(fsys, ondisk.JournalIno, ino)
	if err != nil {
		return false
	}
	failed := false
	alloc := func(goal uint64) (uint64, bool) {
		// ext2fs_alloc_block2 through the caller's allocator: a block
		// free in used, zeroed, and its alloc stats.
		b, ok := NextFree(f, used, nil, goal)
		if !ok {
			failed = true
			return 0, false
		}
		io.WriteBlock(b, zero)
		claim(b)
		return b, true
	}
	x.SetAllocator(AllocFuncs{Alloc: alloc, Free: func(uint64) { failed = true }})
	pblk := goal
	var first uint64
	for lblk := uint64(0); lblk < n; {
		// ext2fs_new_range(fs, 0, pblk, fillable): the first free run at
		// or after pblk (wrapping to the first data block), as long as
		// it lasts.
		start, ok := NextFree(f, used, nil, pblk)
		if !ok {
			return false
		}
		want := min(n-lblk, uint64(ondisk.ExtentInitMaxLen)&^(ratio-1))
		l := uint64(0)
		for l < want && start+l+ratio <= f.BlocksCount && !used.Test(f.ClusterOf(start+l)) {
			l += ratio
		}
		if l == 0 || l > want {
			return false
		}
		// claim_range.
		for k := uint64(0); k < l; k += ratio {
			claim(start + k)
		}
		if IblkAddBlocks(f, ino, l/ratio) != nil {
			return false
		}
		// ext2fs_extent_goto, then insert before or after the current
		// extent and fix the parents.
		after := true
		_ = x.Goto(0, lblk)
		if cur, err := x.Get(ExtentCurrent); err == nil && cur.Lblk > lblk {
			after = false
		} else if err != nil && err != ErrNoCurrentNode {
			return false
		}
		if err := x.Insert(Extent{Lblk: lblk, Pblk: start, Len: uint32(l)}, after); err != nil || failed {
			return false
		}
		if err := x.FixParents(); err != nil || failed {
			return false
		}
		// EXT2_FALLOCATE_ZERO_BLOCKS.
		for k := uint64(0); k < l; k++ {
			io.WriteBlock(start+k, zero)
		}
		if lblk == 0 {
			first = start
		}
		lblk += l
		pblk = start + l
		if pblk >= f.BlocksCount {
			pblk = f.FirstDataBlock
		}
	}
	blocks := uint64(ino.BlocksLo()) / (bs / 512)
	WriteJournalInode(&Filsys{FS: f, IO: io}, first, ino.IBlock(), blocks, n, fc, now)
	return true
}
