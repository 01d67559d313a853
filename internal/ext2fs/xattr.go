package ext2fs

import (
	"bytes"
	"errors"

	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// Extended attributes as the library reads and writes them
// (lib/ext2fs/ext_attr.c, inline_data.c).

const (
	// ErrInlineDataNoSpace is EXT2_ET_INLINE_DATA_NO_SPACE.
	ErrInlineDataNoSpace Errcode = "No free space in inline data"
	// ErrEANoSpace is EXT2_ET_EA_NO_SPACE.
	ErrEANoSpace Errcode = "Insufficient space to store extended attribute data"
)

// ErrXattrNotModelled is an attribute layout, or a failure of the
// library's reader, that gofsck does not follow; nothing was written.
// Its text is what the fast-commit replay's unsupported message quotes.
var ErrXattrNotModelled = errors.New("inline data layout not modelled")

// Xattr is one attribute as the library's handle holds it.
type Xattr struct {
	Index uint8
	// Name is the short name up to its first NUL (strlen).
	Name  []byte
	Value []byte
	// Inum is the EA inode holding the value, 0 when it is inline;
	// EAHash is then that inode's hash.
	Inum   uint32
	EAHash uint32
}

// IbodyEA is the in-inode attribute area (magic first) as the library's
// xattr reader finds it: none when i_extra_isize is below 2 or leaves no
// room for more than the magic, and corrupt (the reader fails) when
// i_extra_isize is not a multiple of 4.
func IbodyEA(n ondisk.Inode) (area []byte, corrupt bool) {
	if len(n) <= ondisk.GoodOldInodeSize {
		return nil, false
	}
	extra := int(n.ExtraIsize())
	if extra < 2 || len(n) <= ondisk.GoodOldInodeSize+extra+4 {
		return nil, false
	}
	if extra&3 != 0 {
		return nil, true
	}
	return n[ondisk.GoodOldInodeSize+extra:], false
}

// EAHashMatches checks an entry's hash over value against both char
// signednesses (ext2fs_ext_attr_hash_entry and its signed variant).
func EAHashMatches(e ondisk.XattrEntry, value []byte) bool {
	h := ondisk.XattrValueHash(ondisk.XattrNameHash(e.Name, false), value)
	if h == e.Hash {
		return true
	}
	return ondisk.XattrValueHash(ondisk.XattrNameHash(e.Name, true), value) == e.Hash
}

// XattrRead is how ext2fs_xattrs_read_inode ends.
type XattrRead uint8

const (
	// XattrReadOK: every attribute was read.
	XattrReadOK XattrRead = iota
	// XattrReadBroken: an error e2fsck's pass 1 counts as a broken
	// attribute area (bad names, value sizes or offsets, EA block
	// number, header or checksum, a missing EA inode flag...).
	XattrReadBroken
	// XattrReadFailed: any other error: an i_extra_isize that is not a
	// multiple of 4 (EXT2_ET_INODE_CORRUPTED), a read error, or an
	// entry hash that does not match, for which the reader looks up the
	// value's inode as an old Lustre EA-inode reference and fails on
	// inode 0 (EXT2_ET_BAD_INODE_NUM).
	XattrReadFailed
)

// XattrsReadInode follows ext2fs_xattrs_read_inode: the in-inode area,
// then the EA block (whose checksum is not verified when ignoreCsum is
// set).
func XattrsReadInode(f *fs.FS, n ondisk.Inode, ignoreCsum bool) XattrRead {
	eaInodeFS := f.SB.HasIncompat(ondisk.IncompatEAInode)
	area, corrupt := IbodyEA(n)
	if corrupt {
		return XattrReadFailed
	}
	if ondisk.HasXattrMagic(area) {
		if r := readXattrBuffer(f, area[4:], 0, eaInodeFS); r != XattrReadOK {
			return r
		}
	}
	blk := n.FileACL(f.SB.Is64bit())
	if blk == 0 {
		return XattrReadOK
	}
	if !f.SB.HasCompat(ondisk.CompatExtAttr) || blk < f.FirstDataBlock || blk >= f.BlocksCount {
		return XattrReadBroken
	}
	buf := make([]byte, f.BlockSize)
	if f.ReadBlock(blk, buf) != nil {
		return XattrReadFailed
	}
	x := ondisk.XattrBlock(buf)
	if (x.Magic() != ondisk.XattrMagic && x.Magic() != ondisk.XattrMagicV1) || x.Blocks() != 1 {
		return XattrReadBroken
	}
	if !ignoreCsum && f.MetadataCsum && x.ComputeChecksum(f.CsumSeed, blk) != x.Checksum() {
		return XattrReadBroken
	}
	if x.Magic() != ondisk.XattrMagic {
		return XattrReadBroken
	}
	return readXattrBuffer(f, buf, ondisk.XattrHeaderSize, eaInodeFS)
}

// readXattrBuffer is read_xattrs_from_buffer as a validation: values is
// the buffer value offsets count from, and the entry table starts at
// byte entOff of it and runs to its end. Names must fit what remains of
// the table; then entry by entry, values must fit what remains after the
// names, lie inside the buffer and not overlap the entry table, an EA
// inode reference needs the ea_inode feature, a zero offset, a value of
// at most 64 KiB and an inode number that exists, and a nonzero hash
// must match the value's.
func readXattrBuffer(f *fs.FS, values []byte, entOff int, eaInodeFS bool) XattrRead {
	if entOff > len(values) {
		return XattrReadBroken
	}
	entries := values[entOff:]
	const es = ondisk.XattrEntrySize
	// The end of the table.
	remain := len(entries)
	off := 0
	for remain >= es && !ondisk.XattrEndAt(entries, off) {
		remain -= es
		name := (int(entries[off]) + 3) &^ 3
		if name > remain {
			return XattrReadBroken
		}
		remain -= name
		off += es + name
	}
	end := off
	remain = len(entries)
	for off := 0; remain >= es && !ondisk.XattrEndAt(entries, off); {
		// The first walk checked that the entry and its name fit.
		e, _, _ := ondisk.DecodeXattrEntry(entries, off)
		name := (e.NameLen + 3) &^ 3
		remain -= es + name
		size := uint64(e.ValueSize)
		if e.ValueInum != 0 && !eaInodeFS {
			return XattrReadBroken
		}
		if e.ValueInum == 0 {
			if remain < 0 || size > uint64(remain) || uint64(e.ValueOffs)+size > uint64(len(values)) ||
				(size > 0 && e.ValueOffs < entOff+end+4) {
				return XattrReadBroken
			}
			remain -= int(size)
			if e.Hash != 0 {
				v := values[e.ValueOffs:min(len(values), e.ValueOffs+(int(size)+3)&^3)]
				if !EAHashMatches(e, v) {
					return XattrReadFailed
				}
			}
		} else {
			if e.ValueOffs != 0 || size > 64*1024 {
				return XattrReadBroken
			}
			if e.ValueInum > f.InodesCount {
				return XattrReadFailed
			}
		}
		off += es + name
	}
	return XattrReadOK
}

// XattrNameIs compares an entry's full name (its index's prefix, then
// the name bytes up to the first NUL, as the library builds a C string)
// with want, as ext2fs_xattr_get looks a key up.
func XattrNameIs(index byte, name []byte, want string) bool {
	var prefix string
	switch index {
	case 1:
		prefix = "user."
	case 2:
		prefix = "system.posix_acl_access"
	case 3:
		prefix = "system.posix_acl_default"
	case 4:
		prefix = "trusted."
	case 5:
		prefix = "lustre."
	case 6:
		prefix = "security."
	case 7:
		prefix = "system."
	case 8:
		prefix = "system.richacl"
	case 10:
		prefix = "gnu."
	}
	if len(want) < len(prefix) || want[:len(prefix)] != prefix {
		return false
	}
	rest := want[len(prefix):]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	return string(name) == rest
}

// FindInodeXattr returns the value of an in-inode attribute (nil, true
// when the attribute is there but its value is not in the area).
func FindInodeXattr(n ondisk.Inode, index uint8, name string) ([]byte, bool) {
	area := n.InlineEA()
	if !ondisk.HasXattrMagic(area) {
		return nil, false
	}
	entries := area[4:]
	return findXattr(entries, entries, index, name)
}

// FindBlockXattr looks an attribute up in the inode's EA block.
func FindBlockXattr(f *fs.FS, n ondisk.Inode, index uint8, name string) ([]byte, bool) {
	blk := n.FileACL(f.SB.Is64bit())
	if blk == 0 || blk < f.FirstDataBlock || blk >= f.BlocksCount {
		return nil, false
	}
	buf := make([]byte, f.BlockSize)
	if f.ReadBlock(blk, buf) != nil || ondisk.XattrBlock(buf).Magic() != ondisk.XattrMagic {
		return nil, false
	}
	return findXattr(buf[ondisk.XattrHeaderSize:], buf, index, name)
}

// findXattr scans entries (bounded) for index/name; values are offsets
// in valueBase.
func findXattr(entries, valueBase []byte, index uint8, name string) ([]byte, bool) {
	for off := 0; off < len(entries); {
		e, end, ok := ondisk.DecodeXattrEntry(entries, off)
		if !ok || end {
			return nil, false
		}
		if e.NameIndex == index && string(e.Name) == name {
			if e.ValueInum != 0 || e.ValueOffs+int(e.ValueSize) > len(valueBase) {
				return nil, true
			}
			return valueBase[e.ValueOffs : e.ValueOffs+int(e.ValueSize)], true
		}
		off += e.EntryBytes
	}
	return nil, false
}

// ReadExtAttr is ext2fs_read_ext_attr3's checks on EA block b, read into
// buf: ErrShortRead when it cannot be read, ErrBadEAHeader for a bad
// magic or h_blocks, ErrExtAttrCsumInvalid for a checksum that does not
// match with metadata_csum.
func ReadExtAttr(f *fs.FS, b uint64, buf []byte) error {
	if err := f.ReadBlock(b, buf); err != nil {
		return ErrShortRead
	}
	x := ondisk.XattrBlock(buf)
	if (x.Magic() != ondisk.XattrMagic && x.Magic() != ondisk.XattrMagicV1) || x.Blocks() != 1 {
		return ErrBadEAHeader
	}
	if f.MetadataCsum && x.ComputeChecksum(f.CsumSeed, b) != x.Checksum() {
		return ErrExtAttrCsumInvalid
	}
	return nil
}
