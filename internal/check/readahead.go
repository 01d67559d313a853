package check

import "gofsck/internal/ondisk"

// The hints below start reads for a later pass while an earlier one
// runs, when the device has a read-ahead (Options.PrefetchBytes > 0),
// behind the running pass's own reads (FS.PrefetchLater).
// They are bounded by laterPassHints so that what they bring into the
// page cache is still there when the later pass reads it.

// laterPassHints is how many times Options.PrefetchBytes the hints for a
// later pass may cover.
const laterPassHints = 8

// hintDirBlocks hints the directory blocks a pass-1 unit found, for
// pass 2, until the budget is spent (pass 2 hints the rest as it goes).
// Called from the in-order replay, so the budget is spent on the
// directories of the first inodes.
func (c *Checker) hintDirBlocks(list []dirBlock) {
	if c.opt.PrefetchBytes <= 0 {
		return
	}
	f := c.fs
	budget := laterPassHints * c.opt.PrefetchBytes
	if c.dirHinted >= budget {
		c.dirHintsCut = true
		return
	}
	for k := 0; k < len(list); {
		j := k + 1
		for j < len(list) && list[j].blk != 0 && list[j].blk == list[j-1].blk+1 {
			j++
		}
		if list[k].blk != 0 {
			f.PrefetchLater(list[k].blk, uint64(j-k))
			c.dirHinted += int64(j-k) << f.BlockBits
		}
		k = j
	}
}

// dirBlocksHinted reports whether pass 1 hinted every directory block:
// then pass 2 needs no hints of its own, only the promotion of those
// still queued.
func (c *Checker) dirBlocksHinted() bool {
	return c.dirHinted > 0 && !c.dirHintsCut
}

// pass5Reads says whether pass 5 reads group g's block and inode
// bitmaps: not those its descriptor (with a valid checksum) marks
// uninitialised.
func (c *Checker) pass5Reads(g uint32) (block, inode bool) {
	f := c.fs
	gd := f.Group(g)
	csumOK := f.GdtCsum && gd.ChecksumValid(c.sb, g)
	return !(csumOK && gd.Flags()&ondisk.BgBlockUninit != 0), !(csumOK && gd.Flags()&ondisk.BgInodeUninit != 0)
}

// hintPass5Bitmaps hints the bitmaps pass 5 reads, in group order, until
// the budget is spent; called as pass 4 starts.
func (c *Checker) hintPass5Bitmaps() {
	if c.opt.PrefetchBytes <= 0 {
		return
	}
	f := c.fs
	budget := laterPassHints * c.opt.PrefetchBytes
	var hinted int64
	for g := uint32(0); g < f.Groups && hinted < budget; g++ {
		block, inode := c.pass5Reads(g)
		gd := f.Group(g)
		if block && gd.BlockBitmap() != 0 {
			f.PrefetchLater(gd.BlockBitmap(), 1)
			hinted += int64(f.BlockSize)
		}
		if inode && gd.InodeBitmap() != 0 {
			f.PrefetchLater(gd.InodeBitmap(), 1)
			hinted += int64(f.BlockSize)
		}
	}
}
