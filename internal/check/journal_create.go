package check

import (
	"encoding/binary"
	"fmt"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/ondisk/jbd2"
	"gofsck/internal/problem"
)

// Dropping an unusable journal (PR_0_JOURNAL_BAD_INODE) and creating a new
// one at the end of the run (PR_6_RECREATE_JOURNAL, the library's
// ext2fs_add_journal_inode3 with the default size).

// logger is a Sink that prints lines outside the problem table.
type logger interface{ Log(string) }

// log prints s through the Sink when it can.
func (c *Checker) log(s string) {
	if l, ok := c.sink.(logger); ok {
		l.Log(s)
	}
}

// dropJournal is the PR_0_JOURNAL_BAD_INODE fix: has_journal, the journal
// inode number and its backup are cleared, needs_recovery too (with a full
// check), and every superblock copy is written.
func (c *Checker) dropJournal() {
	if !c.repairing() {
		return
	}
	sb := c.sb
	if sb.HasCompat(ondisk.CompatHasJournal) && sb.JournalInum() != 0 {
		c.log("*** journal has been deleted ***\n\n")
	}
	sb.SetFeatureCompat(sb.FeatureCompat() &^ ondisk.CompatHasJournal)
	binary.LittleEndian.PutUint32(sb[sbJournalInum:], 0)
	clear(sb[sbJnlBlocks : sbJnlBlocks+17*4])
	c.journalDropped = true
	c.writeAllSupers()
	c.clearRecover(true)
}

// journalParams is ext2fs_get_journal_params for a journal of n blocks
// (the default size): with fast_commit, a 64th more for fast commits. It
// returns the whole journal's blocks and the fast-commit ones.
func (c *Checker) journalParams(n int) (total, fc uint64) {
	if n < 0 {
		return 0, 0
	}
	if c.sb.HasCompat(ondisk.CompatFastCommit) {
		fc = uint64(n) / 64 // EXT2_JOURNAL_TO_FC_BLKS_RATIO
	}
	return uint64(n) + fc, fc
}

// defaultJournalSize is ext2fs_default_journal_size (-1: too small).
func defaultJournalSize(blocks uint64) int {
	switch {
	case blocks < 2048:
		return -1
	case blocks < 32768:
		return 1024
	case blocks < 256*1024:
		return 4096
	case blocks < 512*1024:
		return 8192
	case blocks < 4096*1024:
		return 16384
	case blocks < 8192*1024:
		return 32768
	case blocks < 16384*1024:
		return 65536
	case blocks < 32768*1024:
		return 131072
	}
	return 262144
}

// journalPlan is where a new journal goes: its data blocks in logical
// order, and for a block-mapped inode the mapping blocks with the i_block
// slots and block contents that point to them.
type journalPlan struct {
	data    []uint64
	meta    []uint64          // every mapping block, in allocation order
	metaBuf map[uint64][]byte // contents of the mapping blocks
	iblock  [ondisk.IBlockSize]byte
}

// recreateJournal is unix.c's PR_6_RECREATE_JOURNAL step after the passes.
func (c *Checker) recreateJournal() {
	if !c.journalDropped || c.invalidBitmaps || !c.repairing() {
		return
	}
	f := c.fs
	n := defaultJournalSize(f.BlocksCount)
	d := c.repair.final
	total, fc := c.journalParams(n)
	if n < 0 || d == nil || !c.journalClustersModelled(total) {
		c.unsupported(problem.PR_6_RECREATE_JOURNAL)
		return
	}
	// Not enough room: the library allocates every free block before it
	// fails (a fuller tree would need even more).
	full := c.freeBlocksFor(d) < total
	if full && (f.ClusterBits != 0 || !c.journalNoSpaceSimple(d)) {
		c.unsupported(problem.PR_6_RECREATE_JOURNAL)
		return
	}
	var plan *journalPlan
	tree := false
	if !full {
		var ok bool
		if plan, ok = c.planJournal(total, d, c.midpointJournalBlock()); !ok {
			// More runs than the inode's four extents: the library's
			// extent tree (journal_tree.go).
			if tree = c.journalTreeModelled(false); !tree {
				c.unsupported(problem.PR_6_RECREATE_JOURNAL)
				return
			}
		}
	}
	if !c.fix(problem.Problem{Code: problem.PR_6_RECREATE_JOURNAL}) {
		return
	}
	c.log(fmt.Sprintf("Creating journal (%d blocks): ", n))
	ino := uint32(ondisk.JournalIno)
	old := make(ondisk.Inode, f.InodeSize)
	if err := f.ReadInode(ino, old, make([]byte, f.BlockSize)); err != nil || old.BlocksLo() != 0 || old.BlocksHi() != 0 {
		c.log("File exists: while trying to create journal\n")
		return
	}
	if full {
		c.journalNoSpace(d, total)
		c.log(string(ext2fs.ErrBlockAllocFail) + ": while trying to create journal\n")
		return
	}
	if tree {
		if !c.writeJournalTree(total, fc, d, d, c.midpointJournalBlock()) {
			c.unsupported(problem.PR_6_RECREATE_JOURNAL)
			return
		}
	} else {
		c.writeJournal(plan, total, fc)
	}
	c.log(" Done.\n")
	c.log("\n*** journal has been regenerated ***\n")
}

// freeRuns returns the free runs of the bitmaps to be written, from the
// midpoint goal on and then from the start, as fallocate meets them.
func (c *Checker) freeRuns(d *diskBitmaps) [][2]uint64 {
	f := c.fs
	goal := c.midpointJournalBlock()
	var runs [][2]uint64
	scan := func(from, to uint64) {
		for b := from; b < to; b++ {
			if d.blocks.Test(b) {
				continue
			}
			start := b
			for b < to && !d.blocks.Test(b) && b-start < ondisk.ExtentInitMaxLen {
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

// journalNoSpaceSimple reports whether a journal that does not fit fails
// the way journalNoSpace emulates: with extents, the free space is at
// most four runs plus one block (the fifth extent's block is taken, then
// the extent block it needs cannot be).
func (c *Checker) journalNoSpaceSimple(d *diskBitmaps) bool {
	if !c.sb.HasIncompat(ondisk.IncompatExtents) {
		return false
	}
	runs := c.freeRuns(d)
	return len(runs) <= 4 || len(runs) == 5 && runs[4][1] == 1
}

// journalNoSpace is a failed ext2fs_add_journal_inode3 for lack of space
// (journalNoSpaceSimple): every free block is allocated and zeroed, and
// inode 8 is left holding the first four runs as extents with the new
// size, as the library's extent handle wrote it before the failure.
func (c *Checker) journalNoSpace(d *diskBitmaps, n uint64) {
	f := c.fs
	runs := c.freeRuns(d)
	zero := make([]byte, f.BlockSize)
	var ino ondisk.Inode = make([]byte, f.InodeSize)
	if err := f.ReadInode(ondisk.JournalIno, ino, make([]byte, f.BlockSize)); err != nil {
		clear(ino)
	}
	h := ondisk.ExtentHeader(ino.IBlock())
	clear(h)
	binary.LittleEndian.PutUint16(h[0:], ondisk.ExtentMagic)
	binary.LittleEndian.PutUint16(h[4:], 4)
	lblk, mapped := uint64(0), uint64(0)
	for i, r := range runs {
		for k := uint64(0); k < r[1]; k++ {
			c.writeBlock(r[0]+k, zero) // EXT2_FALLOCATE_ZERO_BLOCKS
			c.journalAllocStats(r[0] + k)
		}
		if i < 4 {
			putExtent(h, i, ondisk.Extent{Lblk: uint32(lblk), Pblk: r[0], Len: uint32(r[1])})
			binary.LittleEndian.PutUint16(h[2:], uint16(i+1))
			lblk += r[1]
			mapped += r[1]
		}
	}
	now := uint32(c.opt.Now.Unix())
	size := n * uint64(f.BlockSize)
	binary.LittleEndian.PutUint16(ino[0x00:], ondisk.SIFREG|0o600)
	binary.LittleEndian.PutUint32(ino[0x04:], uint32(size))
	binary.LittleEndian.PutUint32(ino[0x6C:], uint32(size>>32))
	binary.LittleEndian.PutUint32(ino[0x0C:], now) // ctime
	binary.LittleEndian.PutUint32(ino[0x10:], now) // mtime
	binary.LittleEndian.PutUint16(ino[0x1A:], 1)
	ino.SetFlags(ino.Flags() | ondisk.FlagExtents)
	ino.SetBlocks(mapped * uint64(f.BlockSize/512))
	c.writeInode(ondisk.JournalIno, ino)
	c.repair.mu.Lock()
	c.repair.bitmapsDirty = true
	c.repair.mu.Unlock()
}

// freeBlocksFor counts the free blocks in the bitmaps to be written (a
// free cluster counts as its blocks that lie in the filesystem).
func (c *Checker) freeBlocksFor(d *diskBitmaps) uint64 {
	f := c.fs
	ratio := uint64(1) << f.ClusterBits
	n := uint64(0)
	for b := f.FirstDataBlock &^ (ratio - 1); b < f.BlocksCount; b += ratio {
		if !d.blocks.Test(f.ClusterOf(b)) {
			n += min(ratio, f.BlocksCount-b)
		}
	}
	return n
}

// journalClustersModelled reports whether a journal of n blocks is laid
// out as planJournal lays it out: on bigalloc (extents only) every
// extent must cover whole clusters, as ext2fs_fallocate's does when the
// journal starts at logical block 0 and its size is a multiple of the
// cluster ratio.
func (c *Checker) journalClustersModelled(n uint64) bool {
	f := c.fs
	if f.ClusterBits == 0 {
		return true
	}
	ratio := uint64(1) << f.ClusterBits
	return f.ClusterBits < 16 && c.sb.HasIncompat(ondisk.IncompatExtents) && n%ratio == 0
}

// midpointJournalBlock is get_midpoint_journal_block: the first block of
// the group, near the middle of the filesystem, with the most free blocks.
func (c *Checker) midpointJournalBlock() uint64 {
	f := c.fs
	sb := c.sb
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

// nextFree returns the first block at or after goal that is free in d and
// not taken by the plan, wrapping around once. On bigalloc it is the
// first block of a whole free cluster (d is indexed by cluster).
func (c *Checker) nextFree(d *diskBitmaps, taken map[uint64]bool, goal uint64) (uint64, bool) {
	f := c.fs
	ratio := uint64(1) << f.ClusterBits
	if goal < f.FirstDataBlock || goal >= f.BlocksCount {
		goal = f.FirstDataBlock
	}
	for pass := 0; pass < 2; pass++ {
		for b := goal &^ (ratio - 1); b+ratio <= f.BlocksCount; b += ratio {
			if b >= f.FirstDataBlock && !d.blocks.Test(f.ClusterOf(b)) && !taken[b] {
				return b, true
			}
		}
		goal = f.FirstDataBlock
	}
	return 0, false
}

// planJournal chooses the journal's blocks: contiguous runs from goal
// (the midpoint block, or where extent_fallocate moved it) as extents (at
// most the four an inode holds), or, for a block-mapped inode, blocks in
// order from the start of group 0 with each mapping block taken just
// before the first block it maps.
func (c *Checker) planJournal(n uint64, d *diskBitmaps, goal uint64) (*journalPlan, bool) {
	f := c.fs
	taken := map[uint64]bool{}
	p := &journalPlan{metaBuf: map[uint64][]byte{}}
	take := func(goal uint64) (uint64, bool) {
		b, ok := c.nextFree(d, taken, goal)
		if ok {
			taken[b] = true
		}
		return b, ok
	}
	if c.sb.HasIncompat(ondisk.IncompatExtents) {
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
			for lblk+r.len < n && r.len+ratio <= maxLen && b+r.len+ratio <= f.BlocksCount && !d.blocks.Test(f.ClusterOf(b+r.len)) {
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
		h := p.iblock[:]
		binary.LittleEndian.PutUint16(h[0:], ondisk.ExtentMagic)
		binary.LittleEndian.PutUint16(h[2:], uint16(len(runs)))
		binary.LittleEndian.PutUint16(h[4:], 4)
		for i, r := range runs {
			putExtent(ondisk.ExtentHeader(h), i, ondisk.Extent{Lblk: uint32(r.lblk), Pblk: r.pblk, Len: uint32(r.len)})
			for k := uint64(0); k < r.len; k++ {
				p.data = append(p.data, r.pblk+k)
			}
		}
		return p, true
	}
	per := uint64(f.BlockSize / 4)
	goal = f.GroupFirstBlock(0)
	// slot returns the mapping entry of logical block l: the chain of
	// mapping levels from i_block down.
	var mapBlock func(parent []byte, idx uint64, level int, rel uint64) bool
	mapBlock = func(parent []byte, idx uint64, level int, rel uint64) bool {
		e := binary.LittleEndian.Uint32(parent[4*idx:])
		if e == 0 {
			b, ok := take(goal)
			if !ok || b >= 1<<32 {
				return false
			}
			goal = b + 1
			binary.LittleEndian.PutUint32(parent[4*idx:], uint32(b))
			p.meta = append(p.meta, b)
			p.metaBuf[b] = make([]byte, f.BlockSize)
			e = uint32(b)
		}
		buf := p.metaBuf[uint64(e)]
		if level == 1 {
			b, ok := take(goal)
			if !ok || b >= 1<<32 {
				return false
			}
			goal = b + 1
			binary.LittleEndian.PutUint32(buf[4*rel:], uint32(b))
			p.data = append(p.data, b)
			return true
		}
		span := per
		for i := 2; i < level; i++ {
			span *= per
		}
		return mapBlock(buf, rel/span, level-1, rel%span)
	}
	for l := uint64(0); l < n; l++ {
		switch rel := l; {
		case rel < 12:
			b, ok := take(goal)
			if !ok || b >= 1<<32 {
				return nil, false
			}
			goal = b + 1
			binary.LittleEndian.PutUint32(p.iblock[4*rel:], uint32(b))
			p.data = append(p.data, b)
		case rel-12 < per:
			if !mapBlock(p.iblock[:], 12, 1, rel-12) {
				return nil, false
			}
		case rel-12-per < per*per:
			if !mapBlock(p.iblock[:], 13, 2, rel-12-per) {
				return nil, false
			}
		default:
			if !mapBlock(p.iblock[:], 14, 3, rel-12-per-per*per) {
				return nil, false
			}
		}
	}
	return p, true
}

// writeJournal writes the planned journal: zeroed data blocks, the
// mapping blocks, the journal superblock in the first block, inode 8, the
// allocation in the bitmaps and counts, and the superblock's journal
// fields and inode backup.
func (c *Checker) writeJournal(p *journalPlan, n, fc uint64) {
	f := c.fs
	zero := make([]byte, f.BlockSize)
	for _, b := range p.data {
		c.writeBlock(b, zero)
		c.journalAllocStats(b)
	}
	for _, b := range p.meta {
		c.writeBlock(b, p.metaBuf[b])
		c.journalAllocStats(b)
	}
	c.writeJournalInode(p.data[0], p.iblock[:], uint64(len(p.data)+len(p.meta)), n, fc)
}

// writeJournalInode ends the journal's creation: the journal superblock
// in its first block (first; n blocks, fc of them for fast commits),
// inode 8 with iblock and nblocks blocks, and the superblock's journal
// fields and inode backup.
func (c *Checker) writeJournalInode(first uint64, iblock []byte, nblocks, n, fc uint64) {
	f := c.fs
	sb := c.sb
	jsb := make([]byte, f.BlockSize)
	binary.BigEndian.PutUint32(jsb[0x00:], jbd2.Magic)
	binary.BigEndian.PutUint32(jsb[0x04:], 4) // JBD2_SUPERBLOCK_V2
	binary.BigEndian.PutUint32(jsb[0x0C:], uint32(f.BlockSize))
	binary.BigEndian.PutUint32(jsb[0x10:], uint32(n))
	binary.BigEndian.PutUint32(jsb[0x14:], 1)          // s_first
	binary.BigEndian.PutUint32(jsb[0x18:], 1)          // s_sequence
	binary.BigEndian.PutUint32(jsb[0x40:], 1)          // s_nr_users
	binary.BigEndian.PutUint32(jsb[0x54:], uint32(fc)) // s_num_fc_blks
	uuid := sb.UUID()
	copy(jsb[0x30:0x40], uuid[:])
	c.writeBlock(first, jsb)

	now := uint32(c.opt.Now.Unix())
	ino := make(ondisk.Inode, f.InodeSize)
	binary.LittleEndian.PutUint16(ino[0x00:], ondisk.SIFREG|0o600)
	size := n * uint64(f.BlockSize)
	binary.LittleEndian.PutUint32(ino[0x04:], uint32(size))
	binary.LittleEndian.PutUint32(ino[0x6C:], uint32(size>>32))
	binary.LittleEndian.PutUint32(ino[0x08:], now) // atime
	binary.LittleEndian.PutUint32(ino[0x0C:], now) // ctime
	binary.LittleEndian.PutUint32(ino[0x10:], now) // mtime
	binary.LittleEndian.PutUint16(ino[0x1A:], 1)   // links
	ino.SetBlocks(nblocks * uint64(f.BlockSize/512))
	if sb.HasIncompat(ondisk.IncompatExtents) {
		ino.SetFlags(ondisk.FlagExtents)
	}
	copy(ino.IBlock(), iblock)
	if f.InodeSize > ondisk.GoodOldInodeSize {
		binary.LittleEndian.PutUint16(ino[0x80:], largeInodeExtra) // i_extra_isize
		if f.InodeSize >= 0x94 {
			binary.LittleEndian.PutUint32(ino[0x90:], now) // i_crtime
		}
	}
	c.writeInode(ondisk.JournalIno, ino)

	copy(sb[sbJnlBlocks:sbJnlBlocks+60], iblock[:60])
	binary.LittleEndian.PutUint32(sb[sbJnlBlocks+60:], uint32(size>>32))
	binary.LittleEndian.PutUint32(sb[sbJnlBlocks+64:], uint32(size))
	sb[sbJnlBackupType] = jnlBackupBlocks
	binary.LittleEndian.PutUint32(sb[sbJournalInum:], ondisk.JournalIno)
	binary.LittleEndian.PutUint32(sb[sbJournalDev:], 0)
	clear(sb[sbJournalUUID : sbJournalUUID+16])
	sb.SetFeatureCompat(sb.FeatureCompat() | ondisk.CompatHasJournal)
	c.repair.mu.Lock()
	c.repair.bitmapsDirty = true
	c.repair.mu.Unlock()
}

// journalAllocStats is ext2fs_block_alloc_stats2(fs, blk, +1) after pass
// 5: the bitmaps to be written, the group's free count (and BLOCK_UNINIT)
// and the superblock's.
//
// On bigalloc it is called for every block of the clusters taken: the
// group's count (in clusters) drops at a cluster's first block, the
// superblock's (in blocks) at each, as ext2fs_block_alloc_stats_range
// counts them.
func (c *Checker) journalAllocStats(blk uint64) {
	f := c.fs
	c.repair.final.blocks.Set(f.ClusterOf(blk))
	g := f.GroupOfBlock(blk)
	if g < f.Groups && blk&(uint64(1)<<f.ClusterBits-1) == 0 {
		gd := f.Group(g)
		// The library's counts wrap below zero (a journal re-created
		// before a restart, journal_restart.go, takes blocks the
		// descriptors still count as used).
		gd.SetFreeBlocks(gd.FreeBlocks() - 1)
		gd.SetFlags(gd.Flags() &^ ondisk.BgBlockUninit)
		gd.UpdateChecksum(c.sb, g)
	}
	c.sb.SetFreeBlocksCount(c.sb.FreeBlocksCount() - 1)
}

func init() {
	canRepair(problem.PR_0_JOURNAL_BAD_INODE, problem.PR_0_JOURNAL_RECOVER_SET, problem.PR_6_RECREATE_JOURNAL)
}
