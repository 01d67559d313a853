package fcreplay

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"time"

	"gofsck/internal/bitmap"
	"gofsck/internal/dirhash"
	"gofsck/internal/ext2fs"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/ondisk/jbd2"
	"gofsck/internal/qsort"
)

// fcExt is struct ext2fs_extent in an extent list.
type fcExt struct {
	lblk, pblk uint64
	len        uint32
	uninit     bool
}

func (e fcExt) end() uint64  { return e.lblk + uint64(e.len) - 1 }
func (e fcExt) pend() uint64 { return e.pblk + uint64(e.len) - 1 }

// fcReplay is e2fsck's fc_replay_state during PASS_REPLAY.
type fcReplay struct {
	h      Host
	fs     *fs.FS
	sb     ondisk.Superblock
	now    time.Time
	device string
	// fs->block_map and fs->inode_map, from Host.LoadBitmaps.
	blocks, inodes *bitmap.Bitmap
	orig           []byte // fs->orig_super: the superblock last written
	state          uint16 // s_state before the replay
	tags           int    // records left to apply
	started        bool
	// The extent list of one inode (fc_extent_list).
	listIno uint32
	list    []fcExt
	freed   uint64
	// work counts the bitmap bits the list edits touch: a hostile journal
	// could make e2fsck's quadratic marking run for hours, gofsck gives
	// up (as unsupported) past fcWorkLimit.
	work uint64
}

// fcWorkLimit bounds fcReplay.work.
const fcWorkLimit = 1 << 28

// fcNodeLimit bounds the tree nodes countBlocks reads.
const fcNodeLimit = 1 << 20

// Replay applies the fast commits counted by the scan (p.Tags records)
// to the filesystem of p through h. It returns an *UnsupportedError when
// the emulation does not cover them, a *Failure when e2fsck's replay
// fails (what was written stays written), other errors for the device's.
func Replay(p Params, h Host) error {
	f := p.FS
	jn := p.Journal
	r := &fcReplay{h: h, fs: f, sb: p.Super, now: p.Now, device: p.Device, tags: p.Tags, orig: p.OrigSuper}
	l := jn.Layout()
	buf := make([]byte, f.BlockSize)
	last := uint64(jn.Superblock().MaxLen())
	for blk := l.FCFirst; blk <= last; blk++ {
		// jread comes first: a replay whose last record ends the area's
		// last block fails there, unfinished, in e2fsck.
		if err := jn.ReadBlock(blk, buf); err != nil {
			return Unsupported("fast commit block %d unreadable: %v", blk, err)
		}
		if r.started && r.tags == 0 {
			return r.done()
		}
		stop, err := r.block(buf)
		if err != nil {
			return err
		}
		if stop {
			return nil
		}
	}
	return Unsupported("fast commits run off the journal")
}

// block is one PASS_REPLAY call of ext4_fc_replay. It reports whether the
// replay is over.
func (r *fcReplay) block(b []byte) (bool, error) {
	if r.tags == 0 {
		// Nothing to apply (not reached: the caller checks the scan).
		return true, nil
	}
	if !r.started {
		if err := r.start(); err != nil {
			return true, err
		}
	}
	end := len(b) - 1
	for cur := 0; cur < end; {
		if r.tags == 0 {
			return true, r.done()
		}
		if cur+jbd2.FCTagHeaderSize > len(b) {
			// e2fsck reads the header past its buffer (heap bytes,
			// not deterministic). Not reached: the scan counts no
			// record after such a header.
			return true, Unsupported("record header past the block")
		}
		tag, n, _ := jbd2.DecodeFCTagHeader(b[cur:])
		val := cur + jbd2.FCTagHeaderSize
		r.tags--
		// The handlers read their structures from the value whatever
		// its length says (the bytes after a short record are the
		// next records'); each checks that what it reads is in the
		// block.
		v := b[val:]
		var err error
		switch tag {
		case jbd2.FCCreat, jbd2.FCLink:
			err = r.linkAndCreate(v, n)
		case jbd2.FCUnlink:
			err = r.unlink(v, n)
		case jbd2.FCAddRange:
			err = r.addRange(v)
		case jbd2.FCDelRange:
			err = r.delRange(v)
		case jbd2.FCInode:
			err = r.inode(v)
		case jbd2.FCTail:
			err = r.flushExtents(0)
		case jbd2.FCPad, jbd2.FCHead:
		default:
			// Not reached: the scan stops at an unknown tag before
			// the tail that counts it.
			err = errFCCanceled
		}
		if err != nil {
			return true, err
		}
		cur = val + n
	}
	return false, nil
}

// start is the first replay call: bitmaps read, the superblock marked as
// being replayed and flushed.
func (r *fcReplay) start() error {
	r.started = true
	// The library's allocator and free path work on fs->block_map:
	// the host points its allocation at the bitmaps it returns.
	r.blocks, r.inodes = r.h.LoadBitmaps()
	if len(r.orig) < ondisk.SuperblockSize {
		return Unsupported("no superblock last written")
	}
	r.orig = bytes.Clone(r.orig[:ondisk.SuperblockSize])
	r.state = r.sb.State()
	r.sb.SetState(r.state | ondisk.StateError | stateFCReplay)
	r.flush()
	return r.h.WriteError()
}

// flush is ext2fs_flush with EXT2_FLAG_MASTER_SB_ONLY: s_wtime set, the
// primary descriptors written, the primary superblock written where it
// differs from the one last written (write_primary_superblock).
func (r *fcReplay) flush() {
	f := r.fs
	sb := r.sb
	sb.SetWtime(uint32(r.now.Unix()))
	sb.SetBlockGroupNr(0)
	bs := uint64(f.BlockSize)
	gdt := f.GDT()
	oldBlocks := uint64(f.DescBlocks)
	metaBG := r.sb.HasIncompat(ondisk.IncompatMetaBG)
	if metaBG {
		oldBlocks = min(oldBlocks, uint64(r.sb.FirstMetaBG()))
	}
	if l := f.Layout(0); l.OldDesc != 0 && oldBlocks != 0 {
		r.h.WriteAt(int64(l.OldDesc*bs), gdt[:oldBlocks*bs])
	}
	if metaBG {
		// ext2fs_flush writes every meta_bg descriptor copy, backups
		// included, whatever EXT2_FLAG_MASTER_SB_ONLY says.
		for g := uint32(0); g < f.Groups; g++ {
			l := f.Layout(g)
			if l.MetaBGDesc == 0 {
				continue
			}
			off := uint64(g/f.DescPerBlock) * bs
			if off+bs > uint64(len(gdt)) {
				continue
			}
			r.h.WriteAt(int64(l.MetaBGDesc*bs), gdt[off:off+bs])
		}
	}
	sb.SetChecksum()
	cur := sb[:ondisk.SuperblockSize]
	for i := 0; i < ondisk.SuperblockSize; i += 2 {
		if cur[i] == r.orig[i] && cur[i+1] == r.orig[i+1] {
			continue
		}
		j := i + 2
		for j < ondisk.SuperblockSize && (cur[j] != r.orig[j] || cur[j+1] != r.orig[j+1]) {
			j += 2
		}
		r.h.WriteAt(ondisk.SuperblockOffset+int64(i), cur[i:j])
		i = j
	}
	copy(r.orig, cur)
}

// done is replay_done: counts from the bitmaps, bitmaps written,
// descriptors checksummed, the state restored, flushed.
func (r *fcReplay) done() error {
	r.summaryStats()
	r.h.StoreBitmaps()
	r.sb.SetState(r.state)
	r.flush()
	return r.h.WriteError()
}

// summaryStats is ext2fs_calculate_summary_stats(fs, 0) of 1.47.0. It
// walks blocks, not clusters: with bigalloc each block of a free cluster
// counts as free, so the group counts are blocks and the superblock's
// total, scaled again by the cluster ratio, is ratio times too large (in
// a C int). e2fsck's pass 5 then corrects them.
func (r *fcReplay) summaryStats() {
	f := r.fs
	bpg := uint64(f.BlocksPerGroup)
	var total, groupFree int32
	var count uint64
	uninit := true
	g := uint32(0)
	for blk := f.FirstDataBlock; blk < f.BlocksCount; blk++ {
		if !r.blocks.Test(f.ClusterOf(blk)) {
			groupFree++
			total++
		} else {
			uninit = false
		}
		count++
		if count == bpg || blk == f.BlocksCount-1 {
			gd := f.Group(g)
			gd.SetFreeBlocks(uint32(groupFree))
			if uninit && blk != f.BlocksCount-1 {
				gd.SetFlags(gd.Flags() | ondisk.BgBlockUninit)
			} else {
				gd.SetFlags(gd.Flags() &^ ondisk.BgBlockUninit)
			}
			count, groupFree, uninit = 0, 0, true
			g++
		}
	}
	total <<= f.ClusterBits
	r.sb.SetFreeBlocksCount(uint64(int64(total)))
	ipg := f.InodesPerGroup
	var itotal, ifree uint32
	var lastAlloc, icount uint32
	g = 0
	for ino := uint32(1); ino <= f.InodesCount && ino > 0; ino++ {
		if !r.inodes.Test(uint64(ino)) {
			ifree++
			itotal++
		} else {
			lastAlloc = ino
		}
		icount++
		if icount == ipg || ino == f.InodesCount {
			gd := f.Group(g)
			if lastAlloc != 0 {
				gd.SetFlags(gd.Flags() &^ ondisk.BgInodeUninit)
				gd.SetItableUnused(ipg - lastAlloc%ipg)
			} else {
				gd.SetFlags(gd.Flags() | ondisk.BgInodeUninit)
				gd.SetItableUnused(0)
			}
			gd.SetFreeInodes(ifree)
			g++
			icount, ifree, lastAlloc = 0, 0, 0
		}
	}
	r.sb.SetFreeInodesCount(itotal)
}

// readInode reads inode ino whole (the library's read with checksum
// errors ignored); ext2fs.ErrBadInodeNum when ino is out of range.
func (r *fcReplay) readInode(ino uint32) (ondisk.Inode, error) {
	f := r.fs
	if ino == 0 || ino > f.InodesCount {
		return nil, ext2fs.ErrBadInodeNum
	}
	n := make(ondisk.Inode, f.InodeSize)
	if err := f.ReadInode(ino, n, make([]byte, f.BlockSize)); err != nil {
		return nil, Unsupported("inode %d unreadable: %v", ino, err)
	}
	return n, nil
}

// inode is ext4_fc_handle_inode.
func (r *fcReplay) inode(v []byte) error {
	f := r.fs
	ino, raw, ok := jbd2.DecodeFCInode(v)
	if !ok {
		return errPastBlock()
	}
	ilen := ondisk.GoodOldInodeSize
	if f.InodeSize > ondisk.GoodOldInodeSize {
		if err := fcReads(raw, ondisk.GoodOldInodeSize+2); err != nil {
			return err
		}
		extra := int(ondisk.Inode(raw).ExtraIsize())
		if extra < 4 || extra > f.InodeSize-ondisk.GoodOldInodeSize {
			return r.libError("ext4_fc_handle_inode", lineHandleInode, ext2fs.ErrFilesystemCorrupted)
		}
		ilen += extra
	}
	if err := fcReads(raw, ilen); err != nil {
		return err
	}
	if err := r.flushExtents(ino); err != nil {
		return err
	}
	n, err := r.readInode(ino)
	if err != nil {
		return r.libError("ext4_fc_handle_inode", lineHandleInode, err)
	}
	const iBlockOff, iGenerationOff = ondisk.IBlockOffset, ondisk.GenerationOffset
	copy(n[:iBlockOff], raw[:iBlockOff])
	copy(n[iGenerationOff:ilen], raw[iGenerationOff:ilen])
	// ext4_fc_replay_fixup_iblocks
	if n.Flags()&ondisk.FlagExtents != 0 {
		if ondisk.ExtentHeader(n.IBlock()).Magic() != ondisk.ExtentMagic {
			h := ondisk.ExtentHeader(n.IBlock()[:ondisk.ExtentHeaderSize])
			clear(h)
			h.SetMagic(ondisk.ExtentMagic)
			h.SetMax(4)
		}
	} else if n.Flags()&ondisk.FlagInlineData != 0 {
		copy(n.IBlock(), raw[iBlockOff:iBlockOff+ondisk.IBlockSize])
	}
	r.iblkSet(n, r.countBlocks(n))
	r.h.WriteInode(ino, n)
	if n.LinksCount() != 0 {
		r.inodes.Set(uint64(ino))
	} else {
		r.inodes.Clear(uint64(ino))
	}
	return r.h.WriteError()
}

// iblkSet is ext2fs_iblk_set.
func (r *fcReplay) iblkSet(n ondisk.Inode, b uint64) {
	huge := r.sb.HasRoCompat(ondisk.RoCompatHugeFile)
	if !huge || n.Flags()&ondisk.FlagHugeFile == 0 {
		b *= uint64(r.fs.BlockSize / 512)
	}
	b <<= r.fs.ClusterBits
	n.SetBlocksLo(uint32(b))
	if huge {
		n.SetBlocksHi(uint16(b >> 32))
	}
}

// countBlocks is ext2fs_count_blocks: the blocks of the leaf extents, plus
// one for each change of the logical end of the index nodes above the
// leaf as the walk goes (the root's end, the file size in blocks, counts
// once). An inode without an extent tree counts 0.
func (r *fcReplay) countBlocks(n ondisk.Inode) uint64 {
	f := r.fs
	if allZero(n.IBlock()) {
		// ext2fs_extent_open2 gives an all-zero i_block an empty root
		// and the extents flag, in the caller's inode.
		h := ondisk.ExtentHeader(n.IBlock())
		h.SetMagic(ondisk.ExtentMagic)
		h.SetMax(4)
		n.SetFlags(n.Flags() | ondisk.FlagExtents)
	}
	root := ondisk.ExtentHeader(n.IBlock())
	if n.Flags()&ondisk.FlagExtents == 0 || root.Verify() != nil {
		return 0
	}
	depth := int(root.Depth())
	if depth > maxExtentDepth {
		return 0
	}
	var count uint64
	lastEnd := make([]uint64, depth)
	for i := range lastEnd {
		lastEnd[i] = ^uint64(0)
	}
	ends := make([]uint64, depth+1)
	ends[0] = (n.Size() + uint64(f.BlockSize) - 1) >> f.BlockBits
	stopped := false
	nodes := 0
	var walk func(h ondisk.ExtentHeader, level int)
	walk = func(h ondisk.ExtentHeader, level int) {
		for i := 0; i < int(h.Entries()) && !stopped; i++ {
			if level == depth {
				count += uint64(h.Leaf(i).Len)
				for k := 0; k < depth; k++ {
					if lastEnd[k] != ends[k] {
						count++
						lastEnd[k] = ends[k]
					}
				}
				continue
			}
			if i+1 < int(h.Entries()) {
				ends[level+1] = uint64(h.Idx(i + 1).Lblk)
			} else {
				ends[level+1] = ends[level]
			}
			if nodes++; nodes > fcNodeLimit {
				stopped = true
				return
			}
			buf := make([]byte, f.BlockSize)
			if err := f.ReadBlock(h.Idx(i).Leaf, buf); err != nil {
				stopped = true
				return
			}
			ch := ondisk.ExtentHeader(buf)
			if ch.Verify() != nil || ch.Entries() == 0 || int(ch.Depth()) != depth-level-1 {
				stopped = true
				return
			}
			walk(ch, level+1)
		}
	}
	walk(root, 0)
	return count
}

// flushExtents is ext4_fc_flush_extents: the held extent list is written
// back unless the next record is for the same inode.
func (r *fcReplay) flushExtents(ino uint32) error {
	if r.listIno == ino || r.listIno == 0 {
		return nil
	}
	err := r.rewriteExtentTree()
	r.listIno, r.list, r.freed = 0, nil, 0
	return err
}

// rewriteExtentTree is e2fsck_rewrite_extent_tree.
func (r *fcReplay) rewriteExtentTree() error {
	ino := r.listIno
	n, err := r.readInode(ino)
	if err != nil {
		return err
	}
	if n.Flags()&ondisk.FlagInlineData != 0 {
		return nil
	}
	segs := make([]Seg, 0, len(r.list))
	for _, e := range r.list {
		if e.len == 0 {
			continue
		}
		segs = append(segs, Seg{Lblk: e.lblk, Pblk: e.pblk, Len: uint64(e.len), Uninit: e.uninit})
	}
	if err := r.h.RewriteExtents(ino, n, segs, r.freed); err != nil {
		return Unsupported("rewriting the extents of inode %d: %v", ino, err)
	}
	r.iblkSet(n, r.countBlocks(n))
	r.h.WriteInode(ino, n)
	return r.h.WriteError()
}

// readExtents is ext4_fc_read_extents: the list of ino's extents, read
// with load_extents (index blocks freed) unless already held.
func (r *fcReplay) readExtents(ino uint32) error {
	if r.listIno == ino {
		return nil
	}
	r.listIno = ino
	n, err := r.readInode(ino)
	if err != nil {
		return r.libError("ext4_fc_read_extents", lineReadExtents, err)
	}
	segs, freed, err := r.h.LoadExtents(ino, n)
	switch {
	case err == nil:
	case err.Error() == string(ext2fs.ErrInodeNotExtent) || errors.Is(err, ext2fs.ErrExtentHeaderBad):
		// ext2fs_extent_open's refusals, before any block is read or
		// freed.
		return r.libError("ext4_fc_read_extents", lineReadExtents, err)
	default:
		// A tree block unreadable (e2fsck's I/O handler would ask),
		// a bad checksum or a cyclic tree: not emulated.
		return Unsupported("reading the extents of inode %d: %v", ino, err)
	}
	r.list = r.list[:0]
	for _, s := range segs {
		if s.Len >= 1<<32 {
			return Unsupported("extent too long")
		}
		r.list = append(r.list, fcExt{lblk: s.Lblk, pblk: s.Pblk, len: uint32(s.Len), uninit: s.Uninit})
	}
	r.freed = freed
	return nil
}

// decodeExtent is ext2fs_decode_extent of a 12-byte on-disk extent.
func decodeExtent(b []byte) fcExt {
	x := ondisk.ExtentEntry(b)
	e := fcExt{lblk: uint64(x.Lblk()), len: uint32(x.RawLen()), pblk: x.Start()}
	if e.len > ext2fs.ExtInitMaxLen {
		e.len -= ext2fs.ExtInitMaxLen
		e.uninit = true
	}
	return e
}

// addRange is ext4_fc_handle_add_extent.
func (r *fcReplay) addRange(v []byte) error {
	ino, ext, ok := jbd2.DecodeFCAddRange(v)
	if !ok {
		return errPastBlock()
	}
	return r.editExtents(ino, decodeExtent(ext), false)
}

// delRange is ext4_fc_handle_del_range.
func (r *fcReplay) delRange(v []byte) error {
	ino, lblk, n, ok := jbd2.DecodeFCDelRange(v)
	if !ok {
		return errPastBlock()
	}
	return r.editExtents(ino, fcExt{lblk: uint64(lblk), len: n}, true)
}

// editExtents applies a range record to ino's extent list: the list held
// for another inode is written back, ino's read, and ex added (or, with
// del, punched).
func (r *fcReplay) editExtents(ino uint32, ex fcExt, del bool) error {
	if err := r.flushExtents(ino); err != nil {
		return err
	}
	if err := r.readExtents(ino); err != nil {
		return err
	}
	return r.modify(ex, del)
}

// markRange is ext2fs_mark_block_bitmap_range2 (used) or
// ext2fs_unmark_block_bitmap_range2 on fs->block_map: the range is
// widened to whole clusters; a range not wholly inside the bitmap is left
// alone with the library's warning on stderr.
func (r *fcReplay) markRange(b uint64, n uint32, used bool) {
	f := r.fs
	r.work += uint64(n)
	if r.work > fcWorkLimit {
		return
	}
	bits := f.ClusterBits
	end := b + uint64(n)
	cl := b >> bits
	end = (end + (1 << bits) - 1) >> bits
	num := uint32(end - cl)
	first, last := f.ClusterOf(f.FirstDataBlock), f.ClusterOf(f.BlocksCount-1)
	if cl < first || cl > last || cl+uint64(num)-1 > last {
		msg := ext2fs.ErrBadBlockMark
		if !used {
			msg = ext2fs.ErrBadBlockUnmark
		}
		r.diag(string(msg)+" #%d for block bitmap for %s\n", cl, r.device)
		return
	}
	for i := uint64(0); i < uint64(num); i++ {
		if used {
			r.blocks.Set(cl + i)
		} else {
			r.blocks.Clear(cl + i)
		}
	}
}

// modify is ext4_modify_extent_list: a hole is punched for ex, then (when
// adding) ex added, the list sorted and merged and every extent's blocks
// marked in use.
func (r *fcReplay) modify(ex fcExt, del bool) error {
	l := r.list
	for i := 0; i < len(l); i++ {
		if l[i].end() < ex.lblk {
			continue
		}
		if l[i].lblk > ex.end() {
			break
		}
		r.markRange(l[i].pblk, l[i].len, false)
		if l[i].lblk < ex.lblk && l[i].end() > ex.end() {
			// Split.
			l = append(l, fcExt{})
			copy(l[i+2:], l[i+1:])
			l[i+1] = l[i]
			off := cOffset(ex.end() + 1 - l[i].lblk)
			l[i+1].lblk += off
			l[i+1].pblk += off
			l[i+1].len -= uint32(off)
			l[i].len = uint32(ex.lblk - l[i].lblk)
			break
		}
		if ex.lblk <= l[i].lblk && l[i].end() <= ex.end() {
			l[i].len = 0
			continue
		}
		if l[i].end() > ex.end() {
			off := cOffset(ex.end() + 1 - l[i].lblk)
			l[i].lblk += off
			l[i].pblk += off
			l[i].len -= uint32(off)
			break
		}
		if ex.end() >= l[i].end() {
			if ex.lblk > l[i].lblk {
				l[i].len = uint32(ex.lblk - l[i].lblk)
			} else {
				l[i].len = 0
			}
		}
	}
	if ex.len != 0 && !del {
		l = append(l, ex)
	}
	l = sortAndMerge(l)
	for _, e := range l {
		r.markRange(e.pblk, e.len, true)
	}
	r.list = l
	if r.work > fcWorkLimit {
		return Unsupported("extent lists too large")
	}
	return nil
}

// cOffset is e2fsck's int offset: the 64-bit difference truncated to a C
// int, then added to 64-bit block numbers sign-extended.
func cOffset(d uint64) uint64 { return uint64(int64(int32(uint32(d)))) }

// sortAndMerge is ex_sort_and_merge, with glibc's merge sort (qsort) and
// e2fsck's comparators, the first of which is not a total order.
func sortAndMerge(l []fcExt) []fcExt {
	if len(l) < 2 {
		return l
	}
	qsort.Glibc(l, func(a, b *fcExt) int {
		if a.len < b.len {
			return 1
		}
		if a.lblk > b.lblk {
			return -1
		}
		return 0
	})
	for i := range l {
		if l[i].len == 0 {
			l = l[:i]
			break
		}
	}
	if len(l) == 0 {
		return l
	}
	qsort.Glibc(l, func(a, b *fcExt) int {
		switch {
		case a.lblk < b.lblk:
			return -1
		case a.lblk > b.lblk:
			return 1
		}
		return int(int32(a.len - b.len))
	})
	for i := 0; i < len(l)-1; {
		if l[i].end()+1 != l[i+1].lblk || l[i].pend()+1 != l[i+1].pblk || l[i].uninit != l[i+1].uninit {
			i++
			continue
		}
		l[i].len += l[i+1].len
		l = append(l[:i+1], l[i+2:]...)
	}
	return l
}

// dentry is tl_to_darg: struct ext4_fc_dentry_info and the name after it
// (n is the record's length), as the C string e2fsck makes of it (cut at
// the first NUL).
func dentry(v []byte, n int) (parent, ino uint32, name string, err error) {
	parent, ino, ok := jbd2.DecodeFCDentry(v)
	if !ok {
		return 0, 0, "", errPastBlock()
	}
	switch nameLen := n - 8; {
	case nameLen == -1:
		// malloc(0) succeeds and memcpy copies SIZE_MAX bytes: e2fsck
		// crashes.
		return 0, 0, "", Unsupported("dentry record of 7 bytes")
	case nameLen < 0:
		// malloc of a negative size fails.
		return 0, 0, "", errFCNoMem
	}
	if err := fcReads(v, n); err != nil {
		return 0, 0, "", err
	}
	nb := v[8:n]
	if i := bytes.IndexByte(nb, 0); i >= 0 {
		nb = nb[:i]
	}
	return parent, ino, string(nb), nil
}

// replayDir is ext2fs_check_directory for ext2fs_link and ext2fs_unlink:
// the library error when dir is not a directory, else its inode. (Their
// link_proc and unlink_proc compare and copy names byte for byte, whether
// the directory is casefolded or encrypted.)
func (r *fcReplay) replayDir(dir uint32) (ondisk.Inode, error) {
	n, err := r.readInode(dir)
	if err != nil {
		return nil, err
	}
	if !n.IsDir() {
		return nil, ext2fs.ErrNoDirectory
	}
	return n, nil
}

// dxLink is the library's dx_link when the leaf the name hashes to has
// room: dx_lookup walks the index by the name's hash and link_proc runs
// over that leaf. A full leaf (which the library splits, growing the
// directory) is not emulated.
func (r *fcReplay) dxLink(dir uint32, n ondisk.Inode, name string, ino uint32, ft uint8) error {
	f := r.fs
	bs := f.BlockSize
	lblks, pblks := r.h.DirBlocks(n)
	bmap := func(l uint64) (uint64, bool) {
		for i, x := range lblks {
			if uint64(x) == l {
				return pblks[i], pblks[i] < f.BlocksCount
			}
		}
		return 0, false
	}
	buf := make([]byte, bs)
	read := func(l uint64) (uint64, error) {
		pb, ok := bmap(l)
		if !ok || f.ReadBlock(pb, buf) != nil {
			return 0, Unsupported("directory %d block %d unreadable", dir, l)
		}
		return pb, nil
	}
	if _, err := read(0); err != nil {
		return err
	}
	info, _ := ondisk.DecodeDxRootInfo(buf)
	alg := dirhash.Version(info.HashVersion)
	if alg != dirhash.Legacy && alg != dirhash.HalfMD4 && alg != dirhash.TEA {
		return ext2fs.ErrDirhashUnsupp
	}
	if r.sb.Flags()&ondisk.FlagUnsignedHash != 0 {
		alg = alg.Unsigned()
	}
	levels := int(info.IndirectLevels)
	maxLevels := 2
	if r.sb.HasIncompat(ondisk.IncompatLargeDir) {
		maxLevels = 3
	}
	if levels >= maxLevels {
		return ext2fs.ErrDirCorrupted
	}
	seed := r.sb.HashSeed()
	hash, _, err := dirhash.Hash(alg, []byte(name), &seed)
	if err != nil {
		return Unsupported("hashing %q: %v", name, err)
	}
	var leaf uint64
	for level := 0; level <= levels; level++ {
		if level > 0 {
			if _, err := read(leaf); err != nil {
				return err
			}
		}
		off, err := fcDxCountLimit(bs, buf)
		if err != nil {
			return err
		}
		limit, count, _ := ondisk.DxCountLimit(buf, off)
		if count == 0 || count > limit {
			return ext2fs.ErrDirCorrupted
		}
		// dx_search_entry: the last entry whose hash is not above the
		// name's (entry 0 has none).
		p, q := 1, count-1
		for p <= q {
			m := p + (q-p)/2
			if h, _, _ := ondisk.DxEntry(buf, off, m); h > hash {
				q = m - 1
			} else {
				p = m + 1
			}
		}
		_, blk, _ := ondisk.DxEntry(buf, off, p-1)
		leaf = uint64(blk & 0x0fffffff)
	}
	pb, err := read(leaf)
	if err != nil {
		return err
	}
	if !r.sb.HasIncompat(ondisk.IncompatFiletype) {
		ft = 0
	}
	done, changed, lerr := ext2fs.LinkInBlock(buf, bs, f.MetadataCsum, name, ino, ft)
	if changed {
		r.h.WriteDirBlock(pb, buf, dir)
	}
	switch {
	case lerr != nil:
		return ext2fs.ErrDirCorrupted
	case !done:
		// dx_grow_tree: a block added with ext2fs_fallocate and the
		// leaf split, or the index grown; not emulated.
		return Unsupported("htree leaf of directory %d full", dir)
	}
	return r.h.WriteError()
}

// fcDxCountLimit is ext2fs_get_dx_countlimit: the offset of the
// count/limit header in an htree root or node block, or the library's
// error.
func fcDxCountLimit(bs int, buf []byte) (int, error) {
	le := binary.LittleEndian
	var off int
	switch recLen := int(le.Uint16(buf[4:])); {
	case recLen == bs && le.Uint16(buf[6:]) == 0:
		off = 8
	case recLen == 12:
		if int(le.Uint16(buf[12+4:])) != bs-12 {
			return 0, ext2fs.ErrDBNotFound
		}
		// struct ext2_dx_root_info after "..": reserved_zero, info_length.
		if info, _ := ondisk.DecodeDxRootInfo(buf); info.ReservedZero != 0 || info.InfoLength != 8 {
			return 0, ext2fs.ErrDBNotFound
		}
		off = 32
	default:
		return 0, ext2fs.ErrDBNotFound
	}
	maxSane := (bs - off) / ondisk.DxEntrySize
	if limit, count, _ := ondisk.DxCountLimit(buf, off); limit > maxSane || count > maxSane {
		return 0, ext2fs.ErrDirNoSpaceForCsum
	}
	return off, nil
}

// unlink is ext4_fc_handle_unlink. A name that is not there fails the
// replay (ext2fs_unlink's EXT2_ET_DIR_NO_SPACE), whatever e2fsck's
// comment says.
func (r *fcReplay) unlink(v []byte, n int) error {
	parent, ino, name, err := dentry(v, n)
	if err != nil {
		return err
	}
	if err := r.flushExtents(ino); err != nil {
		return err
	}
	if err := r.unlinkName(parent, name, ino, false); err != nil {
		return r.libError("ext4_fc_handle_unlink", lineHandleUnlink, err)
	}
	return r.h.WriteError()
}

// unlinkName is ext2fs_unlink(fs, dir, name, ino, force ?
// EXT2FS_UNLINK_FORCE : 0): the first entry with the name (and, unless
// forced or ino is 0, naming ino) is merged into the previous entry of
// its block, or emptied when first in its block.
func (r *fcReplay) unlinkName(dir uint32, name string, ino uint32, force bool) error {
	f := r.fs
	dn, err := r.replayDir(dir)
	if err != nil {
		return err
	}
	if dn.Flags()&ondisk.FlagInlineData != 0 {
		return r.inlineUnlink(dir, dn, name, ino, force)
	}
	bs := f.BlockSize
	_, pblks := r.h.DirBlocks(dn)
	buf := make([]byte, bs)
	for _, pb := range pblks {
		if pb >= f.BlocksCount || f.ReadBlock(pb, buf) != nil {
			// e2fsck's I/O handler would report the read.
			return Unsupported("directory %d block %d unreadable", dir, pb)
		}
		done, err := ext2fs.UnlinkInBlock(buf, bs, name, ino, force)
		if err != nil {
			return err
		}
		if done {
			r.h.WriteDirBlock(pb, buf, dir)
			return nil
		}
	}
	return ext2fs.ErrDirNoSpace
}

// linkAndCreate is ext4_fc_handle_link_and_create.
func (r *fcReplay) linkAndCreate(v []byte, reclen int) error {
	parent, ino, name, err := dentry(v, reclen)
	if err != nil {
		return err
	}
	if err := r.flushExtents(0); err != nil {
		return err
	}
	n, err := r.readInode(ino)
	if err != nil {
		return r.libError("ext4_fc_handle_link_and_create", lineLinkReadInode, err)
	}
	ft := ondisk.FileTypeOfMode(n.Mode())
	switch ft {
	case ondisk.FTSymlink:
		// e2fsck returns EXT2_FT_SYMLINK here without linking.
		return nil
	case ondisk.FTUnknown:
		return errFCInval
	}
	// The forced unlink's errors are ignored, but not its "unsupported".
	if err := r.unlinkName(parent, name, ino, true); err != nil {
		if _, ok := IsUnsupported(err); ok {
			return err
		}
	}
	if err := r.link(parent, name, ino, ft); err != nil {
		if _, ok := IsUnsupported(err); ok {
			return err
		}
		return r.libError("ext4_fc_handle_link_and_create", lineLinkLink, err)
	}
	return r.h.WriteError()
}

// link is ext2fs_link(fs, dir, name, ino, ft) without
// EXT2FS_LINK_EXPAND, as the replay calls it.
func (r *fcReplay) link(dir uint32, name string, ino uint32, ft uint8) error {
	// ext2fs_link reads the directory again (the unlink may have
	// rewritten a block, not the inode).
	dn, err := r.readInode(dir)
	if err != nil {
		return err
	}
	if dn.Flags()&ondisk.FlagIndex != 0 {
		if !dn.IsDir() || dn.Flags()&(ondisk.FlagInlineData|ondisk.FlagCasefold) != 0 {
			// dx_link on a non-directory, an inline one, or hashing
			// casefolded names: not emulated.
			return Unsupported("indexed inode %d is not a plain directory", dir)
		}
		return r.dxLink(dir, dn, name, ino, ft)
	}
	if _, err := r.replayDir(dir); err != nil {
		return err
	}
	if dn.Flags()&ondisk.FlagInlineData != 0 {
		return r.inlineLink(dir, dn, name, ino, ft)
	}
	f := r.fs
	if _, pblks := r.h.DirBlocks(dn); len(pblks) > 0 && slices.Max(pblks) >= f.BlocksCount {
		// e2fsck's I/O handler would report the read.
		return Unsupported("directory %d has blocks outside the filesystem", dir)
	}
	return r.h.Link(dir, name, ino, ft)
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}
