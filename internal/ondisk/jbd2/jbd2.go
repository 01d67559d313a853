package jbd2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

var be = binary.BigEndian

// zeroWord stands in for a checksum field while a checksum is computed. It is
// only ever read; a package-level array keeps the computation allocation-free.
var zeroWord [4]byte

// Magic is h_magic of every journal metadata block (JBD2_MAGIC_NUMBER).
const Magic = 0xC03B3998

// Sizes of the fixed structures.
const (
	HeaderSize       = 12   // sizeof(journal_header_t)
	SuperblockSize   = 1024 // sizeof(journal_superblock_t)
	CommitHeaderSize = 60   // sizeof(struct commit_header)
	RevokeHeaderSize = 16   // sizeof(jbd2_journal_revoke_header_t)
	TailSize         = 4    // sizeof(struct jbd2_journal_block_tail)
	UUIDSize         = 16
	MaxUsers         = 48 // JBD2_USERS_MAX

	// MinJournalBlocks is JBD2_MIN_JOURNAL_BLOCKS: the smallest journal
	// e2fsck accepts, and the smallest normal log a fast-commit journal may
	// leave.
	MinJournalBlocks = 1024
	// DefaultFCBlocks is JBD2_DEFAULT_FAST_COMMIT_BLOCKS, used when
	// s_num_fc_blks is 0.
	DefaultFCBlocks = 256
)

// Offsets in journal_header_t.
const (
	offHMagic     = 0x0 // h_magic
	offHBlocktype = 0x4 // h_blocktype
	offHSequence  = 0x8 // h_sequence
)

// Errors. ErrCorrupt marks on-disk data that is wrong; ErrUnsupported marks
// a journal this code (and e2fsck) does not understand. Both are matched with
// errors.Is through the structured errors below.
var (
	ErrCorrupt     = errors.New("jbd2: corrupt journal data")
	ErrUnsupported = errors.New("jbd2: unsupported journal format")
)

// FormatError reports a structure that cannot be decoded at all: too short
// for its fixed part, or a count pointing outside the block.
type FormatError struct {
	Struct string // "superblock", "descriptor", ...
	Field  string // kernel field name, or "" for the whole structure
	Off    int    // byte offset of the field in the block
	Val    uint64 // offending value
	Msg    string
}

func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString("jbd2: ")
	b.WriteString(e.Struct)
	if e.Field != "" {
		b.WriteString(" ")
		b.WriteString(e.Field)
	}
	fmt.Fprintf(&b, " at offset %#x: %s (%d)", e.Off, e.Msg, e.Val)
	return b.String()
}

// Unwrap makes every FormatError match ErrCorrupt.
func (e *FormatError) Unwrap() error { return ErrCorrupt }

// BlockType is h_blocktype.
type BlockType uint32

// Block types (JBD2_*_BLOCK, JBD2_SUPERBLOCK_V*).
const (
	BlockDescriptor BlockType = 1 // JBD2_DESCRIPTOR_BLOCK
	BlockCommit     BlockType = 2 // JBD2_COMMIT_BLOCK
	BlockSuperV1    BlockType = 3 // JBD2_SUPERBLOCK_V1
	BlockSuperV2    BlockType = 4 // JBD2_SUPERBLOCK_V2
	BlockRevoke     BlockType = 5 // JBD2_REVOKE_BLOCK
	BlockFastCommit BlockType = 6 // JBD2_FC_BLOCK (never carries a header on disk)
)

var blockTypeNames = [...]string{
	BlockDescriptor: "descriptor",
	BlockCommit:     "commit",
	BlockSuperV1:    "superblock v1",
	BlockSuperV2:    "superblock v2",
	BlockRevoke:     "revoke",
	BlockFastCommit: "fast commit",
}

func (t BlockType) String() string {
	if int(t) < len(blockTypeNames) && blockTypeNames[t] != "" {
		return blockTypeNames[t]
	}
	return "blocktype(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// Header is journal_header_t, the first 12 bytes of every journal metadata
// block (and of the superblock).
type Header [HeaderSize]byte

// HeaderOf returns the header at the start of b without copying.
func HeaderOf(b []byte) (*Header, error) {
	if len(b) < HeaderSize {
		return nil, &FormatError{Struct: "header", Msg: "block too short", Val: uint64(len(b))}
	}
	return (*Header)(b[:HeaderSize]), nil
}

func (h *Header) Magic() uint32        { return be.Uint32(h[offHMagic:]) }
func (h *Header) BlockType() BlockType { return BlockType(be.Uint32(h[offHBlocktype:])) }
func (h *Header) Sequence() uint32     { return be.Uint32(h[offHSequence:]) }

// Valid reports whether h carries the jbd2 magic number.
func (h *Header) Valid() bool { return h.Magic() == Magic }

// CompatFeature is s_feature_compat.
type CompatFeature uint32

// IncompatFeature is s_feature_incompat.
type IncompatFeature uint32

// RoCompatFeature is s_feature_ro_compat (no bits are defined).
type RoCompatFeature uint32

const (
	CompatChecksum CompatFeature = 0x1 // JBD2_FEATURE_COMPAT_CHECKSUM (v1 checksums)

	IncompatRevoke      IncompatFeature = 0x01 // JBD2_FEATURE_INCOMPAT_REVOKE
	Incompat64Bit       IncompatFeature = 0x02 // JBD2_FEATURE_INCOMPAT_64BIT
	IncompatAsyncCommit IncompatFeature = 0x04 // JBD2_FEATURE_INCOMPAT_ASYNC_COMMIT
	IncompatCsumV2      IncompatFeature = 0x08 // JBD2_FEATURE_INCOMPAT_CSUM_V2
	IncompatCsumV3      IncompatFeature = 0x10 // JBD2_FEATURE_INCOMPAT_CSUM_V3
	IncompatFastCommit  IncompatFeature = 0x20 // JBD2_FEATURE_INCOMPAT_FAST_COMMIT

	// KnownCompat, KnownIncompat and KnownRoCompat are the bits e2fsck
	// understands; others make it refuse the journal.
	KnownCompat   = CompatChecksum
	KnownIncompat = IncompatRevoke | Incompat64Bit | IncompatAsyncCommit |
		IncompatCsumV2 | IncompatCsumV3 | IncompatFastCommit
	KnownRoCompat RoCompatFeature = 0
)

var compatNames = map[uint32]string{
	uint32(CompatChecksum): "journal_checksum",
}

var incompatNames = map[uint32]string{
	uint32(IncompatRevoke):      "journal_incompat_revoke",
	uint32(Incompat64Bit):       "journal_64bit",
	uint32(IncompatAsyncCommit): "journal_async_commit",
	uint32(IncompatCsumV2):      "journal_checksum_v2",
	uint32(IncompatCsumV3):      "journal_checksum_v3",
}

// flagString renders the set bits of v, lowest first, separated by spaces,
// like dumpe2fs's "Journal features:" line; unnamed bits print as
// FEATURE_<kind><bit>. An empty set prints as "(none)".
func flagString(v uint32, names map[uint32]string, kind byte) string {
	if v == 0 {
		return "(none)"
	}
	var b strings.Builder
	for bit := 0; bit < 32; bit++ {
		m := uint32(1) << bit
		if v&m == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if n, ok := names[m]; ok {
			b.WriteString(n)
		} else {
			b.WriteString("FEATURE_")
			b.WriteByte(kind)
			b.WriteString(strconv.Itoa(bit))
		}
	}
	return b.String()
}

func (f CompatFeature) String() string   { return flagString(uint32(f), compatNames, 'C') }
func (f IncompatFeature) String() string { return flagString(uint32(f), incompatNames, 'I') }
func (f RoCompatFeature) String() string { return flagString(uint32(f), nil, 'R') }

// TagFlag is the flags word of a descriptor tag (t_flags).
type TagFlag uint32

const (
	FlagEscape   TagFlag = 1 // JBD2_FLAG_ESCAPE: the block's first word was the magic and was zeroed
	FlagSameUUID TagFlag = 2 // JBD2_FLAG_SAME_UUID: no 16-byte UUID follows the tag
	FlagDeleted  TagFlag = 4 // JBD2_FLAG_DELETED
	FlagLastTag  TagFlag = 8 // JBD2_FLAG_LAST_TAG: last tag of the descriptor
)

var tagFlagNames = map[uint32]string{
	uint32(FlagEscape):   "escape",
	uint32(FlagSameUUID): "same_uuid",
	uint32(FlagDeleted):  "deleted",
	uint32(FlagLastTag):  "last_tag",
}

func (f TagFlag) String() string { return flagString(uint32(f), tagFlagNames, 'F') }
