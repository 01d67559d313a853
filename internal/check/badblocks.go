package check

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

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

// inode field offsets written here (ext2_inode).
const (
	bbOffAtime = 0x08
	bbOffCtime = 0x0C
	bbOffMtime = 0x10
)

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
	w := &bbWalk{c: c, budget: bbVisitBudget}
	// Sanity check: out-of-range pointers are cleared, mapping blocks
	// before what they map (ext2fs_block_iterate without depth order).
	if w.sanitize(n, u.Out); w.err != nil {
		return w.err
	}
	list := &bbList{}
	if !u.Replace {
		c.bbInodeList(n, w, list)
		if w.err != nil {
			return w.err
		}
	}
	r, err := u.Open()
	if err != nil {
		return &BadBlocksError{Msg: err.Error()}
	}
	err = readBadBlocksNumbers(r, list, f.FirstDataBlock, f.BlocksCount, u.Out)
	r.Close()
	if err != nil {
		return err
	}
	fmt.Fprintf(u.Out, "%s: Updating bad block inode.\n", u.Device)
	return c.rebuildBadBlocksInode(n, list.sorted(), w)
}

// readBadBlocksNumbers adds the numbers of r to the list as
// ext2fs_read_bb_FILE does: each line (read in pieces of at most 127
// bytes, as fgets with a 128-byte buffer) starts with an unsigned decimal
// number after optional blanks and sign, or is skipped; a number out of
// the filesystem is reported and ignored; one that does not fit in 32 bits
// ends the read with EOVERFLOW.
func readBadBlocksNumbers(r io.Reader, list *bbList, first, count uint64, out io.Writer) error {
	br := bufio.NewReader(r)
	line := make([]byte, 0, 128)
	for {
		line = line[:0]
		for len(line) < 127 {
			b, err := br.ReadByte()
			if err != nil {
				break
			}
			line = append(line, b)
			if b == '\n' {
				break
			}
		}
		if len(line) == 0 {
			return nil
		}
		v, ok := scanUllong(line)
		if !ok {
			continue
		}
		if v>>32 != 0 {
			return &BadBlocksError{Msg: "ext2fs_read_bb_FILE: Value too large for defined data type while reading in list of bad blocks from file"}
		}
		if v < first || v >= count {
			fmt.Fprintf(out, "Bad block %d out of range; ignored.\n", uint32(v))
			continue
		}
		list.add(v)
	}
}

// scanUllong is sscanf's "%llu": blanks, an optional sign, then decimal
// digits (at least one); overflow gives the largest value, a minus sign
// negates modulo 2^64.
func scanUllong(s []byte) (uint64, bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var v uint64
	over := false
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if v > (^uint64(0)-d)/10 {
			over = true
		}
		v = v*10 + d
	}
	if i == start {
		return 0, false
	}
	if over {
		return ^uint64(0), true
	}
	if neg {
		v = -v
	}
	return v, true
}

// bbList is a bad-block list being built (ext2fs_badblocks_list): a set,
// sorted once it is complete, so that any input order costs n log n.
type bbList struct {
	seen map[uint64]struct{}
	list []uint64
}

// add puts b in the list unless it is there (ext2fs_badblocks_list_add).
func (l *bbList) add(b uint64) {
	if l.seen == nil {
		l.seen = map[uint64]struct{}{}
	}
	if _, ok := l.seen[b]; ok {
		return
	}
	l.seen[b] = struct{}{}
	l.list = append(l.list, b)
}

// sorted returns the list in ascending order.
func (l *bbList) sorted() []uint64 {
	slices.Sort(l.list)
	return l.list
}

// bbWalk is the state of the walks over inode 1's block map.
type bbWalk struct {
	c      *Checker
	budget int
	err    error
}

// spend counts one visited pointer; false when the budget is gone.
func (w *bbWalk) spend() bool {
	if w.budget <= 0 {
		if w.err == nil {
			w.err = ErrBadBlocksUnsupported
		}
		return false
	}
	w.budget--
	return true
}

// iterate walks inode 1's block map with the library's iterator and
// flags, visit called for each pointer as the iterator's callback. At
// most the budget of pointers inside mapping blocks is visited; a
// mapping block that cannot be read (what says when) ends the walk with
// the error the command prints. It reports whether i_block changed.
func (w *bbWalk) iterate(n ondisk.Inode, flags ext2fs.BlockFlags, what string, visit func(blk *uint64, blockcnt int64) int) bool {
	it := &ext2fs.BlockIter{FS: w.c.fs, IO: libIO{w.c}, Flags: flags | ext2fs.BlockFlagStopOnError}
	changed, err := it.Iterate(n, func(blk *uint64, blockcnt int64, ref uint64, _ int) int {
		if ref != 0 && !w.spend() {
			return ext2fs.BlockAbort
		}
		return visit(blk, blockcnt)
	})
	if err != nil && w.err == nil {
		w.err = &BadBlocksError{Msg: fmt.Sprintf("%v %s", err, what)}
	}
	return changed
}

func (w *bbWalk) inRange(b uint64) bool {
	f := w.c.fs
	return b >= f.FirstDataBlock && b < f.BlocksCount
}

// sanitize is check_bb_inode_blocks: every out-of-range pointer of inode
// 1 is reported and cleared; a cleared mapping block is not descended.
func (w *bbWalk) sanitize(n ondisk.Inode, out io.Writer) {
	if w.iterate(n, 0, "while sanity checking the bad blocks inode", func(blk *uint64, _ int64) int {
		if !w.inRange(*blk) {
			fmt.Fprintf(out, "Warning: illegal block %d found in bad block inode.  Cleared.\n", *blk)
			*blk = 0
			return ext2fs.BlockChanged
		}
		return 0
	}) {
		w.c.writeInode(ondisk.BadBlocksIno, n)
	}
}

// bbInodeList is ext2fs_read_bb_inode: the in-range data blocks of inode
// 1, sorted and unique.
func (c *Checker) bbInodeList(n ondisk.Inode, w *bbWalk, list *bbList) {
	w.iterate(n, ext2fs.BlockFlagReadOnly, "while reading the bad blocks inode", func(blk *uint64, blockcnt int64) int {
		switch {
		case !w.inRange(*blk) && blockcnt < 0:
			*blk = 0 // not followed (the iterator's copy only)
		case !w.inRange(*blk):
		case blockcnt >= 0:
			list.add(*blk)
		}
		return 0
	})
}

// bbRebuild is the state of ext2fs_update_bb_inode.
type bbRebuild struct {
	w    *bbWalk
	d    *diskBitmaps
	ind  []uint64 // mapping blocks freed by the clear walk, for reuse
	next int      // next entry of ind to reuse
	list []uint64
	pos  int // next entry of list
	full bool
}

// rebuildBadBlocksInode is ext2fs_update_bb_inode: the old blocks of inode
// 1 are released (its mapping blocks kept for reuse), the listed blocks
// are mapped in order with new mapping blocks as needed, and i_blocks,
// i_size and the times are set.
func (c *Checker) rebuildBadBlocksInode(n ondisk.Inode, list []uint64, w *bbWalk) error {
	f := c.fs
	d := c.loadBitmaps()
	c.applyOrphanEdits(d)
	rb := &bbRebuild{w: w, d: d, list: list}
	rb.clear(n)
	if w.err != nil {
		return w.err
	}
	ib := n.IBlock()
	clear(ib[:60])
	aborted := false
	for i := 0; i < 12; i++ {
		b, ok := rb.nextBad()
		if !ok {
			aborted = true
			break
		}
		binary.LittleEndian.PutUint32(ib[4*i:], uint32(b))
	}
	for level := 1; level <= 3 && !aborted && w.err == nil; level++ {
		blk, stop := rb.mapping(level)
		binary.LittleEndian.PutUint32(ib[4*(11+level):], uint32(blk))
		aborted = stop
	}
	if w.err != nil {
		// The iterator writes the inode it changed before failing.
		c.writeInode(ondisk.BadBlocksIno, n)
		return w.err
	}
	now := uint32(c.opt.Now.Unix())
	binary.LittleEndian.PutUint32(n[bbOffAtime:], now)
	binary.LittleEndian.PutUint32(n[bbOffMtime:], now)
	if n.Ctime() == 0 {
		binary.LittleEndian.PutUint32(n[bbOffCtime:], now)
	}
	count := uint64(rb.pos)
	if c.sb.HasRoCompat(ondisk.RoCompatHugeFile) && n.Flags()&ondisk.FlagHugeFile != 0 {
		n.SetBlocks(count)
	} else {
		n.SetBlocks(count * uint64(f.BlockSize/512))
	}
	n.SetSize(count * uint64(f.BlockSize))
	c.writeInode(ondisk.BadBlocksIno, n)
	return nil
}

// clear is clear_bad_block_proc over the depth-first walk: every block is
// released, each mapping block after what it maps, and remembered for
// reuse.
func (rb *bbRebuild) clear(n ondisk.Inode) {
	w := rb.w
	w.iterate(n, ext2fs.BlockFlagDepthTraverse, "while updating bad block inode", func(blk *uint64, blockcnt int64) int {
		if blockcnt < 0 {
			rb.ind = append(rb.ind, *blk)
		}
		if w.inRange(*blk) {
			rb.stats(*blk, -1)
		}
		*blk = 0
		return ext2fs.BlockChanged
	})
}

// nextBad returns the next listed block, marked in use; false when the
// list is exhausted (the iterator then stops).
func (rb *bbRebuild) nextBad() (uint64, bool) {
	if rb.pos >= len(rb.list) {
		return 0, false
	}
	b := rb.list[rb.pos]
	rb.pos++
	rb.stats(b, +1)
	return b, true
}

// mapping allocates a mapping block of the given level (1: indirect) and
// fills it from the list; stop reports that the list ran out (or an
// allocation failed). The block is returned even when nothing went in.
func (rb *bbRebuild) mapping(level int) (blk uint64, stop bool) {
	w := rb.w
	c := w.c
	blk, ok := rb.newMapBlock()
	if !ok {
		return 0, true
	}
	buf := make([]byte, c.fs.BlockSize)
	c.writeBlockUncounted(blk, buf)
	dirty := false
	for i := 0; i+4 <= len(buf); i += 4 {
		var e uint64
		if level == 1 {
			e, ok = rb.nextBad()
			stop = !ok
		} else {
			e, stop = rb.mapping(level - 1)
		}
		if e != 0 {
			binary.LittleEndian.PutUint32(buf[i:], uint32(e))
			dirty = true
		}
		if stop || w.err != nil {
			stop = true
			break
		}
	}
	if dirty {
		c.writeBlockUncounted(blk, buf)
	}
	return blk, stop
}

// newMapBlock takes a freed mapping block that is still free, else the
// first free block of the on-disk bitmap (ext2fs_new_block with no goal),
// and marks it in use.
func (rb *bbRebuild) newMapBlock() (uint64, bool) {
	c := rb.w.c
	f := c.fs
	for rb.next < len(rb.ind) {
		b := rb.ind[rb.next]
		rb.next++
		if !rb.d.blocks.Test(b) {
			rb.stats(b, +1)
			return b, true
		}
	}
	b := rb.d.blocks.NextClear(f.FirstDataBlock)
	if b >= f.BlocksCount {
		rb.w.err = &BadBlocksError{Msg: "ext2fs_update_bb_inode: " + string(ext2fs.ErrBlockAllocFail) + " while updating bad block inode"}
		return 0, false
	}
	rb.stats(b, +1)
	return b, true
}

// stats is ext2fs_block_alloc_stats2 on the on-disk bitmap: the bit, the
// group's free count (unconditionally) and BLOCK_UNINIT flag, the
// superblock's free count. A group losing BLOCK_UNINIT keeps the bitmap
// the library synthesised for it, so its bits are recorded as edits.
func (rb *bbRebuild) stats(blk uint64, inuse int) {
	c := rb.w.c
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
			c.markBlockOnDisk(b, rb.d.blocks.Test(b))
		}
	}
	if inuse > 0 {
		rb.d.blocks.Set(blk)
	} else {
		rb.d.blocks.Clear(blk)
	}
	c.markBlockOnDisk(blk, inuse > 0)
	gd.SetFreeBlocks(uint32(int64(gd.FreeBlocks()) - int64(inuse)))
	gd.SetFlags(gd.Flags() &^ ondisk.BgBlockUninit)
	gd.UpdateChecksum(c.sb, g)
	c.sb.SetFreeBlocksCount(uint64(int64(c.sb.FreeBlocksCount()) - int64(inuse)))
}
