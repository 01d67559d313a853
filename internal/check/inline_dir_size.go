package check

import (
	"encoding/binary"
	"errors"

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
// The library's writers are modelled for the attributes kept in the inode
// body only: an inode with an EA block or a value in an EA inode stops
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
	attrs, err := c.ibodyXattrs(n)
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

// ibodyXattrs reads the in-inode attributes as ext2fs_xattrs_read does;
// a value in an EA inode or a layout the library would refuse is
// errInlineUnsupported. The EA block, if any, is not read.
func (c *Checker) ibodyXattrs(n ondisk.Inode) ([]ibodyXattr, error) {
	area, corrupt := libIbodyEA(n)
	if corrupt || len(area) < 4 || binary.LittleEndian.Uint32(area) != ondisk.XattrMagic {
		return nil, errInlineUnsupported
	}
	entries := area[4:]
	var attrs []ibodyXattr
	remain := len(entries)
	for off := 0; remain >= ondisk.XattrEntrySize; {
		e, end, ok := ondisk.DecodeXattrEntry(entries, off)
		if !ok {
			return nil, errInlineUnsupported
		}
		if end {
			break
		}
		remain -= ondisk.XattrEntrySize
		pad := (e.NameLen + 3) &^ 3
		if pad > remain || e.ValueInum != 0 {
			return nil, errInlineUnsupported
		}
		remain -= pad
		vs := int(e.ValueSize)
		if e.ValueSize > uint32(remain) || e.ValueOffs+vs > len(entries) {
			return nil, errInlineUnsupported
		}
		remain -= vs
		name := e.Name
		for i, b := range name {
			if b == 0 {
				name = name[:i]
				break
			}
		}
		attrs = append(attrs, ibodyXattr{
			index: e.NameIndex,
			name:  append([]byte(nil), name...),
			value: append([]byte(nil), entries[e.ValueOffs:e.ValueOffs+vs]...),
		})
		off += e.EntryBytes
	}
	return attrs, nil
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
// is replaced where it is, if the inode body has room, and the whole
// in-inode area is laid out again as ext2fs_xattrs_write lays it out.
func (c *Checker) inlineDataEASet(ino uint32, value []byte) error {
	n := c.readFullInode(ino)
	attrs, err := c.ibodyXattrs(n)
	if err != nil {
		return err
	}
	old := findSystemData(attrs)
	if old < 0 {
		// The directory's size came from this attribute.
		return errInlineUnsupported
	}
	if string(attrs[old].value) == string(value) {
		return nil
	}
	if n.FileACL(c.sb.Is64bit()) != 0 {
		// The library would rewrite the EA block too.
		return errInlineUnsupported
	}
	extra := int(n.ExtraIsize())
	if extra == 0 {
		extra = int(c.sb.WantExtraIsize())
		if extra == 0 {
			extra = 4
		}
	}
	free := len(n) - ondisk.GoodOldInodeSize - extra - 8
	for _, a := range attrs {
		free -= xattrSpace(a)
	}
	free += xattrSpace(attrs[old])
	if ondisk.XattrEntryLen(4)+(len(value)+3)&^3 > free {
		return errInlineSetFailed // EXT2_ET_EA_NO_SPACE
	}
	attrs[old].value = append([]byte(nil), value...)
	return c.writeIbodyXattrs(ino, attrs)
}

// writeIbodyXattrs is ext2fs_xattrs_write for an inode whose attributes
// all live in its body: the area is cleared, the entries are written in
// order with their values packed down from its end and a zero hash.
func (c *Checker) writeIbodyXattrs(ino uint32, attrs []ibodyXattr) error {
	n := c.readFullInode(ino)
	extra := int(n.ExtraIsize())
	if extra&3 != 0 || extra < 2 || len(n) <= ondisk.GoodOldInodeSize+extra+4 {
		return errInlineUnsupported
	}
	start := ondisk.GoodOldInodeSize + extra
	binary.LittleEndian.PutUint32(n[start:], ondisk.XattrMagic)
	store := n[start+4:]
	clear(store)
	end := len(store)
	off := 0
	for _, a := range attrs {
		vsize := (len(a.value) + 3) &^ 3
		elen := ondisk.XattrEntryLen(len(a.name))
		end -= vsize
		if end < 0 || off+elen > end {
			return errInlineSetFailed // the free-space check makes it fit
		}
		e := store[off:]
		e[0] = uint8(len(a.name))
		e[1] = a.index
		binary.LittleEndian.PutUint16(e[2:], uint16(end))
		binary.LittleEndian.PutUint32(e[4:], 0)
		binary.LittleEndian.PutUint32(e[8:], uint32(len(a.value)))
		binary.LittleEndian.PutUint32(e[12:], 0)
		copy(e[ondisk.XattrEntrySize:], a.name)
		copy(store[end:], a.value)
		off += elen
	}
	c.writeInode(ino, n)
	return nil
}
