package ext2fs

import (
	"gofsck/internal/bitmap"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/ondisk/jbd2"
)

// Creating an internal journal (inode 8), as ext2fs_add_journal_inode3
// does with the default size: where its blocks go, the journal
// superblock in its first block, the inode, and the superblock's journal
// fields. The caller decides when a journal is made and supplies the
// bitmap the free blocks are searched in and the alloc stats of each
// block taken (the bitmaps and counts it keeps), as e2fsck supplies its
// allocator callbacks.

// JnlBackupBlocks is EXT3_JNL_BACKUP_BLOCKS: s_jnl_blocks holds a copy
// of the journal inode's i_block and size.
const JnlBackupBlocks = 1

// DefaultJournalSize is ext2fs_default_journal_size: the journal's
// blocks for a filesystem of blocks blocks, -1 when it is too small for
// one.
func DefaultJournalSize(blocks uint64) int {
	if blocks < 2048 {
		return -1
	}
	// The journal size for filesystems below each count of blocks.
	for _, s := range [...]struct {
		below uint64
		size  int
	}{{32768, 1024}, {256 * 1024, 4096}, {512 * 1024, 8192}, {4096 * 1024, 16384},
		{8192 * 1024, 32768}, {16384 * 1024, 65536}, {32768 * 1024, 131072}} {
		if blocks < s.below {
			return s.size
		}
	}
	return 262144
}

// JournalParams is ext2fs_get_journal_params for a journal of n blocks
// (the default size): with fast_commit, a 64th more for fast commits. It
// returns the whole journal's blocks and the fast-commit ones (0, 0 for
// a negative n).
func JournalParams(sb ondisk.Superblock, n int) (total, fc uint64) {
	if n < 0 {
		return 0, 0
	}
	if sb.HasCompat(ondisk.CompatFastCommit) {
		fc = uint64(n) / 64 // EXT2_JOURNAL_TO_FC_BLKS_RATIO
	}
	return uint64(n) + fc, fc
}

// MidpointJournalBlock is get_midpoint_journal_block: the first block of
// the group, near the middle of the filesystem, with the most free blocks
// (by the descriptors' counts).
func MidpointJournalBlock(f *fs.FS) uint64 {
	sb := f.SB
	group := f.GroupOfBlock((f.BlocksCount - f.FirstDataBlock) / 2)
	logFlex := uint32(1) << sb.LogGroupsPerFlex()
	var start uint32
	if sb.LogGroupsPerFlex() != 0 && group > logFlex {
		group &^= logFlex - 1
		for group < f.Groups && f.Group(group).FreeBlocks() == 0 {
			group++
		}
		if group == f.Groups {
			group = 0
		}
		start = group
	} else if group > 0 {
		start = group - 1
	} else {
		start = group
	}
	end := group
	if group+1 < f.Groups {
		end = group + 1
	}
	group = start
	for i := start + 1; i <= end; i++ {
		if f.Group(i).FreeBlocks() > f.Group(group).FreeBlocks() {
			group = i
		}
	}
	return f.GroupFirstBlock(group)
}

// NextFree returns the first block at or after goal that is free in used
// (indexed by cluster) and not in taken, wrapping around once to the
// first data block. On bigalloc it is the first block of a whole free
// cluster.
func NextFree(f *fs.FS, used *bitmap.Bitmap, taken map[uint64]bool, goal uint64) (uint64, bool) {
	ratio := uint64(1) << f.ClusterBits
	if goal < f.FirstDataBlock || goal >= f.BlocksCount {
		goal = f.FirstDataBlock
	}
	for pass := 0; pass < 2; pass++ {
		for b := goal &^ (ratio - 1); b+ratio <= f.BlocksCount; b += ratio {
			if b >= f.FirstDataBlock && !used.Test(f.ClusterOf(b)) && !taken[b] {
				return b, true
			}
		}
		goal = f.FirstDataBlock
	}
	return 0, false
}

// FreeRuns returns the runs of blocks free in used (indexed by block:
// not on bigalloc), from goal on and then from the first data block, as
// ext2fs_fallocate meets them; a run is at most EXT_INIT_MAX_LEN blocks
// long. Each run is {first block, length}.
func FreeRuns(f *fs.FS, used *bitmap.Bitmap, goal uint64) [][2]uint64 {
	var runs [][2]uint64
	scan := func(from, to uint64) {
		for b := from; b < to; b++ {
			if used.Test(b) {
				continue
			}
			start := b
			for b < to && !used.Test(b) && b-start < ondisk.ExtentInitMaxLen {
				b++
			}
			runs = append(runs, [2]uint64{start, b - start})
			b--
		}
	}
	scan(goal, f.BlocksCount)
	scan(f.FirstDataBlock, goal)
	return runs
}

// JournalPlan is where a new journal goes: its data blocks in logical
// order, and for a block-mapped inode the mapping blocks with the i_block
// slots and block contents that point to them.
type JournalPlan struct {
	Data    []uint64          // the data blocks, in logical order
	Meta    []uint64          // every mapping block, in allocation order
	MetaBuf map[uint64][]byte // contents of the mapping blocks
	IBlock  [ondisk.IBlockSize]byte
}

// PlanJournal chooses the blocks of an n-block journal, free in used
// (indexed by cluster): with extents, contiguous runs from goal (the
// midpoint block, or where extent_fallocate moved it) as at most the
// four extents an inode holds; for a block-mapped inode, blocks in order
// from the start of group 0 with each mapping block taken just before
// the first block it maps. It returns false when the journal does not
// fit that way (no room, or more than four runs: the library then builds
// an extent tree). It marks nothing.
func PlanJournal(f *fs.FS, used *bitmap.Bitmap, n, goal uint64) (*JournalPlan, bool) {
	taken := map[uint64]bool{}
	p := &JournalPlan{MetaBuf: map[uint64][]byte{}}
	take := func(goal uint64) (uint64, bool) {
		b, ok := NextFree(f, used, taken, goal)
		if ok {
			taken[b] = true
		}
		return b, ok
	}
	if f.SB.HasIncompat(ondisk.IncompatExtents) {
		// On bigalloc the runs are of whole clusters (the library's
		// claim_range) and an extent's length is capped at
		// EXT_INIT_MAX_LEN rounded down to a cluster.
		ratio := uint64(1) << f.ClusterBits
		maxLen := uint64(ondisk.ExtentInitMaxLen) &^ (ratio - 1)
		type run struct{ lblk, pblk, len uint64 }
		var runs []run
		for lblk := uint64(0); lblk < n; {
			b, ok := take(goal)
			if !ok {
				return nil, false
			}
			r := run{lblk, b, ratio}
			for lblk+r.len < n && r.len+ratio <= maxLen && b+r.len+ratio <= f.BlocksCount && !used.Test(f.ClusterOf(b+r.len)) {
				taken[b+r.len] = true
				r.len += ratio
			}
			runs = append(runs, r)
			lblk += r.len
			goal = b + r.len
			if len(runs) > 4 {
				return nil, false
			}
		}
		h := ondisk.ExtentHeader(p.IBlock[:])
		h.SetMagic(ondisk.ExtentMagic)
		h.SetEntries(uint16(len(runs)))
		h.SetMax(4)
		for i, r := range runs {
			e := h.Entry(i)
			e.SetLblk(uint32(r.lblk))
			e.SetRawLen(uint16(r.len))
			e.SetStart(r.pblk)
			for k := uint64(0); k < r.len; k++ {
				p.Data = append(p.Data, r.pblk+k)
			}
		}
		return p, true
	}
	per := uint64(f.BlockSize / 4)
	goal = f.GroupFirstBlock(0)
	iblock := ondisk.MapBlock(p.IBlock[:])
	// takeAt takes the next block, enters it at entry idx of m and
	// appends it to list.
	takeAt := func(m ondisk.MapBlock, idx uint64, list *[]uint64) (uint64, bool) {
		b, ok := take(goal)
		if !ok || b >= 1<<32 {
			return 0, false
		}
		goal = b + 1
		m.SetPtr(int(idx), uint32(b))
		*list = append(*list, b)
		return b, true
	}
	// mapData takes the next data block and enters it at entry idx of
	// m (the inode's i_block or a mapping block of level 1).
	mapData := func(m ondisk.MapBlock, idx uint64) bool {
		_, ok := takeAt(m, idx, &p.Data)
		return ok
	}
	// mapBlock maps relative block rel under entry idx of parent, a
	// mapping block of the given level (1: it holds data pointers),
	// taking the mapping blocks it lacks.
	var mapBlock func(parent ondisk.MapBlock, idx uint64, level int, rel uint64) bool
	mapBlock = func(parent ondisk.MapBlock, idx uint64, level int, rel uint64) bool {
		e := parent.Ptr(int(idx))
		if e == 0 {
			b, ok := takeAt(parent, idx, &p.Meta)
			if !ok {
				return false
			}
			p.MetaBuf[b] = make([]byte, f.BlockSize)
			e = uint32(b)
		}
		buf := ondisk.MapBlock(p.MetaBuf[uint64(e)])
		if level == 1 {
			return mapData(buf, rel)
		}
		span := per
		for i := 2; i < level; i++ {
			span *= per
		}
		return mapBlock(buf, rel/span, level-1, rel%span)
	}
	for l := uint64(0); l < n; l++ {
		switch rel := l; {
		case rel < ondisk.NDirBlocks:
			if !mapData(iblock, rel) {
				return nil, false
			}
		case rel-12 < per:
			if !mapBlock(iblock, ondisk.IndBlock, 1, rel-12) {
				return nil, false
			}
		case rel-12-per < per*per:
			if !mapBlock(iblock, ondisk.DindBlock, 2, rel-12-per) {
				return nil, false
			}
		default:
			if !mapBlock(iblock, ondisk.TindBlock, 3, rel-12-per-per*per) {
				return nil, false
			}
		}
	}
	return p, true
}

// WriteJournal writes a planned journal of n blocks (fc of them for fast
// commits) through fsys.IO: zeroed data blocks and the mapping blocks,
// each passed to stats (the caller's ext2fs_block_alloc_stats2), then
// WriteJournalInode.
func WriteJournal(fsys *Filsys, p *JournalPlan, n, fc uint64, now uint32, stats func(blk uint64)) {
	zero := make([]byte, fsys.FS.BlockSize)
	for _, b := range p.Data {
		fsys.IO.WriteBlock(b, zero)
		stats(b)
	}
	for _, b := range p.Meta {
		fsys.IO.WriteBlock(b, p.MetaBuf[b])
		stats(b)
	}
	WriteJournalInode(fsys, p.Data[0], p.IBlock[:], uint64(len(p.Data)+len(p.Meta)), n, fc, now)
}

// WriteJournalInode ends a journal's creation: the journal superblock
// in its first block (first; n blocks, fc of them for fast commits),
// inode 8 with iblock and nblocks blocks (times now), and the
// superblock's journal fields and inode backup (in memory: the caller
// writes the superblock).
func WriteJournalInode(fsys *Filsys, first uint64, iblock []byte, nblocks, n, fc uint64, now uint32) {
	f := fsys.FS
	sb := f.SB
	jsb := make([]byte, f.BlockSize)
	(*jbd2.Superblock)(jsb[:jbd2.SuperblockSize]).InitSuperblockV2(uint32(f.BlockSize), uint32(n), uint32(fc), sb.UUID())
	fsys.IO.WriteBlock(first, jsb)

	ino := make(ondisk.Inode, f.InodeSize)
	ino.SetMode(ondisk.SIFREG | 0o600)
	size := n * uint64(f.BlockSize)
	ino.SetSize(size)
	ino.SetAtime(now)
	ino.SetCtime(now)
	ino.SetMtime(now)
	ino.SetLinksCount(1)
	ino.SetBlocks(nblocks * uint64(f.BlockSize/512))
	if sb.HasIncompat(ondisk.IncompatExtents) {
		ino.SetFlags(ondisk.FlagExtents)
	}
	copy(ino.IBlock(), iblock)
	if f.InodeSize > ondisk.GoodOldInodeSize {
		ino.SetExtraIsize(largeInodeExtra)
		ino.SetCrtime(now)
	}
	fsys.IO.WriteInode(ondisk.JournalIno, ino)

	sb.SetJnlBlocks(iblock, size)
	sb.SetJnlBackupType(JnlBackupBlocks)
	sb.SetJournalInum(ondisk.JournalIno)
	sb.SetJournalDev(0)
	sb.SetJournalUUID([16]byte{})
	sb.SetFeatureCompat(sb.FeatureCompat() | ondisk.CompatHasJournal)
}

// JournalNoSpace is what a failed ext2fs_add_journal_inode3 leaves when
// the free space, runs (FreeRuns), holds too few blocks and the inode
// uses extents: every free block is allocated (stats) and zeroed
// (EXT2_FALLOCATE_ZERO_BLOCKS), and inode 8, held as ino, is written
// with the first four runs as extents and the new journal's size, as the
// library's extent handle left it when the fifth extent's block could
// not be had. It is modelled only where that is how the library fails:
// at most four runs, or a fifth of one block.
func JournalNoSpace(fsys *Filsys, ino ondisk.Inode, runs [][2]uint64, n uint64, now uint32, stats func(blk uint64)) {
	f := fsys.FS
	zero := make([]byte, f.BlockSize)
	h := ondisk.ExtentHeader(ino.IBlock())
	clear(h)
	h.SetMagic(ondisk.ExtentMagic)
	h.SetMax(4)
	lblk, mapped := uint64(0), uint64(0)
	for i, r := range runs {
		for k := uint64(0); k < r[1]; k++ {
			fsys.IO.WriteBlock(r[0]+k, zero)
			stats(r[0] + k)
		}
		if i < 4 {
			e := h.Entry(i)
			e.SetLblk(uint32(lblk))
			e.SetRawLen(uint16(r[1]))
			e.SetStart(r[0])
			h.SetEntries(uint16(i + 1))
			lblk += r[1]
			mapped += r[1]
		}
	}
	ino.SetMode(ondisk.SIFREG | 0o600)
	ino.SetSize(n * uint64(f.BlockSize))
	ino.SetCtime(now)
	ino.SetMtime(now)
	ino.SetLinksCount(1)
	ino.SetFlags(ino.Flags() | ondisk.FlagExtents)
	ino.SetBlocks(mapped * uint64(f.BlockSize/512))
	fsys.IO.WriteInode(ondisk.JournalIno, ino)
}
