package ext2fs

import (
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// The library's inline-data writers (ext2fs_inline_data_set and
// ext2fs_inline_data_ea_set) over its attribute handle
// (ext2fs_xattrs_read, ext2fs_xattrs_write). Every error but
// ErrInlineDataNoSpace and ErrEANoSpace is ErrXattrNotModelled: a layout
// or value the library would refuse, or treat in ways not followed here.

// readInodeZeroed reads inode ino, zeros when it cannot be read.
func readInodeZeroed(f *fs.FS, ino uint32) ondisk.Inode {
	n := make(ondisk.Inode, f.InodeSize)
	if f.ReadInode(ino, n, make([]byte, f.BlockSize)) != nil {
		clear(n)
	}
	return n
}

// InlineDataSet is ext2fs_inline_data_set on inode ino: the first 60
// bytes of buf go to i_block (fewer when size is smaller) and the rest,
// size-60 bytes, is the new "system.data" value (InlineDataEASet).
func InlineDataSet(fsys *Filsys, ino uint32, buf []byte, size int) error {
	n := readInodeZeroed(fsys.FS, ino)
	if size <= ondisk.IBlockSize {
		copy(n.IBlock(), buf[:size])
		fsys.IO.WriteInode(ino, n)
		return InlineDataEASet(fsys, ino, nil)
	}
	free, err := XattrInodeMaxSize(n)
	if err != nil {
		return err
	}
	attrs, _, err := ReadXattrs(fsys.FS, n)
	if err != nil {
		return err
	}
	existing := uint64(ondisk.IBlockSize)
	if i := FindSystemData(attrs); i >= 0 {
		existing += uint64(len(attrs[i].Value))
	}
	// size_t arithmetic: a negative free size wraps, as in the library.
	if uint64(size) != existing && uint64(size) > existing+free {
		return ErrInlineDataNoSpace
	}
	copy(n.IBlock(), buf[:ondisk.IBlockSize])
	fsys.IO.WriteInode(ino, n)
	return InlineDataEASet(fsys, ino, buf[ondisk.IBlockSize:size])
}

// XattrInodeMaxSize is ext2fs_xattr_inode_max_size: the room left for
// attribute values in the inode body, below the lowest value offset.
func XattrInodeMaxSize(n ondisk.Inode) (uint64, error) {
	inodeSize := len(n)
	extra := int(n.ExtraIsize())
	if inodeSize <= ondisk.GoodOldInodeSize+extra+4 {
		return 0, ErrInlineDataNoSpace
	}
	const largeInode = 160 // sizeof(struct ext2_inode_large)
	minoff := uint64(inodeSize - largeInode - 4)
	start := ondisk.GoodOldInodeSize + extra
	if !ondisk.HasXattrMagic(n[start:]) {
		v := int(minoff) - ondisk.XattrEntryLen(4) - 3 - 4
		return uint64((v + 3) &^ 3), nil
	}
	entries := n[start+4:]
	off := 0
	for {
		e, end, ok := ondisk.DecodeXattrEntry(entries, off)
		if !ok {
			return 0, ErrXattrNotModelled
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

// ReadXattrs reads the attributes as ext2fs_xattrs_read does: those in
// the inode body, then those of the EA block (ibody is how many are in
// the body). Values kept in EA inodes are checked as the library opens
// them but not read (Value holds as many zeros).
func ReadXattrs(f *fs.FS, n ondisk.Inode) (attrs []Xattr, ibody int, err error) {
	area, corrupt := IbodyEA(n)
	if corrupt || !ondisk.HasXattrMagic(area) {
		return nil, 0, ErrXattrNotModelled
	}
	if attrs, err = readXattrs(f, area[4:], 0, nil); err != nil {
		return nil, 0, err
	}
	ibody = len(attrs)
	if blk := n.FileACL(f.SB.Is64bit()); blk != 0 {
		if blk < f.FirstDataBlock || blk >= f.BlocksCount {
			return nil, 0, ErrXattrNotModelled
		}
		buf := make([]byte, f.BlockSize)
		if f.ReadBlock(blk, buf) != nil || ondisk.XattrBlock(buf).Magic() != ondisk.XattrMagic {
			return nil, 0, ErrXattrNotModelled
		}
		if attrs, err = readXattrs(f, buf, ondisk.XattrHeaderSize, attrs); err != nil {
			return nil, 0, err
		}
	}
	return attrs, ibody, nil
}

// readXattrs is read_xattrs_from_buffer: the entries start at base in
// values (the buffer value offsets count from) and run to its end.
func readXattrs(f *fs.FS, values []byte, base int, attrs []Xattr) ([]Xattr, error) {
	storage := len(values) - base
	// The end of the entries, checking that each name fits.
	endOff, remain := base, storage
	for remain >= ondisk.XattrEntrySize && !ondisk.XattrEndAt(values, endOff) {
		remain -= ondisk.XattrEntrySize
		nl := int(values[endOff])
		if (nl+3)&^3 > remain {
			return nil, ErrXattrNotModelled // EXT2_ET_EA_BAD_NAME_LEN
		}
		remain -= (nl + 3) &^ 3
		endOff += ondisk.XattrEntryLen(nl)
	}
	off, remain := base, storage
	for remain >= ondisk.XattrEntrySize && !ondisk.XattrEndAt(values, off) {
		e, _, ok := ondisk.DecodeXattrEntry(values, off)
		if !ok {
			return nil, ErrXattrNotModelled
		}
		remain -= ondisk.XattrEntrySize + (e.NameLen+3)&^3
		a := Xattr{Index: e.NameIndex, Inum: e.ValueInum}
		name := e.Name
		for i, b := range name {
			if b == 0 {
				name = name[:i]
				break
			}
		}
		a.Name = append([]byte(nil), name...)
		var hash uint32
		if e.ValueInum == 0 {
			vs := int(e.ValueSize)
			if e.ValueSize > uint32(remain) || e.ValueOffs+vs > len(values) ||
				vs > 0 && e.ValueOffs < endOff+4 {
				return nil, ErrXattrNotModelled
			}
			remain -= vs
			a.Value = append([]byte(nil), values[e.ValueOffs:e.ValueOffs+vs]...)
			padded := values[e.ValueOffs:min(len(values), e.ValueOffs+(vs+3)&^3)]
			if e.Hash != 0 && !EAHashMatches(e, padded) {
				return nil, ErrXattrNotModelled // EXT2_ET_BAD_EA_HASH
			}
		} else {
			if !f.SB.HasIncompat(ondisk.IncompatEAInode) || e.ValueOffs != 0 || e.ValueSize > 64*1024 {
				return nil, ErrXattrNotModelled
			}
			var ok bool
			if hash, ok = eaInodeHash(f, e.ValueInum, e.ValueSize); !ok {
				return nil, ErrXattrNotModelled
			}
			// Only the length is written back (the value stays in the
			// EA inode).
			a.Value = make([]byte, e.ValueSize)
			if e.Hash != 0 {
				h := ondisk.XattrNameHash(e.Name, false)
				sh := ondisk.XattrNameHash(e.Name, true)
				if e.Hash != h<<16^h>>16^hash && e.Hash != sh<<16^sh>>16^hash {
					return nil, ErrXattrNotModelled // or an old Lustre reference
				}
			}
		}
		a.EAHash = hash
		attrs = append(attrs, a)
		off += e.EntryBytes
	}
	return attrs, nil
}

// eaInodeHash opens the EA inode holding a value of size bytes as the
// library does (not inline, EA_INODE_FL, linked, the size matching) and
// returns its hash (ext2fs_get_ea_inode_hash: i_atime).
func eaInodeHash(f *fs.FS, ino, size uint32) (uint32, bool) {
	if ino == 0 || ino > f.InodesCount {
		return 0, false
	}
	n := readInodeZeroed(f, ino)
	if n.Flags()&ondisk.FlagInlineData != 0 || n.Flags()&ondisk.FlagEAInode == 0 || n.LinksCount() == 0 ||
		n.Size() != uint64(size) {
		return 0, false
	}
	return n.Atime(), true
}

// FindSystemData returns the index of "system.data" in attrs, or -1.
func FindSystemData(attrs []Xattr) int {
	for i, a := range attrs {
		if a.Index == ondisk.XattrIndexSystem && string(a.Name) == "data" {
			return i
		}
	}
	return -1
}

// xattrSpace is the library's space_used for one attribute.
func xattrSpace(a Xattr) int {
	s := ondisk.XattrEntryLen(len(a.Name))
	if a.Inum == 0 {
		s += (len(a.Value) + 3) &^ 3
	}
	return s
}

// InlineDataEASet is ext2fs_inline_data_ea_set (ext2fs_xattr_set of
// "system.data") on inode ino: an unchanged value writes nothing;
// otherwise the value is replaced where it is, if the inode body has
// room, and the attributes are written back as ext2fs_xattrs_write
// writes them (writeXattrs). The attribute must be in the inode body.
func InlineDataEASet(fsys *Filsys, ino uint32, value []byte) error {
	f := fsys.FS
	n := readInodeZeroed(f, ino)
	attrs, ibody, err := ReadXattrs(f, n)
	if err != nil {
		return err
	}
	old := FindSystemData(attrs)
	if old < 0 || old >= ibody {
		return ErrXattrNotModelled
	}
	if attrs[old].Inum == 0 && string(attrs[old].Value) == string(value) {
		return nil
	}
	extra := int(n.ExtraIsize())
	if extra == 0 {
		extra = int(f.SB.WantExtraIsize())
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
		return ErrEANoSpace
	}
	attrs[old].Value = append([]byte(nil), value...)
	attrs[old].Inum, attrs[old].EAHash = 0, 0
	return writeXattrs(fsys, ino, attrs, ibody)
}

// writeXattrs is ext2fs_xattrs_write: the in-inode area is cleared and
// the first ibody attributes written in order with their values packed
// down from its end (a zero hash, but for values in EA inodes); an inode
// with an EA block gets the rest written there the same way, each entry
// with its hash, under a header with one reference, one block and a zero
// block hash. A block shared with other inodes is copied to a new block
// (prep_ea_block_for_write) taken from fsys.Alloc at the inode's goal;
// with no allocator (or no block) that is ErrXattrNotModelled.
func writeXattrs(fsys *Filsys, ino uint32, attrs []Xattr, ibody int) error {
	f := fsys.FS
	n := readInodeZeroed(f, ino)
	extra := int(n.ExtraIsize())
	if extra&3 != 0 || extra < 2 || len(n) <= ondisk.GoodOldInodeSize+extra+4 {
		return ErrXattrNotModelled
	}
	var block []byte
	blk := n.FileACL(f.SB.Is64bit())
	if blk != 0 || ibody < len(attrs) {
		if blk == 0 || blk < f.FirstDataBlock || blk >= f.BlocksCount {
			return ErrXattrNotModelled
		}
		old := make([]byte, f.BlockSize)
		x := ondisk.XattrBlock(old)
		if f.ReadBlock(blk, old) != nil || x.Magic() != ondisk.XattrMagic {
			return ErrXattrNotModelled
		}
		if refs := x.Refcount(); refs != 1 {
			// One reference less on the old block, the attributes in
			// a new one.
			if refs == 0 || fsys.Alloc == nil {
				return ErrXattrNotModelled
			}
			nb, ok := fsys.Alloc.AllocBlock(FindInodeGoal(f, ino, n, 0))
			if !ok {
				return ErrXattrNotModelled
			}
			x.SetRefcount(refs - 1)
			if f.MetadataCsum {
				x.SetChecksum(f.CsumSeed, blk)
			}
			fsys.IO.WriteBlock(blk, old)
			blk = nb
			n.SetFileACL(blk)
		}
		block = make([]byte, f.BlockSize)
		nx := ondisk.XattrBlock(block)
		nx.SetMagic(ondisk.XattrMagic)
		nx.SetRefcount(1)
		nx.SetBlocks(1)
		if err := putXattrs(block, ondisk.XattrHeaderSize, attrs[ibody:], true); err != nil {
			return err
		}
		if f.MetadataCsum {
			nx.SetChecksum(f.CsumSeed, blk)
		}
	}
	start := ondisk.GoodOldInodeSize + extra
	ondisk.SetXattrMagic(n[start:])
	if err := putXattrs(n[start+4:], 0, attrs[:ibody], false); err != nil {
		return err
	}
	if block != nil {
		fsys.IO.WriteBlock(blk, block)
	}
	fsys.IO.WriteInode(ino, n)
	return nil
}

// putXattrs is write_xattrs_to_buffer: buf is cleared from base on and
// the entries are written from base, their values packed down from the
// end of buf (offsets counted from the start of buf); an entry's hash is
// written when hashes is set or its value lives in an EA inode.
func putXattrs(buf []byte, base int, attrs []Xattr, hashes bool) error {
	clear(buf[base:])
	end := len(buf)
	off := base
	for _, a := range attrs {
		elen := ondisk.XattrEntryLen(len(a.Name))
		vsize := 0
		if a.Inum == 0 {
			vsize = (len(a.Value) + 3) &^ 3
		}
		if end-vsize < off+elen+4 {
			return ErrEANoSpace // the free-space checks make it fit
		}
		h := ondisk.XattrNameHash(a.Name, false)
		voff := 0
		if a.Inum == 0 {
			end -= vsize
			voff = end
			copy(buf[end:], a.Value)
			h = ondisk.XattrValueHash(h, buf[end:end+vsize])
		} else {
			h = h<<16 ^ h>>16 ^ a.EAHash
		}
		ondisk.PutXattrEntry(buf, off, a.Index, a.Name, uint16(voff), a.Inum, uint32(len(a.Value)))
		if hashes || a.Inum != 0 {
			ondisk.SetXattrEntryHash(buf, off, h)
		}
		off += elen
	}
	return nil
}
