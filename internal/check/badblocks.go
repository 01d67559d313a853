package check

import (
	"errors"
	"fmt"
	"io"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
)

// Bad-block list maintenance before pass 1 (e2fsck's read_bad_blocks_file
// for -l, -L and -c): inode 1 is sanity checked, the list it holds is read
// (unless it is replaced), new numbers are read from a file or from the
// badblocks program's output, and inode 1 is rebuilt from the merged list
// as ext2fs_update_bb_inode does. The block edits go to the on-disk
// bitmap, the group and superblock free counts as the library's
// ext2fs_block_alloc_stats2 makes them, so pass 5 sees what e2fsck's
// pass 5 sees.

// BadBlocksUpdate describes one -l/-L/-c update of the bad-block inode.
type BadBlocksUpdate struct {
	// Replace drops the current list (-L, and -c without -k).
	Replace bool
	// Open returns the new numbers, one a line: the file, or the
	// badblocks program's output. Its error is printed as is.
	Open func() (io.ReadCloser, error)
	// Out receives e2fsck's standard-output lines ("Bad block %u out of
	// range; ignored.", "<dev>: Updating bad block inode.").
	Out io.Writer
	// Device is the name used in messages (e2fsck's ctx->device_name).
	Device string
}

// BadBlocksError is a failure of the update, worded as e2fsck's com_err
// line (without the program name): the run then ends as e2fsck's
// fatal_error ends it.
type BadBlocksError struct{ Msg string }

func (e *BadBlocksError) Error() string { return e.Msg }

// ErrBadBlocksUnsupported is returned when the bad-block inode has a form
// gofsck does not rebuild (extent or inline-data mapped, bigalloc); nothing
// has been changed then.
var ErrBadBlocksUnsupported = errors.New("updating this bad-block inode is not implemented")

// bbVisitBudget bounds the block pointers one walk of inode 1 may visit
// (a hostile tree can point at the same mapping blocks again and again).
const bbVisitBudget = 1 << 20

// UpdateBadBlocks runs e2fsck's read_bad_blocks_file. It returns nil on
// success, a *BadBlocksError when e2fsck would stop with a fatal error
// (the writes made until then stand, as e2fsck's are on disk), or
// ErrBadBlocksUnsupported before anything was changed.
func (c *Checker) UpdateBadBlocks(u BadBlocksUpdate) error {
	f := c.fs
	if !c.repairing() {
		return nil
	}
	n, msg := c.readBBInode()
	if msg != "" {
		return &BadBlocksError{Msg: "ext2fs_block_iterate: " + msg + " while sanity checking the bad blocks inode"}
	}
	if n.Flags()&(ondisk.FlagExtents|ondisk.FlagInlineData) != 0 || f.ClusterBits != 0 {
		return ErrBadBlocksUnsupported
	}
	if n.SizeHigh() != 0 && n.Mode()&0xF000 != 0x4000 {
		// ext2fs_block_iterate refuses a large non-directory.
		return &BadBlocksError{Msg: "ext2fs_block_iterate: Ext2 file too big while sanity checking the bad blocks inode"}
	}
	w := &ext2fs.BBWalk{Fsys: &ext2fs.Filsys{FS: f, IO: libIO{c}}, Budget: bbVisitBudget}
	// check_bb_inode_blocks: out-of-range pointers are reported and
	// cleared, mapping blocks before what they map (ext2fs_block_iterate
	// without depth order); a cleared mapping block is not descended.
	if w.Iterate(n, 0, "while sanity checking the bad blocks inode", func(blk *uint64, _ int64) int {
		if !w.InRange(*blk) {
			fmt.Fprintf(u.Out, "Warning: illegal block %d found in bad block inode.  Cleared.\n", *blk)
			*blk = 0
			return ext2fs.BlockChanged
		}
		return 0
	}) {
		c.writeInode(ondisk.BadBlocksIno, n)
	}
	if w.Err != nil {
		return bbError(w.Err)
	}
	list := &ext2fs.BadBlocksList{}
	if !u.Replace {
		if w.ReadBBInode(n, list); w.Err != nil {
			return bbError(w.Err)
		}
	}
	r, err := u.Open()
	if err != nil {
		return &BadBlocksError{Msg: err.Error()}
	}
	err = ext2fs.ReadBBFile(r, list, f.FirstDataBlock, f.BlocksCount, func(blk uint32) {
		fmt.Fprintf(u.Out, "Bad block %d out of range; ignored.\n", blk)
	})
	r.Close()
	if err != nil {
		return &BadBlocksError{Msg: "ext2fs_read_bb_FILE: " + err.Error() + " while reading in list of bad blocks from file"}
	}
	fmt.Fprintf(u.Out, "%s: Updating bad block inode.\n", u.Device)
	d := c.loadBitmaps()
	c.applyOrphanEdits(d)
	w.UpdateBBInode(n, list.Sorted(), d.blocks, func(blk uint64, inuse int) { c.bbStats(d, blk, inuse) }, uint32(c.opt.Now.Unix()))
	return bbError(w.Err)
}

// bbError is the command's error for a failed walk of inode 1.
func bbError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ext2fs.ErrBBWalkBudget):
		return ErrBadBlocksUnsupported
	}
	return &BadBlocksError{Msg: err.Error()}
}

// bbStats is ext2fs_block_alloc_stats2 on the on-disk bitmap d: the bit,
// the group's free count (unconditionally) and BLOCK_UNINIT flag, the
// superblock's free count. A group losing BLOCK_UNINIT keeps the bitmap
// the library synthesised for it, so its bits are recorded as edits.
func (c *Checker) bbStats(d *diskBitmaps, blk uint64, inuse int) {
	f := c.fs
	g := uint32((blk - f.FirstDataBlock) / uint64(f.BlocksPerGroup))
	if g >= f.Groups {
		return
	}
	gd := f.Group(g)
	if gd.Flags()&ondisk.BgBlockUninit != 0 {
		first := f.FirstDataBlock + uint64(g)*uint64(f.BlocksPerGroup)
		end := min(first+uint64(f.BlocksPerGroup), f.BlocksCount)
		for b := first; b < end; b++ {
			c.markBlockOnDisk(b, d.blocks.Test(b))
		}
	}
	if inuse > 0 {
		d.blocks.Set(blk)
	} else {
		d.blocks.Clear(blk)
	}
	c.markBlockOnDisk(blk, inuse > 0)
	gd.SetFreeBlocks(uint32(int64(gd.FreeBlocks()) - int64(inuse)))
	gd.SetFlags(gd.Flags() &^ ondisk.BgBlockUninit)
	gd.UpdateChecksum(c.sb, g)
	c.sb.SetFreeBlocksCount(uint64(int64(c.sb.FreeBlocksCount()) - int64(inuse)))
}
