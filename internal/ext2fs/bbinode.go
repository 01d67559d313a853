package ext2fs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"

	"gofsck/internal/bitmap"
	"gofsck/internal/ondisk"
)

// The bad-block inode (inode 1) and bad-block lists: ext2fs_read_bb_FILE,
// ext2fs_read_bb_inode and ext2fs_update_bb_inode (lib/ext2fs/read_bb.c,
// read_bb_file.c, bb_inode.c).

// BadBlocksList is a bad-block list being built (ext2fs_badblocks_list):
// a set, sorted once it is complete, so that any input order costs
// n log n.
type BadBlocksList struct {
	seen map[uint64]struct{}
	list []uint64
}

// Add puts b in the list unless it is there (ext2fs_badblocks_list_add).
func (l *BadBlocksList) Add(b uint64) {
	if l.seen == nil {
		l.seen = map[uint64]struct{}{}
	}
	if _, ok := l.seen[b]; ok {
		return
	}
	l.seen[b] = struct{}{}
	l.list = append(l.list, b)
}

// Sorted returns the list in ascending order.
func (l *BadBlocksList) Sorted() []uint64 {
	slices.Sort(l.list)
	return l.list
}

// ReadBBFile adds the numbers of r to list as ext2fs_read_bb_FILE does:
// each line (read in pieces of at most 127 bytes, as fgets with a
// 128-byte buffer) starts with an unsigned decimal number after optional
// blanks and sign, or is skipped; a number outside [first, count) is
// given to invalid (the caller's callback) and ignored; one that does not
// fit in 32 bits ends the read with ErrOverflow (EOVERFLOW).
func ReadBBFile(r io.Reader, list *BadBlocksList, first, count uint64, invalid func(blk uint32)) error {
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
			return ErrOverflow
		}
		if v < first || v >= count {
			invalid(uint32(v))
			continue
		}
		list.Add(v)
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

// ErrBBWalkBudget ends a BBWalk that visited more than its budget of
// pointers inside mapping blocks (a hostile map can point at the same
// mapping blocks again and again).
var ErrBBWalkBudget = errors.New("bad-block inode walk over budget")

// BBWalk is the state of the library's walks over inode 1's block map.
// Fsys reads and writes its mapping blocks (tree-block writes) and the
// inode; Err is the first error met, ErrBBWalkBudget or the com_err line
// the caller prints (without the program name).
type BBWalk struct {
	Fsys   *Filsys
	Budget int
	Err    error
}

// spend counts one visited pointer; false when the budget is gone.
func (w *BBWalk) spend() bool {
	if w.Budget <= 0 {
		if w.Err == nil {
			w.Err = ErrBBWalkBudget
		}
		return false
	}
	w.Budget--
	return true
}

// Iterate walks n's block map with the library's iterator and flags,
// visit called for each pointer as the iterator's callback. A mapping
// block that cannot be read ends the walk with its error followed by
// what. It reports whether i_block changed.
func (w *BBWalk) Iterate(n ondisk.Inode, flags BlockFlags, what string, visit func(blk *uint64, blockcnt int64) int) bool {
	it := &BlockIter{FS: w.Fsys.FS, IO: w.Fsys.IO, Flags: flags | BlockFlagStopOnError}
	changed, err := it.Iterate(n, func(blk *uint64, blockcnt int64, ref uint64, _ int) int {
		if ref != 0 && !w.spend() {
			return BlockAbort
		}
		return visit(blk, blockcnt)
	})
	if err != nil && w.Err == nil {
		w.Err = fmt.Errorf("%v %s", err, what)
	}
	return changed
}

// InRange reports whether b is a block of the filesystem's data area.
func (w *BBWalk) InRange(b uint64) bool {
	f := w.Fsys.FS
	return b >= f.FirstDataBlock && b < f.BlocksCount
}

// ReadBBInode is ext2fs_read_bb_inode: the in-range data blocks of n
// (inode 1) added to list.
func (w *BBWalk) ReadBBInode(n ondisk.Inode, list *BadBlocksList) {
	w.Iterate(n, BlockFlagReadOnly, "while reading the bad blocks inode", func(blk *uint64, blockcnt int64) int {
		switch {
		case !w.InRange(*blk) && blockcnt < 0:
			*blk = 0 // not followed (the iterator's copy only)
		case !w.InRange(*blk):
		case blockcnt >= 0:
			list.Add(*blk)
		}
		return 0
	})
}

// bbRebuild is the state of ext2fs_update_bb_inode.
type bbRebuild struct {
	w     *BBWalk
	used  *bitmap.Bitmap
	stats func(blk uint64, inuse int)
	ind   []uint64 // mapping blocks freed by the clear walk, for reuse
	next  int      // next entry of ind to reuse
	list  []uint64
	pos   int // next entry of list
}

// UpdateBBInode is ext2fs_update_bb_inode on n (inode 1, block-mapped):
// its old blocks are released (its mapping blocks kept for reuse), the
// sorted list is mapped in order with new mapping blocks as needed, and
// i_blocks, i_size and the times (now) are set and the inode written.
// used is the block bitmap new mapping blocks are searched in (the
// library's ext2fs_new_block with no goal); stats is
// ext2fs_block_alloc_stats2, which must update used too. On an error
// (w.Err) the inode is written as the iterator left it.
func (w *BBWalk) UpdateBBInode(n ondisk.Inode, list []uint64, used *bitmap.Bitmap, stats func(blk uint64, inuse int), now uint32) {
	f := w.Fsys.FS
	rb := &bbRebuild{w: w, used: used, stats: stats, list: list}
	rb.clear(n)
	if w.Err != nil {
		return
	}
	clear(n.IBlock())
	aborted := false
	for i := 0; i < ondisk.NDirBlocks; i++ {
		b, ok := rb.nextBad()
		if !ok {
			aborted = true
			break
		}
		n.SetBlock(i, uint32(b))
	}
	for level := 1; level <= 3 && !aborted && w.Err == nil; level++ {
		blk, stop := rb.mapping(level)
		n.SetBlock(ondisk.IndBlock-1+level, uint32(blk))
		aborted = stop
	}
	if w.Err != nil {
		// The iterator writes the inode it changed before failing.
		w.Fsys.IO.WriteInode(ondisk.BadBlocksIno, n)
		return
	}
	n.SetAtime(now)
	n.SetMtime(now)
	if n.Ctime() == 0 {
		n.SetCtime(now)
	}
	count := uint64(rb.pos)
	if f.SB.HasRoCompat(ondisk.RoCompatHugeFile) && n.Flags()&ondisk.FlagHugeFile != 0 {
		n.SetBlocks(count)
	} else {
		n.SetBlocks(count * uint64(f.BlockSize/512))
	}
	n.SetSize(count * uint64(f.BlockSize))
	w.Fsys.IO.WriteInode(ondisk.BadBlocksIno, n)
}

// clear is clear_bad_block_proc over the depth-first walk: every block is
// released, each mapping block after what it maps, and remembered for
// reuse.
func (rb *bbRebuild) clear(n ondisk.Inode) {
	w := rb.w
	w.Iterate(n, BlockFlagDepthTraverse, "while updating bad block inode", func(blk *uint64, blockcnt int64) int {
		if blockcnt < 0 {
			rb.ind = append(rb.ind, *blk)
		}
		if w.InRange(*blk) {
			rb.stats(*blk, -1)
		}
		*blk = 0
		return BlockChanged
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
	blk, ok := rb.newMapBlock()
	if !ok {
		return 0, true
	}
	buf := make([]byte, w.Fsys.FS.BlockSize)
	w.Fsys.IO.WriteBlock(blk, buf)
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
			ondisk.MapBlock(buf).SetPtr(i/4, uint32(e))
			dirty = true
		}
		if stop || w.Err != nil {
			stop = true
			break
		}
	}
	if dirty {
		w.Fsys.IO.WriteBlock(blk, buf)
	}
	return blk, stop
}

// newMapBlock takes a freed mapping block that is still free, else the
// first free block of the bitmap (ext2fs_new_block with no goal), and
// marks it in use.
func (rb *bbRebuild) newMapBlock() (uint64, bool) {
	f := rb.w.Fsys.FS
	for rb.next < len(rb.ind) {
		b := rb.ind[rb.next]
		rb.next++
		if !rb.used.Test(b) {
			rb.stats(b, +1)
			return b, true
		}
	}
	b := rb.used.NextClear(f.FirstDataBlock)
	if b >= f.BlocksCount {
		rb.w.Err = errors.New("ext2fs_update_bb_inode: " + string(ErrBlockAllocFail) + " while updating bad block inode")
		return 0, false
	}
	rb.stats(b, +1)
	return b, true
}
