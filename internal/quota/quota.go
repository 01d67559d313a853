// Package quota decodes the vfsv0/vfsv1 quota file format (QFMT_VFS_V1, the
// kernel's fs/quota/quota_tree.c and quotaio_v2.h; e2fsprogs' quotaio_v2.c
// and quotaio_tree.c) that ext4 keeps in its hidden quota inodes.
//
// A quota file is a sequence of 1 KiB quota blocks, independent of the
// filesystem block size:
//
//	block 0      header (magic, version) and info (grace times, dqi_blocks,
//	             free lists)
//	block 1      root of a radix tree of depth 4 indexed by the id's bytes,
//	             most significant first; each tree block holds 256 le32
//	             block references
//	leaf blocks  data blocks: a 16-byte header then fixed-size dquot entries
//	             (72 bytes in version 1, 48 in version 0); an all-zero entry
//	             is free
//
// The package does no I/O: it reads the file through the File interface.
// Decoding follows e2fsprogs 1.47.0, whose results e2fsck's quota check
// depends on: the little-endian magic is not checked (only a byte-swapped
// one is refused), every reference is checked against dqi_blocks, a data
// block is reported once however often it is referenced, and bytes past the
// end of the file read as zeros.
package quota

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Type is a quota type, numbered as e2fsck's pctx.num for PR_6_UPDATE_QUOTAS.
type Type int

// Quota types (USRQUOTA, GRPQUOTA, PRJQUOTA).
const (
	User Type = iota
	Group
	Project
	NumTypes
)

var typeNames = [NumTypes]string{"user", "group", "project"}

// String returns e2fsprogs' quota_type2name.
func (t Type) String() string {
	if t >= 0 && t < NumTypes {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", int(t))
}

// magics are INITQMAGICS, indexed by Type.
var magics = [NumTypes]uint32{0xd9c01f11, 0xd9c01927, 0xd9c03f14}

// Magic returns the header magic of a quota file of type t.
func (t Type) Magic() uint32 {
	if t >= 0 && t < NumTypes {
		return magics[t]
	}
	return 0
}

// Format constants (quotaio_tree.h, quotaio_v2.h).
const (
	BlockSize     = 1 << blockBits // QT_BLKSIZE
	blockBits     = 10             // QT_BLKSIZE_BITS
	treeOff       = 1              // QT_TREEOFF: block of the tree root
	treeDepth     = 4              // QT_TREEDEPTH
	refsPerBlock  = BlockSize / 4
	maxFileSize   = 1 << 31 // larger files are refused by v2_init_io
	headerSize    = 8       // struct v2_disk_dqheader
	infoSize      = 24      // struct v2_disk_dqinfo
	dataHdrSize   = 16      // struct qt_disk_dqdbheader
	entrySizeV1   = 72      // struct v2r1_disk_dqblk
	entrySizeV0   = 48      // struct v2r0_disk_dqblk
	versionR0     = 0
	versionR1     = 1
	infoOff       = headerSize // V2_DQINFOOFF
	maxTreeBlocks = (maxFileSize + BlockSize - 1) / BlockSize
)

// Header is struct v2_disk_dqheader.
type Header [headerSize]byte

// Offsets in Header.
const (
	offMagic   = 0 // dqh_magic
	offVersion = 4 // dqh_version
)

// Magic and Version read dqh_magic and dqh_version.
func (h *Header) Magic() uint32   { return binary.LittleEndian.Uint32(h[offMagic:]) }
func (h *Header) Version() uint32 { return binary.LittleEndian.Uint32(h[offVersion:]) }

// InfoBlock is struct v2_disk_dqinfo.
type InfoBlock [infoSize]byte

// Offsets in InfoBlock.
const (
	offBGrace    = 0  // dqi_bgrace
	offIGrace    = 4  // dqi_igrace
	offFlags     = 8  // dqi_flags
	offBlocks    = 12 // dqi_blocks
	offFreeBlk   = 16 // dqi_free_blk
	offFreeEntry = 20 // dqi_free_entry
)

func (b *InfoBlock) u32(off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }

// BGrace, IGrace, Flags, Blocks, FreeBlk and FreeEntry read the info fields.
func (b *InfoBlock) BGrace() uint32    { return b.u32(offBGrace) }
func (b *InfoBlock) IGrace() uint32    { return b.u32(offIGrace) }
func (b *InfoBlock) Flags() uint32     { return b.u32(offFlags) }
func (b *InfoBlock) Blocks() uint32    { return b.u32(offBlocks) }
func (b *InfoBlock) FreeBlk() uint32   { return b.u32(offFreeBlk) }
func (b *InfoBlock) FreeEntry() uint32 { return b.u32(offFreeEntry) }

// entryV1 is struct v2r1_disk_dqblk.
type entryV1 []byte

// Offsets in entryV1.
const (
	v1ID         = 0  // dqb_id
	v1IHardLimit = 8  // dqb_ihardlimit
	v1ISoftLimit = 16 // dqb_isoftlimit
	v1CurInodes  = 24 // dqb_curinodes
	v1BHardLimit = 32 // dqb_bhardlimit
	v1BSoftLimit = 40 // dqb_bsoftlimit
	v1CurSpace   = 48 // dqb_curspace
	v1BTime      = 56 // dqb_btime
	v1ITime      = 64 // dqb_itime
)

func (e entryV1) u64(off int) uint64 { return binary.LittleEndian.Uint64(e[off:]) }

func (e entryV1) dquot() Dquot {
	return Dquot{
		ID:         binary.LittleEndian.Uint32(e[v1ID:]),
		IHardLimit: e.u64(v1IHardLimit), ISoftLimit: e.u64(v1ISoftLimit),
		CurInodes:  int64(e.u64(v1CurInodes)),
		BHardLimit: e.u64(v1BHardLimit), BSoftLimit: e.u64(v1BSoftLimit),
		CurSpace: int64(e.u64(v1CurSpace)),
		BTime:    e.u64(v1BTime), ITime: e.u64(v1ITime),
	}
}

// entryV0 is struct v2r0_disk_dqblk (32-bit limits and inode count).
type entryV0 []byte

// Offsets in entryV0.
const (
	v0ID         = 0  // dqb_id
	v0IHardLimit = 4  // dqb_ihardlimit
	v0ISoftLimit = 8  // dqb_isoftlimit
	v0CurInodes  = 12 // dqb_curinodes
	v0BHardLimit = 16 // dqb_bhardlimit
	v0BSoftLimit = 20 // dqb_bsoftlimit
	v0CurSpace   = 24 // dqb_curspace
	v0BTime      = 32 // dqb_btime
	v0ITime      = 40 // dqb_itime
)

func (e entryV0) u32(off int) uint64 { return uint64(binary.LittleEndian.Uint32(e[off:])) }

func (e entryV0) dquot() Dquot {
	return Dquot{
		ID:         binary.LittleEndian.Uint32(e[v0ID:]),
		IHardLimit: e.u32(v0IHardLimit), ISoftLimit: e.u32(v0ISoftLimit),
		CurInodes:  int64(e.u32(v0CurInodes)),
		BHardLimit: e.u32(v0BHardLimit), BSoftLimit: e.u32(v0BSoftLimit),
		CurSpace: int64(binary.LittleEndian.Uint64(e[v0CurSpace:])),
		BTime:    binary.LittleEndian.Uint64(e[v0BTime:]),
		ITime:    binary.LittleEndian.Uint64(e[v0ITime:]),
	}
}

// Dquot is one decoded quota entry. CurSpace (bytes) and CurInodes are
// signed like e2fsprogs' qsize_t, which is how e2fsck prints them.
type Dquot struct {
	ID                     uint32
	IHardLimit, ISoftLimit uint64
	CurInodes              int64
	BHardLimit, BSoftLimit uint64
	CurSpace               int64
	BTime, ITime           uint64
}

// File is the content of a quota file.
type File interface {
	// Size is the file's length in bytes (i_size).
	Size() uint64
	// ReadAt follows io.ReaderAt: a read reaching past Size returns the
	// bytes before it and io.EOF. Any other error makes the whole request
	// read as zeros, as e2fsprogs' quota_read_nomount does.
	io.ReaderAt
}

// Errors. All of them wrap ErrCorrupt.
var (
	// ErrCorrupt marks a quota file e2fsck cannot use.
	ErrCorrupt = errors.New("quota: corrupt quota file")
	// ErrWrongEndian is a header whose magic is the byte-swapped magic of
	// the expected type.
	ErrWrongEndian = fmt.Errorf("%w: stored in wrong endianness", ErrCorrupt)
)

// FormatError describes a field that makes the file unusable.
type FormatError struct {
	Struct string // "header", "info", "tree"
	Field  string
	Off    int64  // byte offset in the file
	Val    uint64 // the offending value
	Limit  uint64 // the bound it broke, when there is one
}

func (e *FormatError) Error() string {
	if e.Limit != 0 {
		return fmt.Sprintf("quota: %s %s %d at offset %d (limit %d)", e.Struct, e.Field, e.Val, e.Off, e.Limit)
	}
	return fmt.Sprintf("quota: %s %s %d at offset %d", e.Struct, e.Field, e.Val, e.Off)
}

// Unwrap makes every FormatError an ErrCorrupt.
func (e *FormatError) Unwrap() error { return ErrCorrupt }

// Handle is an opened quota file whose header and info passed e2fsprogs'
// v2_check_file and v2_init_io.
type Handle struct {
	f         File
	typ       Type
	Header    Header
	Info      InfoBlock
	entrySize int
}

// readFull reads len(p) bytes at off with e2fsprogs' semantics: it returns
// the number of bytes read, 0 after an error.
func readFull(f File, p []byte, off int64) int {
	n, err := f.ReadAt(p, off)
	if (err != nil && !errors.Is(err, io.EOF)) || n < 0 || n > len(p) {
		return 0
	}
	return n
}

// Open checks the header and info block of a quota file of type t as
// e2fsprogs' quota_file_open does (format QFMT_VFS_V1).
func Open(f File, t Type) (*Handle, error) {
	if t < 0 || t >= NumTypes {
		return nil, fmt.Errorf("quota: invalid quota type %d", int(t))
	}
	h := &Handle{f: f, typ: t}
	// v2_check_file.
	if readFull(f, h.Header[:], 0) != headerSize {
		return nil, &FormatError{Struct: "header", Field: "size", Val: f.Size()}
	}
	if binary.BigEndian.Uint32(h.Header[offMagic:]) == t.Magic() {
		return nil, ErrWrongEndian
	}
	switch v := h.Header.Version(); v {
	case versionR0:
		h.entrySize = entrySizeV0
	case versionR1:
		h.entrySize = entrySizeV1
	default:
		return nil, &FormatError{Struct: "header", Field: "dqh_version", Off: offVersion, Val: uint64(v)}
	}
	// v2_init_io.
	if readFull(f, h.Info[:], infoOff) != infoSize {
		return nil, &FormatError{Struct: "info", Field: "size", Off: infoOff, Val: f.Size()}
	}
	size := f.Size()
	if size > maxFileSize {
		return nil, &FormatError{Struct: "info", Field: "file size", Val: size, Limit: maxFileSize}
	}
	if b := h.Info.Blocks(); uint64(b) > (size+BlockSize-1)>>blockBits {
		return nil, &FormatError{Struct: "info", Field: "dqi_blocks", Off: infoOff + offBlocks, Val: uint64(b), Limit: (size + BlockSize - 1) >> blockBits}
	}
	if v := h.Info.FreeBlk(); v >= h.Info.Blocks() {
		return nil, &FormatError{Struct: "info", Field: "dqi_free_blk", Off: infoOff + offFreeBlk, Val: uint64(v), Limit: uint64(h.Info.Blocks())}
	}
	if v := h.Info.FreeEntry(); v >= h.Info.Blocks() {
		return nil, &FormatError{Struct: "info", Field: "dqi_free_entry", Off: infoOff + offFreeEntry, Val: uint64(v), Limit: uint64(h.Info.Blocks())}
	}
	return h, nil
}

// Type returns the quota type the file was opened as.
func (h *Handle) Type() Type { return h.typ }

// EntriesPerBlock is qtree_dqstr_in_blk.
func (h *Handle) EntriesPerBlock() int { return (BlockSize - dataHdrSize) / h.entrySize }

// readBlock is read_blk: a short read is completed with zeros.
func (h *Handle) readBlock(blk uint32, buf []byte) {
	n := readFull(h.f, buf, int64(blk)<<blockBits)
	clear(buf[n:])
}

// Scan calls fn for every used entry of the tree in e2fsprogs' order
// (depth first, references in index order, each data block once), as
// qtree_scan_dquots does. A reference at or past dqi_blocks stops the scan
// with a *FormatError (after the entries already reported).
//
// A tree block reached again at the same depth is not walked twice: its
// data blocks have all been reported already, so the result is the same as
// e2fsprogs' and a cyclic or heavily shared tree costs at most one walk per
// block and depth.
func (h *Handle) Scan(fn func(Dquot)) error {
	blocks := h.Info.Blocks() // <= maxTreeBlocks, checked by Open
	s := &scanner{
		h:       h,
		fn:      fn,
		data:    make([]byte, (blocks+7)/8),
		visited: make(map[uint64]bool),
	}
	for i := range s.bufs {
		s.bufs[i] = make([]byte, BlockSize)
	}
	return s.tree(treeOff, 0)
}

type scanner struct {
	h       *Handle
	fn      func(Dquot)
	data    []byte          // data blocks reported (one bit per quota block)
	visited map[uint64]bool // tree blocks walked, keyed by depth<<32 | block
	bufs    [treeDepth + 1][]byte
}

func (s *scanner) checkRef(blk uint32, i int, parent uint32) error {
	if blk >= s.h.Info.Blocks() {
		return &FormatError{Struct: "tree", Field: "reference", Off: int64(parent)<<blockBits + int64(4*i),
			Val: uint64(blk), Limit: uint64(s.h.Info.Blocks())}
	}
	return nil
}

// tree is report_tree.
func (s *scanner) tree(blk uint32, depth int) error {
	key := uint64(depth)<<32 | uint64(blk)
	if s.visited[key] {
		return nil
	}
	s.visited[key] = true
	buf := s.bufs[depth]
	s.h.readBlock(blk, buf)
	for i := 0; i < refsPerBlock; i++ {
		ref := binary.LittleEndian.Uint32(buf[4*i:])
		if depth == treeDepth-1 {
			if err := s.checkRef(ref, i, blk); err != nil {
				return err
			}
			if ref != 0 && s.data[ref>>3]&(1<<(ref&7)) == 0 {
				s.block(ref)
			}
			continue
		}
		if ref == 0 {
			continue
		}
		if err := s.checkRef(ref, i, blk); err != nil {
			return err
		}
		if err := s.tree(ref, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// block is report_block.
func (s *scanner) block(blk uint32) {
	s.data[blk>>3] |= 1 << (blk & 7)
	buf := s.bufs[treeDepth]
	s.h.readBlock(blk, buf)
	size := s.h.entrySize
	for i := 0; i < s.h.EntriesPerBlock(); i++ {
		e := buf[dataHdrSize+i*size : dataHdrSize+(i+1)*size]
		if isZero(e) {
			continue
		}
		if size == entrySizeV1 {
			s.fn(entryV1(e).dquot())
		} else {
			s.fn(entryV0(e).dquot())
		}
	}
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
