package check

import (
	"encoding/binary"
	"errors"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Pass 2's PR_2_BAD_INLINE_DIR_SIZE "yes" path (e2fsck's
// fix_inline_dir_size): an inline directory whose data size (60 bytes of
// i_block plus the "system.data" attribute) is not a multiple of 4, or
// leaves fewer than 12 bytes past i_block, is rewritten with the size
// rounded up to the next multiple of 4 (or cut back to i_block alone),
// through the library's inline-data and extended-attribute writers, and
// i_size follows. A rewrite that finds no room is retried 4 bytes
// smaller; one that fails again is PR_2_FIX_INLINE_DIR_FAILED, whose yes
// (i_size 0, the inline flag dropped, the rest of the check treating the
// data as a block at 0) gofsck does not make: the CanFix guard stops the
// run there.
//
// The library's writers rewrite every attribute (ext2fs_xattrs_write):
// the in-inode area and, when the inode has one, the EA block (entries
// hashed, a zero block hash, one reference); values in EA inodes keep
// their reference and get their hash. A shared EA block is copied to a
// new block as the library does, while the block bitmap is unloaded in
// e2fsck (libBlockMapUnloaded). A layout the library would refuse stops
// the run as unsupported (nothing is written).

func init() {
	canRepair(problem.PR_2_BAD_INLINE_DIR_SIZE)
}

var (
	// errInlineNoSpace is EXT2_ET_INLINE_DATA_NO_SPACE.
	errInlineNoSpace = errors.New("no free space in inline data")
	// errInlineSetFailed is any other error of the library's rewrite
	// (EXT2_ET_EA_NO_SPACE, a corrupted inode).
	errInlineSetFailed = errors.New("inline data rewrite failed")
	// errInlineUnsupported is a layout gofsck does not rewrite.
	errInlineUnsupported = errors.New("inline data layout not modelled")
)

// ibodyXattr is one in-inode attribute as the library's handle holds it.
type ibodyXattr struct {
	index uint8
	name  []byte // the short name up to its first NUL (strlen)
	value []byte
	inum  uint32
	// eaHash is the EA inode's hash when the value lives there.
	eaHash uint32
}

// fixInlineDirSize is fix_inline_dir_size for directory ino, whose inline
// data (size bytes) is in buf. It returns the new size, or false when the
// check must stop (an unsupported layout, or a declined
// PR_2_FIX_INLINE_DIR_FAILED, where e2fsck aborts the directory scan).
func (w *dirWorker) fixInlineDirSize(ino uint32, size int, buf []byte) (int, bool) {
	c := w.c
	oldSize := size
	var newSize int
	if oldSize > ondisk.IBlockSize && oldSize < ondisk.IBlockSize+12 {
		oldSize = ondisk.IBlockSize
		newSize = oldSize
	} else {
		newSize = oldSize + 4 - oldSize&3
	}
	if newSize > len(buf) {
		c.unsupported(problem.PR_2_BAD_INLINE_DIR_SIZE)
		return 0, false
	}
	clear(buf[oldSize:newSize])
	err := c.inlineDataSet(ino, buf, newSize)
	if err == errInlineNoSpace {
		newSize -= 4
		err = c.inlineDataSet(ino, buf, newSize)
	}
	if err == errInlineUnsupported {
		c.unsupported(problem.PR_2_BAD_INLINE_DIR_SIZE)
		return 0, false
	}
	if err != nil {
		// Not registered: a yes stops the run before the question.
		c.fix(problem.Problem{Code: problem.PR_2_FIX_INLINE_DIR_FAILED, Ino: ino, Num: uint64(size)})
		c.unsupported(problem.PR_2_FIX_INLINE_DIR_FAILED)
		return 0, false
	}
	n := c.readFullInode(ino)
	n.SetSize(uint64(newSize))
	c.writeInode(ino, n)
	c.invalidateNames()
	return newSize, true
}

// inlineDataSet is ext2fs_inline_data_set: the first 60 bytes of buf go to
// i_block (fewer when size is smaller) and the rest, size-60 bytes, is
// the new "system.data" value.
func (c *Checker) inlineDataSet(ino uint32, buf []byte, size int) error {
	n := c.readFullInode(ino)
	if size <= ondisk.IBlockSize {
		copy(n.IBlock(), buf[:size])
		c.writeInode(ino, n)
		return c.inlineDataEASet(ino, nil)
	}
	free, err := xattrInodeMaxSize(n)
	if err != nil {
		return err
	}
	attrs, _, err := c.ibodyXattrs(n)
	if err != nil {
		return err
	}
	existing := uint64(ondisk.IBlockSize)
	if i := findSystemData(attrs); i >= 0 {
		existing += uint64(len(attrs[i].value))
	}
	// size_t arithmetic: a negative free size wraps, as in the library.
	if uint64(size) != existing && uint64(size) > existing+free {
		return errInlineNoSpace
	}
	copy(n.IBlock(), buf[:ondisk.IBlockSize])
	c.writeInode(ino, n)
	return c.inlineDataEASet(ino, buf[ondisk.IBlockSize:size])
}

// xattrInodeMaxSize is ext2fs_xattr_inode_max_size: the room left for
// attribute values in the inode body, below the lowest value offset.
func xattrInodeMaxSize(n ondisk.Inode) (uint64, error) {
	inodeSize := len(n)
	extra := int(n.ExtraIsize())
	if inodeSize <= ondisk.GoodOldInodeSize+extra+4 {
		return 0, errInlineNoSpace
	}
	const largeInode = 160 // sizeof(struct ext2_inode_large)
	minoff := uint64(inodeSize - largeInode - 4)
	start := ondisk.GoodOldInodeSize + extra
	if binary.LittleEndian.Uint32(n[start:]) != ondisk.XattrMagic {
		v := int(minoff) - ondisk.XattrEntryLen(4) - 3 - 4
		return uint64((v + 3) &^ 3), nil
	}
	entries := n[start+4:]
	off := 0
	for {
		e, end, ok := ondisk.DecodeXattrEntry(entries, off)
		if !ok {
			return 0, errInlineUnsupported
		}
		if end {
			break
		}
		if e.ValueInum == 0 && e.ValueSize != 0 && uint64(e.ValueOffs) < minoff {
			minoff = uint64(e.ValueOffs)
		}
		off += e.EntryBytes
	}
	return minoff - uint64(off) - 4, nil
}

// ibodyXattrs reads the attributes as ext2fs_xattrs_read does: those in
// the inode body, then those of the EA block (the returned count is how
// many are in the body). Values kept in EA inodes are checked as the
// library opens them but not read (only system.data's value is used,
// and it is always in the body). A layout or value the library would
// refuse is errInlineUnsupported.
func (c *Checker) ibodyXattrs(n ondisk.Inode) ([]ibodyXattr, int, error) {
	area, corrupt := libIbodyEA(n)
	if corrupt || len(area) < 4 || binary.LittleEndian.Uint32(area) != ondisk.XattrMagic {
		return nil, 0, errInlineUnsupported
	}
	attrs, err := c.libReadXattrs(n, area[4:], 0, nil)
	if err != nil {
		return nil, 0, err
	}
	ibody := len(attrs)
	if blk := n.FileACL(c.sb.Is64bit()); blk != 0 {
		f := c.fs
		if blk < f.FirstDataBlock || blk >= f.BlocksCount {
			return nil, 0, errInlineUnsupported
		}
		buf := make([]byte, f.BlockSize)
		if f.ReadBlock(blk, buf) != nil || ondisk.XattrBlock(buf).Magic() != ondisk.XattrMagic {
			return nil, 0, errInlineUnsupported
		}
		if attrs, err = c.libReadXattrs(n, buf, ondisk.XattrHeaderSize, attrs); err != nil {
			return nil, 0, err
		}
	}
	return attrs, ibody, nil
}

// libReadXattrs is read_xattrs_from_buffer: the entries start at base in
// values (the buffer value offsets count from) and run to its end.
func (c *Checker) libReadXattrs(n ondisk.Inode, values []byte, base int, attrs []ibodyXattr) ([]ibodyXattr, error) {
	storage := len(values) - base
	// The end of the entries, checking that each name fits.
	endOff, remain := base, storage
	for remain >= ondisk.XattrEntrySize && binary.LittleEndian.Uint32(values[endOff:]) != 0 {
		remain -= ondisk.XattrEntrySize
		nl := int(values[endOff])
		if (nl+3)&^3 > remain {
			return nil, errInlineUnsupported // EXT2_ET_EA_BAD_NAME_LEN
		}
		remain -= (nl + 3) &^ 3
		endOff += ondisk.XattrEntryLen(nl)
	}
	off, remain := base, storage
	for remain >= ondisk.XattrEntrySize && binary.LittleEndian.Uint32(values[off:]) != 0 {
		e, _, ok := ondisk.DecodeXattrEntry(values, off)
		if !ok {
			return nil, errInlineUnsupported
		}
		remain -= ondisk.XattrEntrySize + (e.NameLen+3)&^3
		a := ibodyXattr{index: e.NameIndex, inum: e.ValueInum}
		name := e.Name
		for i, b := range name {
			if b == 0 {
				name = name[:i]
				break
			}
		}
		a.name = append([]byte(nil), name...)
		var hash uint32
		if e.ValueInum == 0 {
			vs := int(e.ValueSize)
			if e.ValueSize > uint32(remain) || e.ValueOffs+vs > len(values) ||
				vs > 0 && e.ValueOffs < endOff+4 {
				return nil, errInlineUnsupported
			}
			remain -= vs
			a.value = append([]byte(nil), values[e.ValueOffs:e.ValueOffs+vs]...)
			padded := values[e.ValueOffs:min(len(values), e.ValueOffs+(vs+3)&^3)]
			if e.Hash != 0 && !eaHashMatches(e, padded) {
				return nil, errInlineUnsupported // EXT2_ET_BAD_EA_HASH
			}
		} else {
			if !c.sb.HasIncompat(ondisk.IncompatEAInode) || e.ValueOffs != 0 || e.ValueSize > 64*1024 {
				return nil, errInlineUnsupported
			}
			var ok bool
			if hash, ok = c.libEAInodeHash(e.ValueInum, e.ValueSize); !ok {
				return nil, errInlineUnsupported
			}
			// Only the length is written back (the value stays in the
			// EA inode).
			a.value = make([]byte, e.ValueSize)
			if e.Hash != 0 {
				h := ondisk.XattrNameHash(e.Name, false)
				sh := ondisk.XattrNameHash(e.Name, true)
				if e.Hash != h<<16^h>>16^hash && e.Hash != sh<<16^sh>>16^hash {
					return nil, errInlineUnsupported // or an old Lustre reference
				}
			}
		}
		a.eaHash = hash
		attrs = append(attrs, a)
		off += e.EntryBytes
	}
	return attrs, nil
}

// libEAInodeHash opens the EA inode holding a value of size bytes as the
// library does (not inline, EA_INODE_FL, linked, the size matching) and
// returns its hash (ext2fs_get_ea_inode_hash: i_atime).
func (c *Checker) libEAInodeHash(ino, size uint32) (uint32, bool) {
	f := c.fs
	if ino == 0 || ino > f.InodesCount {
		return 0, false
	}
	n := c.readFullInode(ino)
	if n.Flags()&ondisk.FlagInlineData != 0 || n.Flags()&ondisk.FlagEAInode == 0 || n.LinksCount() == 0 ||
		n.Size() != uint64(size) {
		return 0, false
	}
	return n.Atime(), true
}

// findSystemData returns the index of "system.data" in attrs, or -1.
func findSystemData(attrs []ibodyXattr) int {
	for i, a := range attrs {
		if a.index == ondisk.XattrIndexSystem && string(a.name) == "data" {
			return i
		}
	}
	return -1
}

// xattrSpace is the library's space_used for one attribute.
func xattrSpace(a ibodyXattr) int {
	s := ondisk.XattrEntryLen(len(a.name))
	if a.inum == 0 {
		s += (len(a.value) + 3) &^ 3
	}
	return s
}

// inlineDataEASet is ext2fs_inline_data_ea_set (ext2fs_xattr_set of
// "system.data"): an unchanged value writes nothing; otherwise the value
// is replaced where it is, if the inode body has room, and the attributes
// are written back as ext2fs_xattrs_write writes them: the in-inode area
// laid out again and, when the inode has an EA block, that block too.
func (c *Checker) inlineDataEASet(ino uint32, value []byte) error {
	n := c.readFullInode(ino)
	attrs, ibody, err := c.ibodyXattrs(n)
	if err != nil {
		return err
	}
	old := findSystemData(attrs)
	if old < 0 || old >= ibody {
		// The directory's size came from this attribute in the body.
		return errInlineUnsupported
	}
	if attrs[old].inum == 0 && string(attrs[old].value) == string(value) {
		return nil
	}
	extra := int(n.ExtraIsize())
	if extra == 0 {
		extra = int(c.sb.WantExtraIsize())
		if extra == 0 {
			extra = 4
		}
	}
	free := len(n) - ondisk.GoodOldInodeSize - extra - 8
	for _, a := range attrs[:ibody] {
		free -= xattrSpace(a)
	}
	free += xattrSpace(attrs[old])
	if ondisk.XattrEntryLen(4)+(len(value)+3)&^3 > free {
		return errInlineSetFailed // EXT2_ET_EA_NO_SPACE
	}
	attrs[old].value = append([]byte(nil), value...)
	attrs[old].inum, attrs[old].eaHash = 0, 0
	return c.writeLibXattrs(ino, attrs, ibody)
}

// writeLibXattrs is ext2fs_xattrs_write: the in-inode area is cleared and
// the first ibody attributes written in order with their values packed
// down from its end (a zero hash, but for values in EA inodes); an inode
// with an EA block gets the rest written there the same way, each entry
// with its hash, under a header with one reference, one block and a zero
// block hash. A block shared with other inodes, which the library copies
// to a new block, is errInlineUnsupported.
func (c *Checker) writeLibXattrs(ino uint32, attrs []ibodyXattr, ibody int) error {
	f := c.fs
	n := c.readFullInode(ino)
	extra := int(n.ExtraIsize())
	if extra&3 != 0 || extra < 2 || len(n) <= ondisk.GoodOldInodeSize+extra+4 {
		return errInlineUnsupported
	}
	var block []byte
	blk := n.FileACL(c.sb.Is64bit())
	if blk != 0 || ibody < len(attrs) {
		if blk == 0 || blk < f.FirstDataBlock || blk >= f.BlocksCount {
			return errInlineUnsupported
		}
		old := make([]byte, f.BlockSize)
		if f.ReadBlock(blk, old) != nil || ondisk.XattrBlock(old).Magic() != ondisk.XattrMagic {
			return errInlineUnsupported
		}
		if refs := ondisk.XattrBlock(old).Refcount(); refs != 1 {
			// prep_ea_block_for_write copies a shared block: one
			// reference less on the old one, the attributes in a new
			// block from the inode's goal.
			if refs == 0 || !c.libBlockMapUnloaded() {
				return errInlineUnsupported
			}
			nb, ok := c.unloadedAllocBlock(ext2fs.FindInodeGoal(c.fs, ino, n, 0))
			if !ok {
				return errInlineUnsupported
			}
			binary.LittleEndian.PutUint32(old[4:], refs-1)
			if f.MetadataCsum {
				binary.LittleEndian.PutUint32(old[0x10:], ondisk.XattrBlock(old).ComputeChecksum(f.CsumSeed, blk))
			}
			c.writeBlock(blk, old)
			blk = nb
			n.SetFileACL(blk)
		}
		block = make([]byte, f.BlockSize)
		binary.LittleEndian.PutUint32(block[0:], ondisk.XattrMagic)
		binary.LittleEndian.PutUint32(block[4:], 1) // h_refcount
		binary.LittleEndian.PutUint32(block[8:], 1) // h_blocks
		if err := putLibXattrs(block, ondisk.XattrHeaderSize, attrs[ibody:], true); err != nil {
			return err
		}
		if f.MetadataCsum {
			binary.LittleEndian.PutUint32(block[0x10:], ondisk.XattrBlock(block).ComputeChecksum(f.CsumSeed, blk))
		}
	}
	start := ondisk.GoodOldInodeSize + extra
	binary.LittleEndian.PutUint32(n[start:], ondisk.XattrMagic)
	if err := putLibXattrs(n[start+4:], 0, attrs[:ibody], false); err != nil {
		return err
	}
	if block != nil {
		c.writeBlock(blk, block)
	}
	c.writeInode(ino, n)
	return nil
}

// putLibXattrs is write_xattrs_to_buffer: buf is cleared from base on and
// the entries are written from base, their values packed down from the
// end of buf (offsets counted from the start of buf); an entry's hash is
// written when hashes is set or its value lives in an EA inode.
func putLibXattrs(buf []byte, base int, attrs []ibodyXattr, hashes bool) error {
	clear(buf[base:])
	end := len(buf)
	off := base
	for _, a := range attrs {
		elen := ondisk.XattrEntryLen(len(a.name))
		vsize := 0
		if a.inum == 0 {
			vsize = (len(a.value) + 3) &^ 3
		}
		if end-vsize < off+elen+4 {
			return errInlineSetFailed // the free-space checks make it fit
		}
		e := buf[off:]
		e[0] = uint8(len(a.name))
		e[1] = a.index
		binary.LittleEndian.PutUint32(e[4:], a.inum)
		binary.LittleEndian.PutUint32(e[8:], uint32(len(a.value)))
		copy(e[ondisk.XattrEntrySize:], a.name)
		h := ondisk.XattrNameHash(a.name, false)
		if a.inum == 0 {
			end -= vsize
			binary.LittleEndian.PutUint16(e[2:], uint16(end))
			copy(buf[end:], a.value)
			h = ondisk.XattrValueHash(h, buf[end:end+vsize])
		} else {
			h = h<<16 ^ h>>16 ^ a.eaHash
		}
		if hashes || a.inum != 0 {
			binary.LittleEndian.PutUint32(e[12:], h)
		}
		off += elen
	}
	return nil
}

// libBlockMapUnloaded reports whether e2fsck would have the block bitmap
// unloaded at this point of pass 2 (fs->block_map NULL): no fix read it
// to edit it (no bitmap edit so far, no pass 1B). On bigalloc e2fsck's
// found map has a bit per block, which gofsck's does not model here.
func (c *Checker) libBlockMapUnloaded() bool {
	c.repair.mu.Lock()
	defer c.repair.mu.Unlock()
	return c.fs.ClusterBits == 0 && len(c.repair.blockEdits) == 0 && len(c.repair.inodeEdits) == 0 &&
		c.repair.final == nil && c.dupCount == 0
}

// unloadedAllocBlock is ext2fs_alloc_block2 through e2fsck's allocator
// while the block bitmap is unloaded: the first block free in the found
// map at or after goal (wrapping around), marked there, and the group
// and superblock counts taken (ext2fs_block_alloc_stats2); the on-disk
// bitmap is not changed, so pass 5 reports the block as e2fsck's does.
// The library zeroes the block before the caller writes it whole.
func (c *Checker) unloadedAllocBlock(goal uint64) (uint64, bool) {
	f := c.fs
	first, last := f.FirstDataBlock, f.BlocksCount-1
	if goal < first || goal > last {
		goal = first
	}
	b := c.blockFound.NextClear(goal)
	if b > last {
		b = c.blockFound.NextClear(first)
		if b > last || b >= goal {
			return 0, false
		}
	}
	c.blockFound.Set(b)
	c.groupStatsBlock(b, 1)
	return b, true
}
