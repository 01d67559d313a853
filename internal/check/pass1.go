package check

import (
	"context"
	"sync"

	"gofsck/internal/bitmap"
	"gofsck/internal/ext2fs"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
	"gofsck/internal/qsort"
)

// maxSizes is the largest file a block-mapped inode can address, per
// log2(block size) - 10, as e2fsck computes it.
var maxSizes = func() (m [7]uint64) {
	for i := range m {
		bits := uint(i + 10)
		bpp := uint64(1) << (bits - 2)
		n := 12 + bpp + bpp*bpp + bpp*bpp*bpp
		m[i] = n << bits
	}
	return m
}()

// inodeScratch is the per-worker state of pass 1: buffers reused for
// every inode, so checking an inode allocates nothing.
type inodeScratch struct {
	blk    []byte // one block
	blk2   []byte // one block (extent/indirect levels use their own slices)
	levels [][]byte
	biter  ext2fs.BlockIter // block-map walks
	io     pass1IO          // check_blocks' reads and writes for biter
	// prefetch is biter's Prefetch for check_blocks (made once).
	prefetch func(uint64)
	walk     blockWalk
	xscan    extentScan
	root     ondisk.DxRootInfo // the htree root handleHtree read last
	// csumBad has bit k set when inode k of the current inode-table
	// block fails its checksum (computed once per block).
	csumBad [8]uint64
	// ioIno is the deferred inode whose blocks are being checked (0 when
	// none): read errors then name it, as e2fsck's process_inodes does.
	ioIno uint32
	// itable and inode are csumInodeRereadFails' reread of the
	// inode (allocated on first use).
	itable, inode []byte
}

func (c *Checker) newScratch() *inodeScratch {
	bs := c.fs.BlockSize
	s := &inodeScratch{blk: make([]byte, bs), blk2: make([]byte, bs)}
	for i := 0; i < 8; i++ {
		s.levels = append(s.levels, make([]byte, bs))
	}
	return s
}

// pass1 scans every in-use inode of every group. Each group is a work
// unit for the engine; see engine.go.
func (c *Checker) pass1(ctx context.Context) error {
	f := c.fs
	n := uint64(f.InodesCount) + 1
	c.inodeUsed = bitmap.New(n)
	c.inodeDir = bitmap.New(n)
	c.inodeReg = bitmap.New(n)
	c.inodeBad = bitmap.New(n)
	clusters := (f.BlocksCount + (1 << f.ClusterBits) - 1) >> f.ClusterBits
	c.blockFound = bitmap.New(clusters)
	c.blockMeta = bitmap.New(clusters)
	c.blockDup = newLazyMap(clusters)
	c.linkInfo = newCounts(n)
	c.dblistCap = newDblistCap(c.fs)
	c.shared = &sharedState{
		eaCache:     map[uint64]*eaEntry{},
		eaInodeRefs: map[uint32]uint64{},
		encPolicy:   map[uint32]string{},
	}
	c.eaInodeRefs = c.shared.eaInodeRefs
	c.encPolicy = c.shared.encPolicy
	c.eaSeen = map[uint64]*eaBlockRef{}
	c.skipUninit = f.GdtCsum
	c.initQuota()

	c.markGroupMetadata()
	c.pass1RepairSetup()
	c.readBadBlocksList(c.newScratch())
	if len(c.badBlocks) > 0 {
		c.inodeBB = bitmap.New(n)
	}
	// e2fsck looks /lost+found up here (e2fsck_get_lost_and_found(ctx,
	// 0)); only the reads show, when the root directory cannot be read.
	c.lookupNameErr(ondisk.RootIno, "lost+found")
	groups := uint64(f.Groups)
	c.progress(1, 0, groups)
	// The units are the groups with inodes to read: a group whose
	// descriptor says none are in use (INODE_UNINIT, or bg_itable_unused
	// covering it) has nothing for a worker, and on a big, mostly empty
	// volume those are nearly all of its millions of groups.
	var units []uint32
	var tableBlocks uint64
	for g := uint32(0); g < f.Groups; g++ {
		if _, blocks := c.usedInodeTable(g); blocks > 0 {
			units = append(units, g)
			tableBlocks += blocks
		}
	}
	// Progress ahead of the replay: groups up to the first unit not
	// finished (the empty groups before it are passed), and inode-table
	// blocks checked.
	var ahead *unitProgress
	ahead = newUnitProgress(1, len(units), groups, tableBlocks, func(next int) uint64 {
		j := next
		for j < len(units) && ahead.reached[j].Load() > 0 {
			j++
		}
		if j == len(units) {
			if j == 0 {
				return 0
			}
			return uint64(units[j-1]) + 1
		}
		return uint64(units[j])
	})
	c.ahead = ahead
	defer func() { c.ahead = nil }()
	// Claims turn pages dense after maxEdits changes although many end
	// with few runs (a group of small files, each its own extent), and the
	// dense pages are most of pass 1's peak. Compacting them as the pass
	// goes needs the workers stopped: each unit holds pause for reading
	// and the replay takes it to compact when compactRule says.
	var pause sync.RWMutex
	rule := c.newCompactRule()
	err := c.runUnits(ctx, len(units),
		func(i int) int64 {
			table, blocks := c.usedInodeTable(units[i])
			if blocks > 0 {
				f.Prefetch(table, blocks)
			}
			return int64(blocks) << f.BlockBits
		},
		func(i int, w *Checker) {
			pause.RLock()
			defer pause.RUnlock()
			w.scanGroup(units[i])
			w.unitReached(1)
		},
		func(i int, w *Checker) bool {
			// e2fsck has passed the empty groups before this one.
			c.progressUpTo(1, uint64(units[i]), groups)
			stop := c.mergePass1Unit(i, w)
			if !stop {
				c.progress(1, uint64(units[i])+1, groups)
			}
			if rule.due(c.densePages()) {
				pause.Lock()
				c.compactMaps()
				pause.Unlock()
				rule.done(c.densePages())
			}
			return stop
		})
	if err != nil {
		return err
	}
	if c.repair.bbRestart.Load() && !c.sink.Aborted() {
		return ErrRestart
	}
	if c.sink.Aborted() || c.abort {
		return nil
	}
	if err := c.endPass1(); err != nil {
		return err
	}
	if !c.sink.Aborted() && !c.abort {
		c.pass1E()
	}
	return nil
}

// pass1Scratch is a unit's buffers: the inode-table chunk and the block
// buffers of the inode checks.
type pass1Scratch struct {
	s     *inodeScratch
	chunk []byte
}

// usedInodeTable returns the start and length in blocks of the part of
// group g's inode table that pass 1 reads (0 blocks when none).
func (c *Checker) usedInodeTable(g uint32) (uint64, uint64) {
	f := c.fs
	limit := c.usedInodes(g)
	table := f.Group(g).InodeTable()
	if limit == 0 || table == 0 || table < f.FirstDataBlock || table+uint64(f.InodeBlocksPerGroup) > f.BlocksCount {
		return 0, 0
	}
	return table, (uint64(limit)*uint64(f.InodeSize) + uint64(f.BlockSize) - 1) >> f.BlockBits
}

// usedInodes returns how many of group g's inodes pass 1 scans: all of
// them, or with uninit_bg/metadata_csum those before bg_itable_unused
// (none for an INODE_UNINIT group, or when bg_itable_unused is the
// group's size or more).
func (c *Checker) usedInodes(g uint32) uint32 {
	ipg := c.fs.InodesPerGroup
	if !c.skipUninit {
		return ipg
	}
	gd := c.fs.Group(g)
	if gd.Flags()&ondisk.BgInodeUninit != 0 {
		return 0
	}
	// ext2fs_open_inode_scan: a count past the group leaves none.
	return ipg - min(gd.ItableUnused(), ipg)
}

// scanGroup checks the used inodes of group g (a work unit).
func (c *Checker) scanGroup(g uint32) {
	f := c.fs
	ps, _ := c.pools.pass1.Get().(*pass1Scratch)
	if ps == nil || len(ps.s.blk) != f.BlockSize {
		ps = &pass1Scratch{s: c.newScratch(), chunk: make([]byte, 64*f.BlockSize)}
	}
	defer c.pools.pass1.Put(ps)
	s := ps.s
	ipg := f.InodesPerGroup
	limit := c.usedInodes(g)
	table, blocksNeeded := c.usedInodeTable(g)
	if blocksNeeded == 0 {
		return
	}
	ipb := uint64(f.BlockSize / f.InodeSize)
	for b := uint64(0); b < blocksNeeded; {
		nb := min(blocksNeeded-b, uint64(len(ps.chunk)/f.BlockSize))
		buf := ps.chunk[:nb<<f.BlockBits]
		readErr := f.ReadBlock(table+b, buf)
		if readErr == nil && c.opt.PrefetchBytes > 0 {
			n := min(uint64(limit)-b*ipb, nb*ipb)
			c.hintInodeChildren(buf, int(n))
		}
		for bi := uint64(0); bi < nb; bi++ {
			if readErr != nil && (b+bi)%inodeScanBlocks == 0 {
				// The library reads this chunk now: its read errors go
				// through e2fsck's handler here, after the inodes before.
				cn := min(inodeScanBlocks, nb-bi)
				if c.retryBlocks(table+b+bi, buf[bi<<f.BlockBits:(bi+cn)<<f.BlockBits], opInodeScan) != nil {
					last := g*ipg + uint32((b+bi)*ipb)
					if b+bi == 0 {
						last = c.lastScannedBefore(g)
					}
					c.fix(problem.Problem{Code: problem.PR_1_ISCAN_ERROR, Ino: last, Err: errNextInode})
					return
				}
			}
			blockBuf := buf[bi<<f.BlockBits : (bi+1)<<f.BlockBits]
			first := uint32((b+bi)*ipb) + 1
			if c.badBlocks[table+b+bi] {
				// Inodes in a bad inode-table block are in use but never
				// read; pass 2 offers to clear entries to them.
				for k := uint64(0); k < ipb && first+uint32(k) <= limit; k++ {
					ino := g*ipg + first + uint32(k)
					if ino == ondisk.BadBlocksIno && c.badBlocksInBadBlocks(ondisk.Inode(blockBuf[:f.InodeSize])) {
						return
					}
					c.inodeBB.Set(uint64(ino))
					c.inodeUsed.Set(uint64(ino))
				}
				c.workDone(1)
				continue
			}
			garbage := c.insaneBlock(s, blockBuf, g*ipg+first, ipb, limit-first+1)
			for k := uint64(0); k < ipb; k++ {
				idx := uint32((b+bi)*ipb+k) + 1
				if idx > limit {
					break
				}
				ino := g*ipg + idx
				raw := ondisk.Inode(blockBuf[k*uint64(f.InodeSize) : (k+1)*uint64(f.InodeSize)])
				c.checkInode(s, ino, raw, garbage, k < 512 && s.csumBad[k/64]&(1<<(k%64)) != 0)
				if c.sink.Aborted() || c.abort {
					// e2fsck's scan loop ends at the inode that stopped it
					// (c.stop, E2F_FLAG_ABORT), before the next is read.
					return
				}
			}
			c.workDone(1)
		}
		b += nb
	}
	c.processDeferred(s)
}

// hintInodeChildren hints the blocks that checking the first n inodes of
// an inode-table chunk will read: the children of extent-tree roots, the
// indirect blocks of block-mapped files and extended-attribute blocks. The device then reads them for all the
// chunk's files at once, not one after another as each inode is checked
// (what makes fragmented files slow on a device with latency). Only
// hints, given with a read-ahead (Options.PrefetchBytes): nothing is
// decided here, and a hostile inode costs a few wasted reads at most
// (FS.Prefetch ignores blocks outside the filesystem).
func (c *Checker) hintInodeChildren(chunk []byte, n int) {
	f := c.fs
	is64 := c.sb.Is64bit()
	for k := 0; k < n && (k+1)*f.InodeSize <= len(chunk); k++ {
		raw := ondisk.Inode(chunk[k*f.InodeSize : (k+1)*f.InodeSize])
		if raw.LinksCount() == 0 {
			continue
		}
		if acl := raw.FileACL(is64); acl != 0 {
			f.Prefetch(acl, 1)
		}
		switch {
		case raw.Flags()&ondisk.FlagExtents != 0:
			hintExtentChildren(f, ondisk.ExtentHeader(raw.IBlock()))
		case raw.Flags()&ondisk.FlagInlineData != 0:
		case raw.IsReg() || raw.IsDir():
			// A block-mapped file or directory: its indirect,
			// double and triple indirect blocks.
			for p := ondisk.IndBlock; p <= ondisk.TindBlock; p++ {
				if b := raw.Block(p); b != 0 {
					f.Prefetch(uint64(b), 1)
				}
			}
		}
	}
}

// hintExtentChildren hints the children of an extent index node (none
// for a leaf or a node that fails its header check).
func hintExtentChildren(f *fs.FS, h ondisk.ExtentHeader) {
	if h.Verify() != nil || h.Depth() == 0 {
		return
	}
	for e := 0; e < int(h.Entries()); e++ {
		f.Prefetch(h.Idx(e).Leaf, 1)
	}
}

// mergePass1Unit replays a finished unit into the real sink and folds its
// accumulators into the Checker. It returns true when the check must stop.
func (c *Checker) mergePass1Unit(i int, w *Checker) bool {
	c.replay(w.rec)
	c.dirs = append(c.dirs, w.newDirs...)
	c.dblist = append(c.dblist, w.dblist...)
	c.hintDirBlocks(w.dblist)
	c.dxDirs = append(c.dxDirs, w.dxDirs...)
	c.stats.add(&w.stats)
	c.dupCount += w.dupCount
	c.abort = c.abort || w.abort
	c.p1.restart = c.p1.restart || w.p1.restart
	c.p1.restartLater = c.p1.restartLater || w.p1.restartLater
	return c.sink.Aborted() || c.abort || c.repair.bbRestart.Load()
}

// replay sends a unit's recorded events to the real sink in order.
func (c *Checker) replay(r *recSink) {
	if r == nil || r.direct != nil {
		return
	}
	c.replayEvents(r.events)
}

// insaneBlock verifies the checksums of one inode-table block's inodes
// (recording failures in s.csumBad) and implements the library's garbage
// detection (check_inode_block_sanity): an inode is insane when it fails
// its checksum, or has EXTENTS_FL with a bad extent header, or is a
// linked, block-mapped file, directory or slow symlink with more than
// half of its block pointers outside the filesystem. If more than half of
// a block's inodes are insane, every inode in it is "garbage" — with or
// without metadata_csum.
func (c *Checker) insaneBlock(s *inodeScratch, b []byte, firstIno uint32, ipb uint64, avail uint32) bool {
	s.csumBad = [8]uint64{}
	f := c.fs
	n := min(uint64(avail), ipb, 512)
	bad, insane := uint64(0), uint64(0)
	for k := uint64(0); k < n; k++ {
		raw := ondisk.Inode(b[k*uint64(f.InodeSize) : (k+1)*uint64(f.InodeSize)])
		switch {
		case f.MetadataCsum && !raw.ChecksumValid(f.CsumSeed, firstIno+uint32(k)):
			bad++
			insane++
			s.csumBad[k/64] |= 1 << (k % 64)
		case extentHeadLooksInsane(raw) || c.blockMapLooksInsane(raw):
			insane++
		}
	}
	if bad > 0 && !c.repair.inodeCsumSeen.Load() {
		c.repair.inodeCsumSeen.Store(true)
	}
	return ipb >= 2 && insane > ipb/2
}

// extentHeadLooksInsane is the library's extent_head_looks_insane.
func extentHeadLooksInsane(n ondisk.Inode) bool {
	return n.Flags()&ondisk.FlagExtents != 0 && ondisk.ExtentHeader(n.IBlock()).Verify() != nil
}

// blockMapLooksInsane is the library's block_map_looks_insane: a linked
// block-mapped regular file, directory or symlink too long to be fast
// with more than half of its 15 block pointers outside the filesystem.
func (c *Checker) blockMapLooksInsane(n ondisk.Inode) bool {
	if n.Flags()&(ondisk.FlagInlineData|ondisk.FlagExtents) != 0 || n.LinksCount() == 0 {
		return false
	}
	switch {
	case n.IsReg(), n.IsDir():
	case n.IsSymlink():
		if n.Size() <= ondisk.IBlockSize {
			return false
		}
	default:
		return false
	}
	bad := 0
	for i := 0; i < 15; i++ {
		if b := uint64(n.Block(i)); b != 0 && (b < c.fs.FirstDataBlock || b >= c.fs.BlocksCount) {
			bad++
		}
	}
	return bad > 15/2
}

// markGroupMetadata marks superblocks, descriptors, bitmaps and inode
// tables in the found and metadata maps (e2fsck's mark_table_blocks).
func (c *Checker) markGroupMetadata() {
	f := c.fs
	// The marks go through a batch: with flex_bg a group's bitmaps and
	// inode table extend runs begun by the group before, which the batch
	// gathers before they reach the maps' pages.
	batch := bitmap.NewBatch(c.blockFound, c.blockMeta)
	defer batch.Flush()
	mark := func(blk, n uint64) {
		if n == 0 {
			return
		}
		cl := f.ClusterOf(blk)
		batch.Mark(cl, f.ClusterOf(blk+n-1)-cl+1)
	}
	// markBitmap marks a group's bitmap block, reporting conflict when
	// another group's metadata already holds it.
	// A repair relocates what conflicts (relocate.go) and leaves the
	// block to its first owner.
	markBitmap := func(g uint32, b uint64, conflict problem.Code, what uint8) {
		if b == 0 || b >= f.BlocksCount {
			return
		}
		cl := f.ClusterOf(b)
		if batch.Test(cl) && f.ClusterBits == 0 {
			if c.fix(problem.Problem{Code: conflict, Group: g, Blk: b}) && c.repairing() {
				c.markRelocate(g, what)
			}
			if c.repairing() {
				return
			}
		}
		batch.Mark(cl, 1)
	}
	for g := uint32(0); g < f.Groups; g++ {
		l := f.Layout(g)
		if l.Super != 0 || g == 0 {
			if g == 0 && f.FirstDataBlock == 0 && f.BlockSize == 1024 && f.ClusterBits > 0 {
				mark(0, 1)
			}
			mark(l.Super, 1)
		}
		if l.OldDesc != 0 {
			mark(l.OldDesc, min(l.OldDescLen, f.BlocksCount-l.OldDesc))
		}
		if l.MetaBGDesc != 0 {
			mark(l.MetaBGDesc, 1)
		}
		gd := f.Group(g)
		if t := gd.InodeTable(); t != 0 && t < f.BlocksCount {
			n := uint64(f.InodeBlocksPerGroup)
			if t+n > f.BlocksCount {
				n = f.BlocksCount - t
			}
			if cl, ncl := f.ClusterOf(t), f.ClusterOf(t+n-1)-f.ClusterOf(t)+1; n > 0 && !batch.AnySet(cl, ncl) {
				// No conflict: the whole table at once.
				mark(t, n)
				n = 0
			}
			for i := uint64(0); i < n; i++ {
				cl := f.ClusterOf(t + i)
				if batch.Test(cl) && f.ClusterBits == 0 {
					if !c.relocating(g, relocInodeTable) &&
						c.fix(problem.Problem{Code: problem.PR_1_ITABLE_CONFLICT, Group: g, Blk: t + i}) && c.repairing() {
						c.markRelocate(g, relocInodeTable)
					}
					if c.repairing() {
						continue
					}
				}
				batch.Mark(cl, 1)
			}
		}
		markBitmap(g, gd.BlockBitmap(), problem.PR_1_BB_CONFLICT, relocBlockBitmap)
		markBitmap(g, gd.InodeBitmap(), problem.PR_1_IB_CONFLICT, relocInodeBitmap)
	}
	batch.Flush()
	if c.sb.HasIncompat(ondisk.IncompatMMP) {
		if b := c.sb.MMPBlock(); b > f.FirstDataBlock && b < f.BlocksCount {
			c.blockFound.Set(f.ClusterOf(b))
		}
	}
}

// markBlockUsed records a claim on blk; a second claim goes to the
// duplicate map.
func (c *Checker) markBlockUsed(blk uint64) {
	cl := c.fs.ClusterOf(blk)
	if c.blockFound.TestAndSet(cl) {
		if c.sb.HasRoCompat(ondisk.RoCompatSharedBlocks) {
			return
		}
		if !c.blockDup.TestAndSet(cl) {
			c.dupCount++
		}
	}
}

// markBlocksUsed claims [blk, blk+n) (n blocks, cluster-aligned start).
func (c *Checker) markBlocksUsed(blk, n uint64) {
	f := c.fs
	if f.ClusterBits == 0 {
		c.blockFound.SetRange(blk, n, func(cl uint64) {
			if c.sb.HasRoCompat(ondisk.RoCompatSharedBlocks) {
				return
			}
			if !c.blockDup.TestAndSet(cl) {
				c.dupCount++
			}
		})
		return
	}
	for b := blk; b < blk+n; b += 1 << f.ClusterBits {
		c.markBlockUsed(b)
	}
}

// isReservedQuota reports whether ino is one of the reserved quota inodes
// (quota_inum_is_reserved): 3, 4 and the project quota inode.
func (c *Checker) isReservedQuota(ino uint32) bool {
	return ino == ondisk.UsrQuotaIno || ino == ondisk.GrpQuotaIno || (ino != 0 && ino == c.sb.PrjQuotaInum())
}

// isSuperQuota reports whether the superblock names ino as a quota file
// (quota_inum_is_super).
func (c *Checker) isSuperQuota(ino uint32) bool {
	sb := c.sb
	return ino == sb.UsrQuotaInum() || ino == sb.GrpQuotaInum() || ino == sb.PrjQuotaInum()
}

// checkInode is e2fsck's per-inode loop body (pass 1), for one inode.
// On "yes" answers it fixes n in place and writes it as e2fsck does; the
// later checks see the fixed inode.
func (c *Checker) checkInode(s *inodeScratch, ino uint32, n ondisk.Inode, garbage, failedCsum bool) {
	f := c.fs
	sb := c.sb
	c.p1.wrote = false
	pr := func(code problem.Code) problem.Problem {
		return problem.Problem{Code: code, Ino: ino, Inode: c.inodeInfo(n)}
	}
	if garbage {
		failedCsum = true
		if n.LinksCount() > 0 && c.fix(pr(problem.PR_1_INODE_IS_GARBAGE)) {
			c.clearInode(ino, n, false)
			failedCsum = false
		}
	}

	// Remnants of an orphan list: dtime holding an inode number.
	if n.Dtime() != 0 && c.lowDtimeCheck() && n.Dtime() < sb.InodesCount() {
		if c.fix(pr(problem.PR_1_LOW_DTIME)) {
			if n.LinksCount() != 0 {
				n.SetDtime(0)
			} else {
				n.SetDtime(c.p1Now())
			}
			c.putInode(ino, n)
		}
	}
	if n.LinksCount() != 0 {
		c.linkInfo.Set(ino, n.LinksCount())
	} else if ino >= f.FirstIno && !c.isReservedQuota(ino) {
		if n.Dtime() == 0 && n.Mode() != 0 {
			if c.fix(pr(problem.PR_1_ZERO_DTIME)) {
				n.SetDtime(c.p1Now())
				c.putInode(ino, n)
			}
		}
		c.finishInode(ino, n, failedCsum)
		return
	}

	casefoldFS := sb.HasIncompat(ondisk.IncompatCasefold)
	if n.Flags()&ondisk.FlagCasefold != 0 {
		// e2fsck asks the second question when the first is declined.
		if (!n.IsDir() && c.fix(pr(problem.PR_1_CASEFOLD_NONDIR))) ||
			(!casefoldFS && c.fix(pr(problem.PR_1_CASEFOLD_FEATURE))) {
			n.SetFlags(n.Flags() &^ ondisk.FlagCasefold)
			c.putInode(ino, n)
		}
	}

	inlineFS := sb.HasIncompat(ondisk.IncompatInlineData)
	extentFS := sb.HasIncompat(ondisk.IncompatExtents)
	if n.Flags()&ondisk.FlagInlineData != 0 && n.Flags()&ondisk.FlagExtents != 0 {
		if !c.inlineAndExtents(ino, n) {
			return
		}
	}
	if n.Flags()&ondisk.FlagInlineData != 0 && !inlineFS && ino >= f.FirstIno {
		if _, ok := c.inlineDataSize(n); ok && c.fix(pr(problem.PR_1_INLINE_DATA_FEATURE)) {
			c.setIncompat(ondisk.IncompatInlineData)
			inlineFS = true
		} else if c.fix(pr(problem.PR_1_INLINE_DATA_SET)) {
			c.clearInode(ino, n, false)
			return
		}
	}
	if n.Flags()&ondisk.FlagInlineData != 0 && inlineFS && ino >= f.FirstIno {
		// get_inline_data_ea_size reads the attributes ignoring checksum
		// errors when the inode failed its own; an error that is not one
		// of a broken attribute area stops e2fsck here.
		if r := ext2fs.XattrsReadInode(c.fs, n, failedCsum); r == ext2fs.XattrReadFailed {
			c.stop()
			return
		} else if _, ok := inlineDataSize(n); r != ext2fs.XattrReadOK || !ok {
			if c.fix(pr(problem.PR_1_INLINE_DATA_NO_ATTR)) {
				c.setInodeSize(n, 0)
				n.SetFlags(n.Flags() &^ ondisk.FlagInlineData)
				clear(n.IBlock())
				c.putInode(ino, n)
			}
		}
	}
	linkedOrSpecial := n.LinksCount() != 0 || ino == ondisk.BadBlocksIno || ino == ondisk.RootIno || ino == ondisk.JournalIno
	if n.Flags()&ondisk.FlagExtents != 0 && !extentFS && linkedOrSpecial {
		if ondisk.ExtentHeader(n.IBlock()).Verify() == nil && c.fix(pr(problem.PR_1_EXTENT_FEATURE)) {
			c.setIncompat(ondisk.IncompatExtents)
			extentFS = true
		} else if c.fix(pr(problem.PR_1_EXTENTS_SET)) {
			c.clearInode(ino, n, false)
			if ino == ondisk.BadBlocksIno {
				c.inodeUsed.Set(uint64(ino))
			}
			return
		}
	}
	if extentFS && n.Flags()&ondisk.FlagExtents == 0 && linkedOrSpecial && (n.IsReg() || n.IsDir()) {
		if ondisk.ExtentHeader(n.IBlock()).Verify() == nil && c.fix(pr(problem.PR_1_UNSET_EXTENT_FL)) {
			n.SetFlags(n.Flags() | ondisk.FlagExtents)
			c.putInode(ino, n)
		}
	}

	switch {
	case ino == ondisk.BadBlocksIno:
		if failedCsum || n.Mode() != 0 || n.UID() != 0 || n.GID() != 0 || n.LinksCount() != 0 ||
			n.Flags()&ondisk.FlagInlineData != 0 || n.FileACL(sb.Is64bit()) != 0 {
			if c.fix(pr(problem.PR_1_INVALID_BAD_INODE)) {
				clear(n[:ondisk.GoodOldInodeSize])
				c.putInode(ino, n)
				failedCsum = false
			}
		}
		c.inodeUsed.Set(uint64(ino))
		if failedCsum && !c.p1.wrote && c.inodeCsumFails(ino, c.readFullInode(ino)) {
			// The library's block iterator rereads inode 1 with a
			// checked read, which fails (unless the inode was only
			// garbage by its block's company): e2fsck stops (a fatal
			// problem).
			c.fix(problem.Problem{Code: problem.PR_1_BLOCK_ITERATE, Ino: ino, Err: string(ext2fs.ErrInodeCsumInvalid)})
			return
		}
		c.checkBadBlocksInode(s, ino, n)
		if !c.abort {
			c.finishInode(ino, n, failedCsum)
		}
		return
	case ino == ondisk.RootIno:
		if !n.IsDir() {
			if c.fix(pr(problem.PR_1_ROOT_NO_DIR)) {
				c.clearInode(ino, n, false)
				return
			}
		}
		if n.Dtime() != 0 && n.LinksCount() != 0 {
			if c.fix(pr(problem.PR_1_ROOT_DTIME)) {
				n.SetDtime(0)
				c.putInode(ino, n)
			}
		}
	case ino == ondisk.JournalIno:
		c.inodeUsed.Set(uint64(ino))
		if c.reservedFile(s, ino, n, failedCsum, sb.JournalInum() == ondisk.JournalIno, pr(problem.PR_1_JOURNAL_BAD_MODE), pr(problem.PR_1_JOURNAL_INODE_NOT_CLEAR)) {
			return
		}
	case c.isReservedQuota(ino):
		c.inodeUsed.Set(uint64(ino))
		if c.reservedFile(s, ino, n, failedCsum, sb.HasRoCompat(ondisk.RoCompatQuota) && c.isSuperQuota(ino), pr(problem.PR_1_QUOTA_BAD_MODE), pr(problem.PR_1_QUOTA_INODE_NOT_CLEAR)) {
			return
		}
	case ino == sb.OrphanFileInum() && ino != 0:
		c.inodeUsed.Set(uint64(ino))
		if c.reservedFile(s, ino, n, failedCsum, sb.HasCompat(ondisk.CompatOrphanFile), pr(problem.PR_1_ORPHAN_FILE_BAD_MODE), pr(problem.PR_1_ORPHAN_FILE_NOT_CLEAR)) {
			return
		}
	case ino < f.FirstIno:
		c.inodeUsed.Set(uint64(ino))
		bad := false
		switch ino {
		case ondisk.BootLoaderIno:
			bad = n.IsDir()
		case ondisk.ResizeIno:
			bad = n.Mode() != 0 && !n.IsReg()
		default:
			bad = n.Mode() != 0
		}
		if bad && c.fix(pr(problem.PR_1_RESERVED_BAD_MODE)) {
			n.SetMode(0)
			c.putInode(ino, n)
		}
		c.checkBlocks(s, ino, n, 0)
		c.finishInode(ino, n, failedCsum)
		return
	}

	if n.LinksCount() == 0 {
		c.finishInode(ino, n, failedCsum)
		return
	}
	if n.Dtime() != 0 {
		if c.fix(pr(problem.PR_1_SET_DTIME)) {
			n.SetDtime(0)
			c.putInode(ino, n)
		}
	}
	c.inodeUsed.Set(uint64(ino))

	var frag, fsize uint8
	hurd := sb.CreatorOS() == ondisk.OSHurd
	if hurd {
		frag, fsize = n.HurdFrag(), n.HurdFsize()
	}
	if n.Faddr() != 0 || frag != 0 || fsize != 0 ||
		(!sb.HasIncompat(ondisk.IncompatLargeDir) && n.IsDir() && n.SizeHigh() != 0) {
		c.inodeBad.Set(uint64(ino))
	}
	if !hurd && !sb.Is64bit() && n.FileACLHi() != 0 {
		c.inodeBad.Set(uint64(ino))
	}
	if !hurd && !sb.HasRoCompat(ondisk.RoCompatHugeFile) && n.BlocksHi() != 0 {
		c.inodeBad.Set(uint64(ino))
	}
	if n.Flags()&ondisk.FlagImagic != 0 && !sb.HasCompat(ondisk.CompatImagicInodes) {
		if c.fix(pr(problem.PR_1_SET_IMAGIC)) {
			n.SetFlags(n.Flags() &^ ondisk.FlagImagic)
			c.putInode(ino, n)
		}
	}

	eaQuota := c.checkInodeExtraSpace(ino, n)
	c.checkIsReallyDir(s, ino, n)

	if extentFS && n.Flags()&ondisk.FlagExtents != 0 && n.IsSymlink() && !c.hasValidBlocks(n) {
		if c.fix(pr(problem.PR_1_FAST_SYMLINK_EXTENT_FL)) {
			n.SetFlags(n.Flags() &^ ondisk.FlagExtents)
			c.putInode(ino, n)
		}
	}
	if n.Flags()&ondisk.FlagEncrypt != 0 && !c.checkEncryption(ino, n, failedCsum) {
		c.clearInode(ino, n, false)
		return
	}

	mode := n.Type()
	switch {
	case mode == ondisk.SIFDIR:
		c.inodeDir.Set(uint64(ino))
		di := dirInfo{ino: ino, gen: n.Generation(), inline: inlineFS && n.Flags()&ondisk.FlagInlineData != 0,
			casefold: casefoldFS && n.Flags()&ondisk.FlagCasefold != 0, hashInDirent: c.entriesCarryHash(ino, n)}
		if ino == ondisk.RootIno {
			di.parent = ondisk.RootIno // the root is its own parent
		}
		c.newDirs = append(c.newDirs, di)
		c.stats.Dirs++
	case mode == ondisk.SIFREG:
		c.inodeReg.Set(uint64(ino))
		c.stats.Regular++
	case (mode == ondisk.SIFCHR || mode == ondisk.SIFBLK || mode == ondisk.SIFIFO || mode == ondisk.SIFSOCK) && c.deviceOK(n):
		c.checkSpecial(ino, n)
		switch mode {
		case ondisk.SIFCHR:
			c.stats.Chr++
		case ondisk.SIFBLK:
			c.stats.Blk++
		case ondisk.SIFIFO:
			c.stats.Fifo++
		default:
			c.stats.Sock++
		}
	case mode == ondisk.SIFLNK && c.symlinkOK(s, ino, n):
		c.checkImmutable(ino, n)
		c.stats.Symlinks++
		if n.Flags()&ondisk.FlagInlineData != 0 {
			c.finishInode(ino, n, failedCsum)
			return
		}
		if ext2fs.IsFastSymlink(n) {
			c.stats.FastSymlinks++
			c.checkBlocks(s, ino, n, eaQuota)
			c.finishInode(ino, n, failedCsum)
			return
		}
	default:
		c.inodeBad.Set(uint64(ino))
	}
	if n.Flags()&(ondisk.FlagExtents|ondisk.FlagInlineData) == 0 {
		if n.Block(12) != 0 {
			c.stats.Ind++
		}
		if n.Block(13) != 0 {
			c.stats.Dind++
		}
		if n.Block(14) != 0 {
			c.stats.Tind++
		}
		// Like e2fsck, block-mapped inodes with indirect or EA blocks are
		// checked in batches sorted by those blocks (it reads them in disk
		// order); this also fixes the order of their messages.
		if n.Block(12) != 0 || n.Block(13) != 0 || n.Block(14) != 0 || n.FileACL(sb.Is64bit()) != 0 {
			c.deferred = append(c.deferred, deferredInode{ino: ino, inode: append(ondisk.Inode(nil), n...), eaQuota: eaQuota})
			c.finishInode(ino, n, failedCsum)
			if len(c.deferred) >= 256 {
				c.processDeferred(s)
			}
			return
		}
	}
	c.checkBlocks(s, ino, n, eaQuota)
	c.finishInode(ino, n, failedCsum)
}

// deferredInode is a block-mapped inode whose block check waits for its
// batch.
type deferredInode struct {
	ino     uint32
	inode   ondisk.Inode
	eaQuota uint64
}

// processDeferred checks the queued inodes sorted by indirect block, EA
// block and inode number (e2fsck's process_inodes).
func (c *Checker) processDeferred(s *inodeScratch) {
	if len(c.deferred) == 0 {
		return
	}
	is64 := c.sb.Is64bit()
	// process_inode_cmp: differences cast to int, so garbage block
	// numbers make it no total order, and glibc's merge sort decides.
	qsort.Glibc(c.deferred, func(a, b *deferredInode) int {
		if d := int32(a.inode.Block(12) - b.inode.Block(12)); d != 0 {
			return int(d)
		}
		if d := int32(a.inode.FileACL(is64) - b.inode.FileACL(is64)); d != 0 {
			return int(d)
		}
		return int(int32(a.ino - b.ino))
	})
	for _, d := range c.deferred {
		s.ioIno = d.ino
		c.checkBlocks(s, d.ino, d.inode, d.eaQuota)
		s.ioIno = 0
		if c.sink.Aborted() {
			break
		}
	}
	c.deferred = c.deferred[:0]
}

// reservedFile checks a reserved inode that holds a file of the
// filesystem's (the journal, a quota file, the orphan file), as e2fsck's
// pass 1 does: when the feature uses it (inUse) it must be a regular file
// (badMode) and its blocks are checked, which finishes the inode (true);
// otherwise it must be clear (notClear). A declined notClear goes on with
// the general checks (false).
func (c *Checker) reservedFile(s *inodeScratch, ino uint32, n ondisk.Inode, failedCsum, inUse bool, badMode, notClear problem.Problem) bool {
	if inUse {
		if !n.IsReg() && c.fix(badMode) {
			n.SetMode(ondisk.SIFREG)
			c.putInode(ino, n)
		}
		c.checkBlocks(s, ino, n, 0)
		c.finishInode(ino, n, failedCsum)
		return true
	}
	if n.LinksCount() != 0 || n.BlocksLo() != 0 || n.Block(0) != 0 {
		if c.fix(notClear) {
			c.zeroInode(ino, n)
		}
	}
	return false
}

// finishInode offers the checksum-only fix when the inode survived every
// check without change (FINISH_INODE_LOOP).
// An inode written by a fix no longer fails its checksum when e2fsck
// rereads it, so the question is not asked then; nor is it for an inode
// whose own checksum holds but that the scan called garbage with the
// rest of its inode table block (recheck_bad_inode_checksum rereads it).
func (c *Checker) finishInode(ino uint32, n ondisk.Inode, failedCsum bool) {
	if failedCsum && !c.p1.wrote && c.inodeCsumFails(ino, c.readFullInode(ino)) {
		if c.fix(problem.Problem{Code: problem.PR_1_INODE_ONLY_CSUM_INVALID, Ino: ino, Inode: c.inodeInfo(n)}) {
			c.writeInode(ino, n)
		}
	}
}

// lowDtimeCheck mirrors e2fsck: the orphan-remnant test is off when the
// superblock times themselves are tiny (test images).
func (c *Checker) lowDtimeCheck() bool {
	ic := c.sb.InodesCount()
	for _, t := range []uint32{c.sb.Wtime(), c.sb.Mtime(), c.sb.MkfsTime()} {
		if t != 0 && t < ic {
			return false
		}
	}
	return true
}

// inlineAndExtents handles an inode with both INLINE_DATA_FL and
// EXTENTS_FL (e2fsck's fix_inlinedata_extents_file): each declined fix
// leads to the next, stronger one. It returns false when the inode was
// cleared.
func (c *Checker) inlineAndExtents(ino uint32, n ondisk.Inode) bool {
	sb := c.sb
	f := c.fs
	if !sb.HasIncompat(ondisk.IncompatInlineData) && !sb.HasIncompat(ondisk.IncompatExtents) {
		return true
	}
	ask := func(code problem.Code) bool {
		return c.fix(problem.Problem{Code: code, Ino: ino, Inode: c.inodeInfo(n)})
	}
	clearFlags := func(m uint32) bool {
		n.SetFlags(n.Flags() &^ m)
		c.putInode(ino, n)
		return true
	}
	switch n.Type() {
	case ondisk.SIFCHR, ondisk.SIFBLK, ondisk.SIFIFO, ondisk.SIFSOCK:
		c.checkExtentsInlineData(ino, n)
		return true
	}
	if ondisk.ExtentHeader(n.IBlock()).Verify() == nil && ask(problem.PR_1_CLEAR_INLINE_DATA_FOR_EXTENT) {
		return clearFlags(ondisk.FlagInlineData)
	}
	maxInlineEA := uint64(0)
	if f.InodeSize > ondisk.GoodOldInodeSize {
		maxInlineEA = uint64(f.InodeSize - ondisk.GoodOldInodeSize - int(n.ExtraIsize()))
	}
	if n.Size() < ondisk.IBlockSize+maxInlineEA && ask(problem.PR_1_CLEAR_EXTENT_FOR_INLINE_DATA) {
		return clearFlags(ondisk.FlagExtents)
	}
	couldBeMap := true
	for i := 0; i < ondisk.NBlocks; i++ {
		if uint64(n.Block(i)) >= f.BlocksCount {
			couldBeMap = false
			break
		}
	}
	if couldBeMap && ask(problem.PR_1_CLEAR_EXTENT_INLINE_DATA_FLAGS) {
		return clearFlags(ondisk.FlagExtents | ondisk.FlagInlineData)
	}
	if ask(problem.PR_1_CLEAR_EXTENT_INLINE_DATA_INODE) {
		c.clearInode(ino, n, false)
		return false
	}
	return true
}

// deviceOK is e2fsck's device-inode rule.
func (c *Checker) deviceOK(n ondisk.Inode) bool {
	if n.Flags()&(ondisk.FlagIndex|ondisk.FlagExtents) != 0 {
		return false
	}
	if n.Flags()&(ondisk.FlagImmutable|ondisk.FlagAppend) != 0 {
		for i := 4; i < ondisk.NBlocks; i++ {
			if n.Block(i) != 0 {
				return false
			}
		}
	}
	return true
}

// checkSpecial runs the checks of device, FIFO and socket inodes.
func (c *Checker) checkSpecial(ino uint32, n ondisk.Inode) {
	c.checkExtentsInlineData(ino, n)
	c.checkImmutable(ino, n)
	if n.Size() != 0 && c.fix(problem.Problem{Code: problem.PR_1_SET_NONZSIZE, Ino: ino, Inode: c.inodeInfo(n)}) {
		c.setInodeSize(n, 0)
		c.putInode(ino, n)
	}
}

// checkExtentsInlineData offers to clear the extent and inline-data flags
// of a special file.
func (c *Checker) checkExtentsInlineData(ino uint32, n ondisk.Inode) {
	const bad = ondisk.FlagExtents | ondisk.FlagInlineData
	if n.Flags()&bad != 0 && c.fix(problem.Problem{Code: problem.PR_1_SPECIAL_EXTENTS_IDATA, Ino: ino, Inode: c.inodeInfo(n)}) {
		n.SetFlags(n.Flags() &^ bad)
		c.putInode(ino, n)
	}
}

func (c *Checker) checkImmutable(ino uint32, n ondisk.Inode) {
	const bad = ondisk.FlagImmutable | ondisk.FlagAppend
	if n.Flags()&bad != 0 && c.fix(problem.Problem{Code: problem.PR_1_SET_IMMUTABLE, Ino: ino, Inode: c.inodeInfo(n)}) {
		n.SetFlags(n.Flags() &^ bad)
		c.putInode(ino, n)
	}
}

// hasValidBlocks is ext2fs_inode_has_valid_blocks2: whether i_block holds
// block pointers (not a fast symlink or inline data).
func (c *Checker) hasValidBlocks(n ondisk.Inode) bool {
	if !n.IsDir() && !n.IsReg() && !n.IsSymlink() {
		return false
	}
	if n.IsSymlink() {
		if n.FileACL(c.sb.Is64bit()) == 0 {
			if n.BlocksLo() == 0 {
				return false
			}
		} else {
			// The library reads i_size alone here, not i_size_high.
			size := uint32(n.Size())
			if size >= ondisk.IBlockSize {
				return true
			}
			if size > 4 && n.Block(1) == 0 {
				return true
			}
			return false
		}
	}
	return n.Flags()&ondisk.FlagInlineData == 0
}

// inlineDataSize is pass 1's get_inline_data_ea_size: like e2fsck it
// reads all of the inode's attributes (in the inode and in its EA block)
// and fails when any of them is broken or system.data is missing.
func (c *Checker) inlineDataSize(n ondisk.Inode) (int, bool) {
	if !c.xattrsReadable(n) {
		return 0, false
	}
	return inlineDataSize(n)
}

// libInlineDataSize is the library's ext2fs_inline_data_size: it fails
// when the inode has no INLINE_DATA_FL or an attribute cannot be read,
// and a missing system.data counts as an empty one (the size is then
// that of i_block alone).
func (c *Checker) libInlineDataSize(n ondisk.Inode) (int, bool) {
	if n.Flags()&ondisk.FlagInlineData == 0 || !c.xattrsReadable(n) {
		return 0, false
	}
	if sz, ok := inlineDataSize(n); ok {
		return sz, true
	}
	return ondisk.IBlockSize, true
}

// inlineDataSize returns the size of an inline-data inode's data (i_block
// plus system.data) and whether the system.data attribute was found.
func inlineDataSize(n ondisk.Inode) (int, bool) {
	area, _ := ext2fs.IbodyEA(n)
	if !ondisk.HasIbodyXattrHeader(area) {
		return 0, false
	}
	entries := area[ondisk.XattrIHeaderSize:]
	for off := 0; off < len(entries); {
		e, end, ok := ondisk.DecodeXattrEntry(entries, off)
		if !ok || end {
			return 0, false
		}
		if ext2fs.XattrNameIs(e.NameIndex, e.Name, "system.data") {
			return ondisk.IBlockSize + int(e.ValueSize), true
		}
		off += e.EntryBytes
	}
	return 0, false
}
