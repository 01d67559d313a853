package check

import (
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// The "yes" paths of pass 2 (check_dir_block): entries are edited in the
// block buffer and the block is written once, with its checksum, when a
// fix changed it. Repair runs pass 2 serially, so these edits see e2fsck's
// order.

// curEntry is where the entry being checked lives: area is nil for the
// synthesised '.' and '..' of an inline directory.
type curEntry struct {
	area      []byte
	off       int
	synthetic bool
}

// editable reports whether a fix may edit the current entry.
func (w *dirWorker) editable() bool {
	return w.c.repairing() && w.cur.area != nil && w.cur.off+ondisk.DirentHeaderSize <= len(w.cur.area)
}

// clearEntry sets the current entry's inode to 0 (dirent->inode = 0).
func (w *dirWorker) clearEntry() bool {
	if !w.editable() {
		return false
	}
	ondisk.SetDirentIno(w.cur.area, w.cur.off, 0)
	return true
}

// setEntryIno sets the current entry's inode.
func (w *dirWorker) setEntryIno(ino uint32) bool {
	if !w.editable() {
		return false
	}
	ondisk.SetDirentIno(w.cur.area, w.cur.off, ino)
	return true
}

// setEntryType sets the current entry's file type byte.
func (w *dirWorker) setEntryType(ft uint8) {
	if !w.editable() {
		return
	}
	w.cur.area[w.cur.off+7] = ft
	w.entryModified = true
}

// fixName replaces '/' and NUL in a name (which aliases the block) by '.'.
func (w *dirWorker) fixName(name []byte) {
	if !w.editable() {
		return
	}
	for i, b := range name {
		if b == '/' || b == 0 {
			name[i] = '.'
		}
	}
	w.entryModified = true
}

// dotFileType is the type check_dot/check_dotdot give a rewritten entry.
func (w *dirWorker) dotFileType() uint8 {
	if w.c.sb.HasIncompat(ondisk.IncompatFiletype) {
		return ondisk.FTDir
	}
	return ondisk.FTUnknown
}

// fixDot rewrites the current entry as '.' naming ino (check_dot's fix).
func (w *dirWorker) fixDot(ino uint32) bool {
	if !w.editable() {
		return false
	}
	a, off := w.cur.area, w.cur.off
	if ondisk.DirentRawRecLen(a, off) < 12 {
		ondisk.SetDirentRawRecLen(a, off, 12)
	}
	ondisk.SetDirentIno(a, off, ino)
	a[off+6] = 1
	a[off+7] = w.dotFileType()
	if off+10 <= len(a) {
		a[off+8], a[off+9] = '.', 0
	}
	return true
}

// splitDot is check_dot's split of an oversized '.' entry: '.' keeps 12
// bytes and, unless '..' follows, the rest becomes an empty entry.
func (w *dirWorker) splitDot(recLen int, ft uint8) bool {
	if !w.editable() {
		return false
	}
	a, off := w.cur.area, w.cur.off
	bs := w.c.fs.BlockSize
	ondisk.SetDirentRawRecLen(a, off, 12)
	next := off + 12
	if next+ondisk.DirentHeaderSize > len(a) {
		return true
	}
	if !(next+11 <= len(a) && a[next+8] == '.' && a[next+9] == '.' && a[next+10] == 0) {
		ext2fs.SetRecLen(a, next, recLen-12, bs)
		ondisk.SetDirentIno(a, next, 0)
		a[next+6] = 0
		a[next+7] = ft
	}
	return true
}

// fixDotDotEntry rewrites the current entry as '..' naming the root
// (check_dotdot's fix; pass 3 sets the real parent).
func (w *dirWorker) fixDotDotEntry() bool {
	if !w.editable() {
		return false
	}
	a, off := w.cur.area, w.cur.off
	if ondisk.DirentRawRecLen(a, off) < 12 {
		ondisk.SetDirentRawRecLen(a, off, 12)
	}
	ondisk.SetDirentIno(a, off, ondisk.RootIno)
	a[off+6] = 2
	a[off+7] = w.dotFileType()
	if off+11 <= len(a) {
		a[off+8], a[off+9], a[off+10] = '.', '.', 0
	}
	return true
}

// salvageDirectory is e2fsck's salvage_directory over area[:blockLen]: it
// repairs the corrupt entry at off and returns the offset to check next.
// prev is the previous entry's offset (-1 when there is none); hashRoom is
// the room for a stored hash in a directory that keeps them (e2fsck's
// hash_in_dirent, '.' and '..' included).
func (w *dirWorker) salvageDirectory(area []byte, off, prev, blockLen int, prevSynthetic bool, hashRoom int) int {
	bs := w.c.fs.BlockSize
	if prevSynthetic {
		prev = -1
	}
	var nameLen, recLen int
	if blockLen-off < ondisk.DirentHeaderSize {
		recLen = blockLen - off
	} else {
		nameLen = int(area[off+6])
		recLen = ondisk.DecodeRecLen(ondisk.DirentRawRecLen(area, off), bs)
	}
	left := blockLen - off - recLen
	// An 8-byte entry: move the rest of the block up over it.
	if left >= ondisk.DirRecLen(1, hashRoom) && recLen == ondisk.DirentHeaderSize {
		copy(area[off:], area[off+8:off+8+left])
		clear(area[off+left : off+left+8])
		return off
	}
	// An entry running past the end whose name fits: shorten it.
	if left < 0 && recLen+left > ondisk.DirentHeaderSize && ondisk.DirRecLen(nameLen, hashRoom) <= recLen+left &&
		ondisk.DirentIno(area, off) <= w.c.fs.InodesCount && off+8+nameLen <= len(area) &&
		!containsZero(area[off+8:off+8+nameLen]) {
		ext2fs.SetRecLen(area, off, recLen+left, bs)
		return off
	}
	// A plausible length: the previous entry absorbs this one.
	if prev >= 0 && recLen != 0 && recLen%4 == 0 && off+recLen <= blockLen {
		p := ondisk.DecodeRecLen(ondisk.DirentRawRecLen(area, prev), bs)
		ext2fs.SetRecLen(area, prev, p+recLen, bs)
		return off + recLen
	}
	// Otherwise the rest of the block goes: to the previous entry, or
	// as one empty entry.
	if prev >= 0 {
		p := ondisk.DecodeRecLen(ondisk.DirentRawRecLen(area, prev), bs)
		ext2fs.SetRecLen(area, prev, p+blockLen-off, bs)
		return bs
	}
	if off+ondisk.DirentHeaderSize > len(area) || blockLen-off < ondisk.DirentHeaderSize {
		return bs // no room for an entry: the block ends here
	}
	ext2fs.SetRecLen(area, off, blockLen-off, bs)
	area[off+6] = 0
	area[off+7] = 0
	ondisk.SetDirentIno(area, off, 0)
	return off
}

func containsZero(b []byte) bool {
	for _, x := range b {
		if x == 0 {
			return true
		}
	}
	return false
}

// insertDirentTail is pass 2's insert_dirent_tail: the last entry is
// shortened to make room for a checksum tail. It returns false when it
// cannot.
func insertDirentTail(buf []byte, bs int) bool {
	top := bs - ondisk.DirTailSize
	d := 0
	for {
		rl := int(ondisk.DirentRawRecLen(buf, d))
		if rl == 0 || rl&3 != 0 || d+rl > top {
			break
		}
		d += rl
		if d+ondisk.DirentHeaderSize > bs {
			break
		}
	}
	if d != top {
		minSize := ondisk.DirRecLen(int(buf[6]), 0)
		if minSize > top-d {
			return false
		}
		ondisk.SetDirentRawRecLen(buf, d, uint16(top-d))
	}
	if _, ok := ondisk.DirTail(buf[:bs]); !ok {
		initDirTail(buf, bs)
	}
	return true
}

// writeDirBlockFixed writes a block check_dir_block changed: a leaf
// without room for its checksum tail gets one (or its directory is queued
// for rebuilding), then the block is written with its checksum.
func (w *dirWorker) writeDirBlockFixed(db *dirBlock, buf []byte, isLeaf bool, inlineSize int, dirInode ondisk.Inode) {
	c := w.c
	f := c.fs
	if f.MetadataCsum && isLeaf && inlineSize == 0 && !dirHasTail(f.BlockSize, buf) {
		if !insertDirentTail(buf, f.BlockSize) {
			c.setRehash(db.ino)
		}
	}
	if inlineSize > 0 {
		// ext2fs_inline_data_set (inline_dir_size.go); the old in-place
		// edit stays for the layouts it does not model.
		if err := ext2fs.InlineDataSet(c.inlineFS(), db.ino, buf, inlineSize); err != nil {
			n := c.readFullInode(db.ino)
			copy(n.IBlock(), buf[:ondisk.IBlockSize])
			if inlineSize > ondisk.IBlockSize {
				setInlineDataValue(n, buf[ondisk.IBlockSize:inlineSize])
			}
			c.writeInode(db.ino, n)
		}
		c.invalidateNames()
		return
	}
	c.writeDirBlock(db.blk, buf, db.ino)
}

// clearIndexFlag is clear_htree's inode update: the directory loses
// INDEX_FL (its blocks are then read as a linear directory).
func (c *Checker) clearIndexFlag(ino uint32) {
	if !c.repairing() {
		return
	}
	n := c.readFullInode(ino)
	n.SetFlags(n.Flags() &^ ondisk.FlagIndex)
	c.writeInode(ino, n)
	c.invalidateNames()
}

// setInlineDataValue overwrites the in-inode "system.data" attribute (the
// part of an inline directory past i_block) with v of the same size and
// recomputes the entry's hash, as the library's xattr write does.
func setInlineDataValue(n ondisk.Inode, v []byte) {
	area := n.InlineEA()
	if !ondisk.HasXattrMagic(area) {
		return
	}
	entries := area[4:]
	for off := 0; off < len(entries); {
		e, end, ok := ondisk.DecodeXattrEntry(entries, off)
		if !ok || end {
			return
		}
		if e.NameIndex == ondisk.XattrIndexSystem && string(e.Name) == "data" {
			if e.ValueInum != 0 || e.ValueOffs+int(e.ValueSize) > len(entries) {
				return
			}
			val := entries[e.ValueOffs : e.ValueOffs+int(e.ValueSize)]
			copy(val, v)
			h := ondisk.XattrValueHash(ondisk.XattrNameHash(e.Name, false), val)
			ondisk.SetXattrEntryHash(entries, off, h)
			return
		}
		off += e.EntryBytes
	}
}

// allocateDirBlock is pass 2's allocate_dir_block: a new block for the
// hole at db's logical block ('.' and '..' for block 0, else empty),
// marked in the maps and bitmap without the group counts (pass 5 fixes
// those, as after e2fsck), added to i_blocks and i_size and mapped in the
// inode. data receives the new block. It returns false when the block
// could not be mapped (the hole stays): in a block-mapped directory whose
// indirect block on the way is missing, as e2fsck fails; in an extent
// tree deeper than its root (a hole pass 1 would have closed under -y).
func (w *dirWorker) allocateDirBlock(db *dirBlock, data []byte) (uint64, bool) {
	c := w.c
	f := c.fs
	n := c.readFullInode(db.ino)
	goal := ext2fs.FindInodeGoal(c.fs, db.ino, n, db.lblk)
	mapped := n.Flags()&ondisk.FlagExtents == 0
	if !mapped && !c.canMapDirBlock(n) {
		return 0, false
	}
	blk, ok := c.allocBlock(goal)
	if !ok {
		c.fix(problem.Problem{Code: problem.PR_2_ALLOC_DIRBOCK, Ino: db.ino, Str: "ext2fs_new_block", Err: ext2fs.ErrBlockAllocFail.Error()})
		return 0, false
	}
	var nb []byte
	if db.lblk != 0 {
		nb = c.newDirBlock(0, 0)
	} else {
		nb = c.newDirBlock(db.ino, ondisk.RootIno)
	}
	c.writeDirBlock(blk, nb, db.ino)
	copy(data, nb)
	blocks := uint64(n.BlocksLo())
	if c.sb.HasRoCompat(ondisk.RoCompatHugeFile) {
		blocks |= uint64(n.BlocksHi()) << 32
	}
	n.SetBlocks(blocks + c.iblkOne())
	if want := (uint64(db.lblk) + 1) * uint64(f.BlockSize); n.Size() < want {
		n.SetSize(want)
	}
	if mapped {
		// The inode is written first, then ext2fs_bmap2(BMAP_SET) maps
		// the block, which fails when an indirect block on the way is
		// missing (the block stays allocated, the hole unmapped).
		c.writeInode(db.ino, n)
		if err := ext2fs.BmapSetBlockMapped(&ext2fs.Filsys{FS: f, IO: repairIO{c}}, db.ino, n, db.lblk, blk); err != nil {
			c.fix(problem.Problem{Code: problem.PR_2_ALLOC_DIRBOCK, Ino: db.ino, Str: "ext2fs_block_iterate", Err: err.Error()})
			return 0, false
		}
		return blk, true
	}
	c.mapDirBlock(n, db.lblk, blk)
	c.writeInode(db.ino, n)
	return blk, true
}

// canMapDirBlock reports whether mapDirBlock can map a block of an
// extent-mapped inode: a depth-0 tree.
func (c *Checker) canMapDirBlock(n ondisk.Inode) bool {
	h := ondisk.ExtentHeader(n.IBlock())
	return h.Verify() == nil && h.Depth() == 0
}

// mapDirBlock is ext2fs_bmap2(BMAP_SET) for the extent trees
// canMapDirBlock accepts: the new block extends a neighbouring extent
// when contiguous, else gets its own extent (when the root has room).
func (c *Checker) mapDirBlock(n ondisk.Inode, lblk uint32, blk uint64) {
	ib := n.IBlock()
	h := ondisk.ExtentHeader(ib)
	ents := int(h.Entries())
	pos := ents
	for i := 0; i < ents; i++ {
		e := h.Leaf(i)
		if e.Lblk > lblk {
			pos = i
			break
		}
	}
	if pos > 0 {
		e := h.Leaf(pos - 1)
		if !e.Uninit && e.Lblk+e.Len == lblk && e.Pblk+uint64(e.Len) == blk && e.Len < 32768 {
			h.Entry(pos - 1).SetRawLen(uint16(e.Len + 1))
			return
		}
	}
	if pos < ents {
		e := h.Leaf(pos)
		if !e.Uninit && lblk+1 == e.Lblk && blk+1 == e.Pblk && e.Len < 32768 {
			setLeafEntry(h.Entry(pos), lblk, e.Len+1, blk)
			return
		}
	}
	if ents >= int(h.Max()) || 12+(ents+1)*12 > len(ib) {
		return
	}
	copy(h.Entry(pos+1), h.Entry(pos)[:(ents-pos)*ondisk.ExtentEntrySize])
	setLeafEntry(h.Entry(pos), lblk, 1, blk)
	h.SetEntries(uint16(ents + 1))
}

// setLeafEntry stores an initialised leaf entry.
func setLeafEntry(e ondisk.ExtentEntry, lblk, length uint32, blk uint64) {
	e.SetLblk(lblk)
	e.SetRawLen(uint16(length))
	e.SetStart(blk)
}
