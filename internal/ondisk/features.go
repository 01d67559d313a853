package ondisk

import "strings"

// Feature bits of s_feature_compat.
const (
	CompatDirPrealloc   = 0x0001
	CompatImagicInodes  = 0x0002
	CompatHasJournal    = 0x0004
	CompatExtAttr       = 0x0008
	CompatResizeInode   = 0x0010
	CompatDirIndex      = 0x0020
	CompatLazyBG        = 0x0040
	CompatExcludeInode  = 0x0080
	CompatExcludeBitmap = 0x0100
	CompatSparseSuper2  = 0x0200
	CompatFastCommit    = 0x0400
	CompatStableInodes  = 0x0800
	CompatOrphanFile    = 0x1000
)

// Feature bits of s_feature_incompat.
const (
	IncompatCompression = 0x0001
	IncompatFiletype    = 0x0002
	IncompatRecover     = 0x0004
	IncompatJournalDev  = 0x0008
	IncompatMetaBG      = 0x0010
	IncompatExtents     = 0x0040
	Incompat64bit       = 0x0080
	IncompatMMP         = 0x0100
	IncompatFlexBG      = 0x0200
	IncompatEAInode     = 0x0400
	IncompatDirData     = 0x1000
	IncompatCsumSeed    = 0x2000
	IncompatLargeDir    = 0x4000
	IncompatInlineData  = 0x8000
	IncompatEncrypt     = 0x10000
	IncompatCasefold    = 0x20000
)

// Feature bits of s_feature_ro_compat.
const (
	RoCompatSparseSuper   = 0x0001
	RoCompatLargeFile     = 0x0002
	RoCompatBtreeDir      = 0x0004
	RoCompatHugeFile      = 0x0008
	RoCompatGdtCsum       = 0x0010
	RoCompatDirNlink      = 0x0020
	RoCompatExtraIsize    = 0x0040
	RoCompatHasSnapshot   = 0x0080
	RoCompatQuota         = 0x0100
	RoCompatBigalloc      = 0x0200
	RoCompatMetadataCsum  = 0x0400
	RoCompatReplica       = 0x0800
	RoCompatReadonly      = 0x1000
	RoCompatProject       = 0x2000
	RoCompatSharedBlocks  = 0x4000
	RoCompatVerity        = 0x8000
	RoCompatOrphanPresent = 0x10000
)

// Supported feature sets: what gofsck knows how to check. An image with any
// other bit set is refused (incompat, and ro_compat) rather than declared clean.
const (
	SupportedCompat = CompatDirPrealloc | CompatImagicInodes | CompatHasJournal |
		CompatExtAttr | CompatResizeInode | CompatDirIndex | CompatSparseSuper2 |
		CompatFastCommit | CompatStableInodes | CompatOrphanFile
	// casefold: names of casefolded directories fold as libext2fs folds
	// them (internal/casefold) for their hashes and comparisons.
	SupportedIncompat = IncompatFiletype | IncompatRecover | IncompatMetaBG |
		IncompatExtents | Incompat64bit | IncompatFlexBG |
		IncompatEAInode | IncompatCsumSeed | IncompatLargeDir | IncompatInlineData |
		IncompatEncrypt | IncompatMMP | IncompatCasefold
	SupportedRoCompat = RoCompatSparseSuper | RoCompatLargeFile | RoCompatHugeFile |
		RoCompatGdtCsum | RoCompatDirNlink | RoCompatExtraIsize | RoCompatQuota |
		RoCompatBigalloc | RoCompatMetadataCsum | RoCompatReadonly | RoCompatProject |
		RoCompatSharedBlocks | RoCompatVerity | RoCompatOrphanPresent
)

type featureName struct {
	kind int // 0 compat, 1 incompat, 2 ro_compat
	bit  uint32
	name string
}

// featureNames uses the names e2fsprogs prints (dumpe2fs, "unsupported
// feature(s)" messages).
var featureNames = []featureName{
	{0, CompatDirPrealloc, "dir_prealloc"},
	{0, CompatImagicInodes, "imagic_inodes"},
	{0, CompatHasJournal, "has_journal"},
	{0, CompatExtAttr, "ext_attr"},
	{0, CompatResizeInode, "resize_inode"},
	{0, CompatDirIndex, "dir_index"},
	{0, CompatLazyBG, "lazy_bg"},
	{0, CompatExcludeBitmap, "snapshot_bitmap"},
	{0, CompatSparseSuper2, "sparse_super2"},
	{0, CompatFastCommit, "fast_commit"},
	{0, CompatStableInodes, "stable_inodes"},
	{0, CompatOrphanFile, "orphan_file"},
	{1, IncompatCompression, "compression"},
	{1, IncompatFiletype, "filetype"},
	{1, IncompatRecover, "needs_recovery"},
	{1, IncompatJournalDev, "journal_dev"},
	{1, IncompatMetaBG, "meta_bg"},
	{1, IncompatExtents, "extent"},
	{1, Incompat64bit, "64bit"},
	{1, IncompatMMP, "mmp"},
	{1, IncompatFlexBG, "flex_bg"},
	{1, IncompatEAInode, "ea_inode"},
	{1, IncompatDirData, "dirdata"},
	{1, IncompatCsumSeed, "metadata_csum_seed"},
	{1, IncompatLargeDir, "large_dir"},
	{1, IncompatInlineData, "inline_data"},
	{1, IncompatEncrypt, "encrypt"},
	{1, IncompatCasefold, "casefold"},
	{2, RoCompatSparseSuper, "sparse_super"},
	{2, RoCompatLargeFile, "large_file"},
	{2, RoCompatHugeFile, "huge_file"},
	{2, RoCompatGdtCsum, "uninit_bg"},
	{2, RoCompatDirNlink, "dir_nlink"},
	{2, RoCompatExtraIsize, "extra_isize"},
	{2, RoCompatHasSnapshot, "snapshot"},
	{2, RoCompatQuota, "quota"},
	{2, RoCompatBigalloc, "bigalloc"},
	{2, RoCompatMetadataCsum, "metadata_csum"},
	{2, RoCompatReplica, "replica"},
	{2, RoCompatReadonly, "read-only"},
	{2, RoCompatProject, "project"},
	{2, RoCompatSharedBlocks, "shared_blocks"},
	{2, RoCompatVerity, "verity"},
	{2, RoCompatOrphanPresent, "orphan_present"},
}

// FeatureNames lists the names of the given feature bits in e2fsprogs'
// order and spelling; unknown bits print as FEATURE_C12 / FEATURE_I31 /
// FEATURE_R5 as e2fsprogs does.
func FeatureNames(compat, incompat, roCompat uint32) []string {
	var out []string
	sets := [3]uint32{compat, incompat, roCompat}
	prefix := [3]string{"FEATURE_C", "FEATURE_I", "FEATURE_R"}
	for k := 0; k < 3; k++ {
		for bit := 0; bit < 32; bit++ {
			m := uint32(1) << bit
			if sets[k]&m == 0 {
				continue
			}
			name := ""
			for _, f := range featureNames {
				if f.kind == k && f.bit == m {
					name = f.name
					break
				}
			}
			if name == "" {
				name = prefix[k] + itoa(bit)
			}
			out = append(out, name)
		}
	}
	return out
}

// FeatureString joins FeatureNames with spaces.
func FeatureString(compat, incompat, roCompat uint32) string {
	return strings.Join(FeatureNames(compat, incompat, roCompat), " ")
}

func itoa(v int) string {
	if v == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return string(b[i:])
}
