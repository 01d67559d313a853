package jbd2

import (
	"encoding/binary"
	"strconv"
)

// FCTag is the tag of a fast-commit record (EXT4_FC_TAG_*). Fast-commit
// blocks hold little-endian tag-length-value records (struct ext4_fc_tl)
// and no jbd2 header.
type FCTag uint16

const (
	FCAddRange FCTag = 1 // EXT4_FC_TAG_ADD_RANGE
	FCDelRange FCTag = 2 // EXT4_FC_TAG_DEL_RANGE
	FCCreat    FCTag = 3 // EXT4_FC_TAG_CREAT
	FCLink     FCTag = 4 // EXT4_FC_TAG_LINK
	FCUnlink   FCTag = 5 // EXT4_FC_TAG_UNLINK
	FCInode    FCTag = 6 // EXT4_FC_TAG_INODE
	FCPad      FCTag = 7 // EXT4_FC_TAG_PAD
	FCTail     FCTag = 8 // EXT4_FC_TAG_TAIL
	FCHead     FCTag = 9 // EXT4_FC_TAG_HEAD

	// FCTagHeaderSize is sizeof(struct ext4_fc_tl).
	FCTagHeaderSize = 4
)

// Offsets in struct ext4_fc_tl and in the head and tail values.
const (
	offFCTag      = 0 // fc_tag
	offFCLen      = 2 // fc_len
	offFCFeatures = 0 // ext4_fc_head.fc_features
	offFCHeadTid  = 4 // ext4_fc_head.fc_tid
	offFCTailTid  = 0 // ext4_fc_tail.fc_tid
	offFCTailCrc  = 4 // ext4_fc_tail.fc_crc
)

var fcTagNames = [...]string{
	FCAddRange: "add_range", FCDelRange: "del_range", FCCreat: "creat",
	FCLink: "link", FCUnlink: "unlink", FCInode: "inode", FCPad: "pad",
	FCTail: "tail", FCHead: "head",
}

func (t FCTag) String() string {
	if int(t) < len(fcTagNames) && fcTagNames[t] != "" {
		return fcTagNames[t]
	}
	return "fc_tag(" + strconv.Itoa(int(t)) + ")"
}

// Sizes of the fixed parts of the fast-commit values.
const (
	FCDentryInfoSize = 8  // struct ext4_fc_dentry_info, before the name
	FCAddRangeSize   = 16 // struct ext4_fc_add_range
	FCDelRangeSize   = 12 // struct ext4_fc_del_range
	FCInodeInoSize   = 4  // ext4_fc_inode.fc_ino, before the raw inode
)

// Offsets in the values of the dentry, range and inode records.
const (
	offFCDentryParent = 0 // ext4_fc_dentry_info.fc_parent_ino
	offFCDentryIno    = 4 // ext4_fc_dentry_info.fc_ino
	offFCRangeIno     = 0 // ext4_fc_add_range.fc_ino, ext4_fc_del_range.fc_ino
	offFCAddExtent    = 4 // ext4_fc_add_range.fc_ex (a 12-byte ext4_extent)
	offFCDelLblk      = 4 // ext4_fc_del_range.fc_lblk
	offFCDelLen       = 8 // ext4_fc_del_range.fc_len
	offFCInodeIno     = 0 // ext4_fc_inode.fc_ino
)

// DecodeFCTagHeader decodes the struct ext4_fc_tl at the start of b: the
// record's tag and the length of its value; ok is false when b is
// shorter than the header.
func DecodeFCTagHeader(b []byte) (tag FCTag, n int, ok bool) {
	if len(b) < FCTagHeaderSize {
		return 0, 0, false
	}
	le := binary.LittleEndian
	return FCTag(le.Uint16(b[offFCTag:])), int(le.Uint16(b[offFCLen:])), true
}

// DecodeFCDentry decodes the struct ext4_fc_dentry_info that starts the
// value v of a CREAT, LINK or UNLINK record (the name follows it).
func DecodeFCDentry(v []byte) (parent, ino uint32, ok bool) {
	if len(v) < FCDentryInfoSize {
		return 0, 0, false
	}
	le := binary.LittleEndian
	return le.Uint32(v[offFCDentryParent:]), le.Uint32(v[offFCDentryIno:]), true
}

// DecodeFCAddRange decodes an ADD_RANGE value: the inode and its new
// extent, an on-disk ext4_extent aliasing v.
func DecodeFCAddRange(v []byte) (ino uint32, extent []byte, ok bool) {
	if len(v) < FCAddRangeSize {
		return 0, nil, false
	}
	return binary.LittleEndian.Uint32(v[offFCRangeIno:]), v[offFCAddExtent:FCAddRangeSize], true
}

// DecodeFCDelRange decodes a DEL_RANGE value: the inode and the logical
// range removed.
func DecodeFCDelRange(v []byte) (ino, lblk, n uint32, ok bool) {
	if len(v) < FCDelRangeSize {
		return 0, 0, 0, false
	}
	le := binary.LittleEndian
	return le.Uint32(v[offFCRangeIno:]), le.Uint32(v[offFCDelLblk:]), le.Uint32(v[offFCDelLen:]), true
}

// DecodeFCInode decodes the inode number of an INODE value; the raw
// inode follows it.
func DecodeFCInode(v []byte) (ino uint32, raw []byte, ok bool) {
	if len(v) < FCInodeInoSize {
		return 0, nil, false
	}
	return binary.LittleEndian.Uint32(v[offFCInodeIno:]), v[FCInodeInoSize:], true
}

// FCRecord is one fast-commit record; Value aliases the block.
type FCRecord struct {
	Tag   FCTag
	Value []byte
	Off   int // offset of the record's tag in the block
}

// Head decodes an FCHead value: the fast-commit features and the tid of the
// full commit the fast commits follow.
func (r FCRecord) Head() (features, tid uint32, ok bool) {
	if r.Tag != FCHead || len(r.Value) < 8 {
		return 0, 0, false
	}
	le := binary.LittleEndian
	return le.Uint32(r.Value[offFCFeatures:]), le.Uint32(r.Value[offFCHeadTid:]), true
}

// Tail decodes an FCTail value: the tid and the crc32c closing a fast
// commit. (Verifying the crc needs every record since the previous tail and
// is not implemented here.)
func (r FCRecord) Tail() (tid, crc uint32, ok bool) {
	if r.Tag != FCTail || len(r.Value) < 8 {
		return 0, 0, false
	}
	le := binary.LittleEndian
	return le.Uint32(r.Value[offFCTailTid:]), le.Uint32(r.Value[offFCTailCrc:]), true
}

// FCRecords iterates over the records of one fast-commit block the way the
// kernel's scan does: while a record header fits, and stopping (with Err)
// at a record whose value runs past the block.
func FCRecords(b []byte) FCIter { return FCIter{b: b} }

// FCIter walks fast-commit records without allocating.
type FCIter struct {
	b   []byte
	off int
	err error
}

// Next returns the next record, or false at the end of the block.
func (it *FCIter) Next() (FCRecord, bool) {
	if it.err != nil || it.off >= len(it.b)-FCTagHeaderSize {
		return FCRecord{}, false
	}
	le := binary.LittleEndian
	p := it.b[it.off:]
	tag, n := FCTag(le.Uint16(p[offFCTag:])), int(le.Uint16(p[offFCLen:]))
	if n > len(p)-FCTagHeaderSize {
		it.err = &FormatError{Struct: "fast commit", Field: "fc_len", Off: it.off + offFCLen, Val: uint64(n), Msg: "record runs past the block"}
		return FCRecord{}, false
	}
	r := FCRecord{Tag: tag, Value: p[FCTagHeaderSize : FCTagHeaderSize+n], Off: it.off}
	it.off += FCTagHeaderSize + n
	return r, true
}

// Err reports a record that does not fit its block.
func (it *FCIter) Err() error { return it.err }
