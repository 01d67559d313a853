package check

import (
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
)

// A re-created journal whose free runs need more than the four extents an
// inode holds (journal_create.go plans those). ext2fs_fallocate's
// ext_falloc_helper takes one free run after the other (ext2fs_new_range
// from where the previous run ended, up to EXT_INIT_MAX_LEN), claims it in
// the bitmaps and counts and in i_blocks, and inserts its extent after the
// last one through the extent handle, which splits full nodes: the tree
// blocks come from e2fsck's allocator, here the bitmaps pass 5 left (its
// found map is gone by then), each zeroed and counted as it is taken. The
// handle is ext2fs.ExtentHandle. Before a restart (journal_restart.go) the
// free runs and tree blocks come from pass 1's found map instead, which
// the claims mark too (e2fsck's alloc-stats callbacks), while the stats
// go to the bitmaps read from the disk. On bigalloc (at the end of the
// run only: before a restart e2fsck's found map has a bit per block) the
// runs are of whole clusters and a tree block takes a cluster.

// journalTreeModelled reports whether writeJournalTree can follow the
// library for this filesystem.
func (c *Checker) journalTreeModelled(restart bool) bool {
	return c.sb.HasIncompat(ondisk.IncompatExtents) && (c.fs.ClusterBits == 0 || !restart)
}

// writeJournalTree creates the n-block journal (fc of them for fast
// commits) from goal on: free blocks
// are searched in found (d at the end of the run) and counted in the
// bitmaps d (the ones to be written). It returns false when the library's
// path is not followed (nothing is then written: the run stops as
// unsupported).
func (c *Checker) writeJournalTree(n, fc uint64, d, found *diskBitmaps, goal uint64) bool {
	f := c.fs
	ratio := uint64(1) << f.ClusterBits
	// claim is the alloc stats of the cluster holding b (every block of
	// it, so that the superblock's count drops by the ratio).
	claim := func(b uint64) {
		for k := b &^ (ratio - 1); k < (b|(ratio-1))+1 && k < f.BlocksCount; k++ {
			c.journalAllocStats(k)
		}
		found.blocks.Set(f.ClusterOf(b))
	}
	bs := uint64(f.BlockSize)
	zero := make([]byte, bs)
	// The inode as write_journal_inode hands it to ext2fs_fallocate: the
	// size set first (it bounds the handle's end block).
	ino := make(ondisk.Inode, f.InodeSize)
	ino.SetMode(ondisk.SIFREG | 0o600)
	ino.SetSize(n * bs)
	ino.SetLinksCount(1)
	x, err := c.openExtHandle(ondisk.JournalIno, ino)
	if err != nil {
		return false
	}
	failed := false
	alloc := func(goal uint64) (uint64, bool) {
		// ext2fs_alloc_block2 through e2fsck's allocator: ext2fs_new_block2
		// over fs->block_map, the block zeroed and its alloc stats.
		b, ok := ext2fs.NextFree(f, found.blocks, nil, goal)
		if !ok {
			failed = true
			return 0, false
		}
		c.writeBlock(b, zero)
		claim(b)
		return b, true
	}
	x.SetAllocator(ext2fs.AllocFuncs{Alloc: alloc, Free: func(uint64) { failed = true }})
	pblk := goal
	var first uint64
	for lblk := uint64(0); lblk < n; {
		// ext2fs_new_range(fs, 0, pblk, fillable): the first free run at
		// or after pblk (wrapping to the first data block), as long as
		// it lasts.
		start, ok := ext2fs.NextFree(f, found.blocks, nil, pblk)
		if !ok {
			return false
		}
		want := min(n-lblk, uint64(ondisk.ExtentInitMaxLen)&^(ratio-1))
		l := uint64(0)
		for l < want && start+l+ratio <= f.BlocksCount && !found.blocks.Test(f.ClusterOf(start+l)) {
			l += ratio
		}
		if l == 0 || l > want {
			return false
		}
		// claim_range.
		for k := uint64(0); k < l; k += ratio {
			claim(start + k)
		}
		if ext2fs.IblkAddBlocks(f, ino, l/ratio) != nil {
			return false
		}
		// ext2fs_extent_goto, then insert before or after the current
		// extent and fix the parents.
		after := true
		gerr := x.Goto(0, lblk)
		if cur, err := x.Get(ext2fs.ExtentCurrent); err == nil && cur.Lblk > lblk {
			after = false
		} else if err != nil && err != ext2fs.ErrNoCurrentNode {
			return false
		}
		_ = gerr
		if err := x.Insert(ext2fs.Extent{Lblk: lblk, Pblk: start, Len: uint32(l)}, after); err != nil || failed {
			return false
		}
		if err := x.FixParents(); err != nil || failed {
			return false
		}
		// EXT2_FALLOCATE_ZERO_BLOCKS.
		for k := uint64(0); k < l; k++ {
			c.writeBlock(start+k, zero)
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
	c.writeJournalInode(first, ino.IBlock(), blocks, n, fc)
	return true
}
