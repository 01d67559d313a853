package jbd2

import (
	"fmt"

	"gofsck/internal/csum"
)

// Offsets in journal_superblock_t.
const (
	offSHeader          = 0x000 // s_header
	offSBlocksize       = 0x00C // s_blocksize
	offSMaxlen          = 0x010 // s_maxlen
	offSFirst           = 0x014 // s_first
	offSSequence        = 0x018 // s_sequence
	offSStart           = 0x01C // s_start
	offSErrno           = 0x020 // s_errno
	offSFeatureCompat   = 0x024 // s_feature_compat (first V2-only field)
	offSFeatureIncompat = 0x028 // s_feature_incompat
	offSFeatureRoCompat = 0x02C // s_feature_ro_compat
	offSUUID            = 0x030 // s_uuid[16]
	offSNrUsers         = 0x040 // s_nr_users
	offSDynsuper        = 0x044 // s_dynsuper
	offSMaxTransaction  = 0x048 // s_max_transaction
	offSMaxTransData    = 0x04C // s_max_trans_data
	offSChecksumType    = 0x050 // s_checksum_type (u8)
	offSNumFCBlks       = 0x054 // s_num_fc_blks
	offSHeadBlock       = 0x058 // s_head (kernel >= 6.x; padding in e2fsprogs 1.47)
	offSChecksum        = 0x0FC // s_checksum
	offSUsers           = 0x100 // s_users[16*48]

	// V1SuperblockSize is the part of the superblock a V1 journal uses
	// (V1_SB_SIZE in e2fsck); e2fsck's clear-v2 fix zeroes everything after.
	V1SuperblockSize = offSFeatureCompat
)

// ChecksumTypeCRC32C is the only s_checksum_type accepted with csum_v2/v3
// (JBD2_CRC32C_CHKSUM). The v1 commit-block types are ChecksumCRC32 etc.
const ChecksumTypeCRC32C = 4

// Superblock is journal_superblock_t.
type Superblock [SuperblockSize]byte

// SuperblockOf returns the superblock at the start of b without copying.
func SuperblockOf(b []byte) (*Superblock, error) {
	if len(b) < SuperblockSize {
		return nil, &FormatError{Struct: "superblock", Msg: "block too short", Val: uint64(len(b))}
	}
	return (*Superblock)(b[:SuperblockSize]), nil
}

func (s *Superblock) u32(off int) uint32 { return be.Uint32(s[off:]) }

// Header returns s_header.
func (s *Superblock) Header() *Header { return (*Header)(s[offSHeader:HeaderSize]) }

func (s *Superblock) BlockSize() uint32      { return s.u32(offSBlocksize) }
func (s *Superblock) MaxLen() uint32         { return s.u32(offSMaxlen) }
func (s *Superblock) First() uint32          { return s.u32(offSFirst) }
func (s *Superblock) Sequence() uint32       { return s.u32(offSSequence) }
func (s *Superblock) Start() uint32          { return s.u32(offSStart) }
func (s *Superblock) Errno() int32           { return int32(s.u32(offSErrno)) }
func (s *Superblock) NrUsers() uint32        { return s.u32(offSNrUsers) }
func (s *Superblock) DynSuper() uint32       { return s.u32(offSDynsuper) }
func (s *Superblock) MaxTransaction() uint32 { return s.u32(offSMaxTransaction) }
func (s *Superblock) MaxTransData() uint32   { return s.u32(offSMaxTransData) }
func (s *Superblock) ChecksumType() uint8    { return s[offSChecksumType] }
func (s *Superblock) Checksum() uint32       { return s.u32(offSChecksum) }

// Head is s_head, the log head the kernel records on a clean unmount (a
// padding word for e2fsprogs 1.47).
func (s *Superblock) Head() uint32 { return s.u32(offSHeadBlock) }

// NumFCBlocksRaw is s_num_fc_blks as stored (0 means the default).
func (s *Superblock) NumFCBlocksRaw() uint32 { return s.u32(offSNumFCBlks) }

// FeatureCompat, FeatureIncompat and FeatureRoCompat return the stored
// feature words. They are meaningful only for a V2 superblock; the Format
// built by Superblock.Format ignores them for V1, as the kernel does.
func (s *Superblock) FeatureCompat() CompatFeature { return CompatFeature(s.u32(offSFeatureCompat)) }
func (s *Superblock) FeatureIncompat() IncompatFeature {
	return IncompatFeature(s.u32(offSFeatureIncompat))
}
func (s *Superblock) FeatureRoCompat() RoCompatFeature {
	return RoCompatFeature(s.u32(offSFeatureRoCompat))
}

// UUID returns s_uuid.
func (s *Superblock) UUID() (u [UUIDSize]byte) {
	copy(u[:], s[offSUUID:])
	return u
}

// User returns s_users[i], the UUID of the i-th filesystem sharing an
// external journal; ok is false for i outside 0..MaxUsers-1.
func (s *Superblock) User(i int) (u [UUIDSize]byte, ok bool) {
	if i < 0 || i >= MaxUsers {
		return u, false
	}
	copy(u[:], s[offSUsers+i*UUIDSize:])
	return u, true
}

// Version is 1 or 2 for a V1/V2 superblock and 0 for anything else.
func (s *Superblock) Version() int {
	switch s.Header().BlockType() {
	case BlockSuperV1:
		return 1
	case BlockSuperV2:
		return 2
	}
	return 0
}

// ComputeChecksum returns crc32c(~0, superblock with s_checksum zeroed).
func (s *Superblock) ComputeChecksum() uint32 {
	c := csum.Crc32c(^uint32(0), s[:offSChecksum])
	c = csum.Crc32c(c, zeroWord[:])
	return csum.Crc32c(c, s[offSChecksum+4:])
}

// ChecksumValid reports whether s_checksum matches ComputeChecksum. It does
// not look at the features: callers check it only with csum_v2/v3, as e2fsck
// does (Validate).
func (s *Superblock) ChecksumValid() bool { return s.ComputeChecksum() == s.Checksum() }

// ChecksumSeed is crc32c(~0, s_uuid), the seed of every csum_v2/v3 checksum
// other than the superblock's own.
func (s *Superblock) ChecksumSeed() uint32 {
	return csum.Crc32c(^uint32(0), s[offSUUID:offSUUID+UUIDSize])
}

// StrayV2Fields reports e2fsck's clear-v2 condition (PR_0_CLEAR_V2_JOURNAL):
// a V1 superblock with any of the V2 feature words or s_nr_users set, or,
// for an internal journal, a V2 superblock with s_nr_users > 1. The fix
// zeroes every byte from V1SuperblockSize on.
func (s *Superblock) StrayV2Fields(internal bool) bool {
	switch s.Version() {
	case 1:
		return s.FeatureCompat() != 0 || s.FeatureIncompat() != 0 ||
			s.FeatureRoCompat() != 0 || s.NrUsers() != 0
	case 2:
		return internal && s.NrUsers() > 1
	}
	return false
}

// Format is what a journal's block layout depends on: the version and, for
// V2 only, the feature words.
type Format struct {
	Version  int
	Compat   CompatFeature
	Incompat IncompatFeature
	RoCompat RoCompatFeature
}

// Format returns the block format the superblock describes. For a V1
// superblock the feature words are ignored (JBD2_HAS_*_FEATURE require
// version 2).
func (s *Superblock) Format() Format {
	f := Format{Version: s.Version()}
	if f.Version >= 2 {
		f.Compat = s.FeatureCompat()
		f.Incompat = s.FeatureIncompat()
		f.RoCompat = s.FeatureRoCompat()
	}
	return f
}

func (f Format) Has64Bit() bool       { return f.Incompat&Incompat64Bit != 0 }
func (f Format) HasCsumV2() bool      { return f.Incompat&IncompatCsumV2 != 0 }
func (f Format) HasCsumV3() bool      { return f.Incompat&IncompatCsumV3 != 0 }
func (f Format) HasCsumV2or3() bool   { return f.Incompat&(IncompatCsumV2|IncompatCsumV3) != 0 }
func (f Format) HasChecksumV1() bool  { return f.Compat&CompatChecksum != 0 }
func (f Format) HasAsyncCommit() bool { return f.Incompat&IncompatAsyncCommit != 0 }
func (f Format) HasFastCommit() bool  { return f.Incompat&IncompatFastCommit != 0 }

// TagSize is journal_tag_bytes(): 16 with csum_v3; otherwise 8, plus 4 with
// 64bit, plus 2 with csum_v2 (8, 10, 12 or 14).
func (f Format) TagSize() int {
	if f.HasCsumV3() {
		return tag3Size
	}
	n := 8
	if f.Has64Bit() {
		n += 4
	}
	if f.HasCsumV2() {
		n += 2
	}
	return n
}

// TailSize is the size of the checksum tail of descriptor and revoke blocks:
// 4 with csum_v2/v3, else 0.
func (f Format) TailSize() int {
	if f.HasCsumV2or3() {
		return TailSize
	}
	return 0
}

// RevokeRecordSize is 8 with 64bit, else 4.
func (f Format) RevokeRecordSize() int {
	if f.Has64Bit() {
		return 8
	}
	return 4
}

// Rule names one of the superblock acceptance rules of e2fsck_journal_load
// (spec 2.6).
type Rule int

const (
	RuleNone Rule = iota
	// RuleMagic: no JBD2 magic. e2fsck treats the journal inode as bad
	// (PR_0_JOURNAL_BAD_INODE).
	RuleMagic
	// RuleBlockType: a descriptor, commit or revoke block sits in the
	// superblock slot (corrupt superblock).
	RuleBlockType
	// RuleVersion: magic present but unknown blocktype
	// (PR_0_JOURNAL_UNSUPP_VERSION).
	RuleVersion
	// RuleMultiFS: V2 superblock with s_nr_users > 1
	// (PR_0_JOURNAL_UNSUPP_MULTIFS, fatal) once the clear-v2 fix, offered
	// first for internal journals, was declined.
	RuleMultiFS
	// RuleIncompat: unknown incompat bits (PR_0_JOURNAL_UNSUPP_INCOMPAT).
	RuleIncompat
	// RuleRoCompat: unknown ro_compat bits (PR_0_JOURNAL_UNSUPP_ROCOMPAT).
	RuleRoCompat
	// RuleCsumV2V3: csum_v2 and csum_v3 both set.
	RuleCsumV2V3
	// RuleCsumV1V2: csum_v2/v3 together with the compat checksum.
	RuleCsumV1V2
	// RuleChecksumType: csum_v2/v3 with s_checksum_type != 4.
	RuleChecksumType
	// RuleChecksum: csum_v2/v3 with a wrong s_checksum.
	RuleChecksum
	// RuleBlockSize: s_blocksize differs from the filesystem block size.
	RuleBlockSize
	// RuleMaxLen: s_maxlen larger than the journal ("journal too short").
	RuleMaxLen
	// RuleFastCommit: fast_commit leaves fewer than MinJournalBlocks blocks
	// for the normal log ("incorrect fast commit blocks").
	RuleFastCommit
	// RuleFirst: s_first is not below the end of the log area, so the log
	// has no room. e2fsck does not test this itself (it then misbehaves
	// while walking the log); it is reported only by Layout users, never by
	// Validate.
	RuleFirst
)

var ruleNames = [...]string{
	RuleNone:         "ok",
	RuleMagic:        "bad magic number",
	RuleBlockType:    "log block type in superblock",
	RuleVersion:      "unknown superblock version",
	RuleMultiFS:      "journal shared by several filesystems",
	RuleIncompat:     "unknown incompatible features",
	RuleRoCompat:     "unknown read-only compatible features",
	RuleCsumV2V3:     "both checksum v2 and v3",
	RuleCsumV1V2:     "checksum v2/v3 together with v1",
	RuleChecksumType: "unknown checksum type",
	RuleChecksum:     "superblock checksum mismatch",
	RuleBlockSize:    "block size differs from the filesystem's",
	RuleMaxLen:       "journal too short for s_maxlen",
	RuleFastCommit:   "incorrect fast commit blocks",
	RuleFirst:        "s_first outside the log",
}

func (r Rule) String() string {
	if r >= 0 && int(r) < len(ruleNames) {
		return ruleNames[r]
	}
	return fmt.Sprintf("rule(%d)", int(r))
}

// Unsupported reports whether the rule means "a format e2fsck does not
// know" rather than "a corrupt superblock".
func (r Rule) Unsupported() bool {
	switch r {
	case RuleVersion, RuleMultiFS, RuleIncompat, RuleRoCompat:
		return true
	}
	return false
}

// ValidationError says which acceptance rule a superblock failed. It matches
// ErrUnsupported or ErrCorrupt (Rule.Unsupported) under errors.Is.
type ValidationError struct {
	Rule  Rule
	Field string // kernel field name of the value tested
	Val   uint64 // the value found
	Want  uint64 // the expected value or limit, where there is one
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("jbd2: superblock: %s (%s = %#x, want %#x)", e.Rule, e.Field, e.Val, e.Want)
}

func (e *ValidationError) Unwrap() error {
	if e.Rule.Unsupported() {
		return ErrUnsupported
	}
	return ErrCorrupt
}

// Validate applies e2fsck's acceptance rules in e2fsck's order and returns
// the first that fails as a *ValidationError, or nil. fsBlockSize is the
// filesystem block size; journalLen the journal's length in blocks (the
// journal inode's size, or an external device's block count). The clear-v2
// condition is not tested here: see StrayV2Fields.
func (s *Superblock) Validate(fsBlockSize uint32, journalLen uint64) error {
	h := s.Header()
	if h.Magic() != Magic {
		return &ValidationError{Rule: RuleMagic, Field: "h_magic", Val: uint64(h.Magic()), Want: Magic}
	}
	switch bt := h.BlockType(); bt {
	case BlockSuperV1:
	case BlockSuperV2:
		if n := s.NrUsers(); n > 1 {
			return &ValidationError{Rule: RuleMultiFS, Field: "s_nr_users", Val: uint64(n), Want: 1}
		}
	case BlockDescriptor, BlockCommit, BlockRevoke:
		return &ValidationError{Rule: RuleBlockType, Field: "h_blocktype", Val: uint64(bt), Want: uint64(BlockSuperV2)}
	default:
		return &ValidationError{Rule: RuleVersion, Field: "h_blocktype", Val: uint64(bt), Want: uint64(BlockSuperV2)}
	}
	f := s.Format()
	if u := f.Incompat &^ KnownIncompat; u != 0 {
		return &ValidationError{Rule: RuleIncompat, Field: "s_feature_incompat", Val: uint64(f.Incompat), Want: uint64(KnownIncompat)}
	}
	if u := f.RoCompat &^ KnownRoCompat; u != 0 {
		return &ValidationError{Rule: RuleRoCompat, Field: "s_feature_ro_compat", Val: uint64(f.RoCompat), Want: uint64(KnownRoCompat)}
	}
	if f.HasCsumV2() && f.HasCsumV3() {
		return &ValidationError{Rule: RuleCsumV2V3, Field: "s_feature_incompat", Val: uint64(f.Incompat)}
	}
	if f.HasCsumV2or3() && f.HasChecksumV1() {
		return &ValidationError{Rule: RuleCsumV1V2, Field: "s_feature_compat", Val: uint64(f.Compat)}
	}
	if f.HasCsumV2or3() {
		if t := s.ChecksumType(); t != ChecksumTypeCRC32C {
			return &ValidationError{Rule: RuleChecksumType, Field: "s_checksum_type", Val: uint64(t), Want: ChecksumTypeCRC32C}
		}
		if c := s.ComputeChecksum(); c != s.Checksum() {
			return &ValidationError{Rule: RuleChecksum, Field: "s_checksum", Val: uint64(s.Checksum()), Want: uint64(c)}
		}
	}
	if bs := s.BlockSize(); bs != fsBlockSize {
		return &ValidationError{Rule: RuleBlockSize, Field: "s_blocksize", Val: uint64(bs), Want: uint64(fsBlockSize)}
	}
	if ml := uint64(s.MaxLen()); ml > journalLen {
		return &ValidationError{Rule: RuleMaxLen, Field: "s_maxlen", Val: ml, Want: journalLen}
	}
	if f.HasFastCommit() {
		fc := s.FCBlocks()
		if uint64(s.MaxLen()) < uint64(fc)+MinJournalBlocks {
			return &ValidationError{Rule: RuleFastCommit, Field: "s_num_fc_blks", Val: uint64(fc), Want: uint64(s.MaxLen()) - MinJournalBlocks}
		}
	}
	return nil
}

// FCBlocks is the size of the fast-commit area: s_num_fc_blks, or
// DefaultFCBlocks when that is 0. It is 0 without the fast_commit feature.
func (s *Superblock) FCBlocks() uint32 {
	if !s.Format().HasFastCommit() {
		return 0
	}
	if n := s.NumFCBlocksRaw(); n != 0 {
		return n
	}
	return DefaultFCBlocks
}

// Layout is the geometry of the journal in logical journal blocks.
type Layout struct {
	// TotalLen is the usable length: s_maxlen capped by the journal size.
	TotalLen uint64
	// First and Last bound the normal log: [First, Last). A log position
	// reaching Last wraps to First.
	First, Last uint64
	// FCFirst and FCEnd bound the fast-commit area [FCFirst, FCEnd); both
	// are 0 without fast_commit. Like the kernel (j_fc_first = j_last + 1),
	// the block at Last itself belongs to neither area.
	FCFirst, FCEnd uint64
}

// Layout computes the geometry for a journal of journalLen blocks. It is
// meaningful once Validate accepted the superblock; it returns a
// *ValidationError with RuleFirst if the log area is empty.
func (s *Superblock) Layout(journalLen uint64) (Layout, error) {
	l := Layout{TotalLen: min(uint64(s.MaxLen()), journalLen), First: uint64(s.First())}
	maxlen := uint64(s.MaxLen())
	l.Last = maxlen
	if fc := uint64(s.FCBlocks()); fc != 0 && fc <= maxlen {
		l.Last = maxlen - fc
		l.FCFirst = l.Last + 1
		l.FCEnd = maxlen
	}
	if l.Last > l.TotalLen {
		l.Last = l.TotalLen
	}
	if l.First >= l.Last {
		return l, &ValidationError{Rule: RuleFirst, Field: "s_first", Val: l.First, Want: l.Last}
	}
	return l, nil
}
