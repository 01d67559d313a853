package check

import (
	"bytes"
	"context"
	"sort"

	"gofsck/internal/casefold"
	"gofsck/internal/dirhash"
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
	"gofsck/internal/qsort"
)

// htree block types and flags (pass 2 bookkeeping per directory block).
const (
	dxTypeNone = iota
	dxTypeRoot
	dxTypeLeaf
	dxTypeNode

	dxFlagReferenced = 1
	dxFlagDupRef     = 2
	dxFlagFirst      = 4
	dxFlagLast       = 8
)

// dxBlock is the per-block htree information of an indexed directory.
type dxBlock struct {
	typ         uint8
	flags       uint8
	parent      uint32
	previous    uint32
	minHash     uint32
	maxHash     uint32
	nodeMinHash uint32
	nodeMaxHash uint32
}

// dxLeaf is what the worker checking a block of an indexed directory
// learns about it; dxRef is what the node referring to the block says. They
// are kept apart because different goroutines write them (workers write
// leaf records, the serial replay writes ref records).
type dxLeaf struct {
	typ              uint8
	minHash, maxHash uint32
}

type dxRef struct {
	flags                    uint8
	parent, previous         uint32
	nodeMinHash, nodeMaxHash uint32
}

// dxDirState is an indexed directory during pass 2.
type dxDirState struct {
	ino         uint32
	numBlocks   uint32
	hashVersion dirhash.Version
	casefold    bool // names hash casefolded (dx_dir's casefolded_hash)
	depth       int
	leaf        []dxLeaf
	ref         []dxRef
}

// pass2 checks every directory block found in pass 1, in e2fsck's order
// (sorted by physical block, htree roots first). Batches of blocks are
// work units: workers read each batch with coalesced reads and check it;
// the replay applies, in order, what depends on earlier blocks (see
// engine.go and the p2* methods).
func (c *Checker) pass2(ctx context.Context) error {
	f := c.fs
	c.refCount = newCounts(uint64(f.InodesCount) + 1)
	c.restartLater = new(bool)
	// A restart pass 1 left for later (a mapping block in critical
	// metadata) comes after the directory walk too.
	*c.restartLater, c.p1.restartLater = c.p1.restartLater, false
	if c.rehash == nil {
		c.rehash = map[uint32]bool{}
	}
	c.queueLinearDirs()
	dx := make(map[uint32]*dxDirState, len(c.dxDirs))
	for _, d := range c.dxDirs {
		n := d.numBlocks
		if n > 1<<22 {
			n = 1 << 22 // bounded: 4M blocks of a directory is already 16 GiB
		}
		st := &dxDirState{ino: d.ino, numBlocks: n, leaf: make([]dxLeaf, n), ref: make([]dxRef, n)}
		st.hashVersion = dirhash.Version(d.hashVersion)
		if st.hashVersion <= dirhash.TEA && c.sb.Flags()&ondisk.FlagUnsignedHash != 0 {
			st.hashVersion += 3
		}
		st.depth = int(d.levels) + 1
		if di := c.findDir(d.ino); di != nil {
			st.casefold = di.casefold
		}
		dx[d.ino] = st
	}
	c.dx = dx
	c.pctxDir = new(uint32)
	// e2fsck sorts the list with glibc's qsort (a merge sort) and
	// comparisons that cast 64-bit differences to int: past 2^31 blocks
	// apart they are no block order, and the result depends on the merge;
	// qsort.Glibc with the same comparisons gives e2fsck's order on any
	// volume.
	qsort.Glibc(c.dblist, dirBlockCmp(c.sb.HasCompat(ondisk.CompatDirIndex)))
	const unitBlocks = 256
	units := (len(c.dblist) + unitBlocks - 1) / unitBlocks
	nblocks := uint64(len(c.dblist))
	c.progress(2, 0, nblocks)
	// Progress ahead of the replay: blocks up to the first not finished,
	// and blocks checked.
	var ahead *unitProgress
	ahead = newUnitProgress(2, units, nblocks, nblocks, func(next int) uint64 {
		cur := uint64(next) * unitBlocks
		for j := next; j < units; j++ {
			k := uint64(ahead.reached[j].Load())
			cur = uint64(j)*unitBlocks + k
			if k < unitBlocks {
				break
			}
		}
		return cur
	})
	c.ahead = ahead
	defer func() { c.ahead = nil }()
	f.PromoteLater()
	hinted := c.dirBlocksHinted()
	// The reference counts' single-count map turns dense as pass 1's maps
	// do; only the replay writes it (addRef), so it is compacted there
	// without stopping the workers, whose reads see either page.
	rule := c.newCompactRule()
	err := c.runUnits(ctx, units, func(i int) int64 {
		lo := i * unitBlocks
		list := c.dblist[lo:min(lo+unitBlocks, len(c.dblist))]
		bytes := int64(len(list)) << f.BlockBits
		for k := 0; k < len(list) && !hinted; {
			j := k + 1
			for j < len(list) && list[j].blk != 0 && list[j].blk == list[j-1].blk+1 {
				j++
			}
			if list[k].blk != 0 {
				f.Prefetch(list[k].blk, uint64(j-k))
			}
			k = j
		}
		return bytes
	}, func(i int, w *Checker) {
		lo := i * unitBlocks
		w.pass2Unit(c.dblist[lo:min(lo+unitBlocks, len(c.dblist))])
	}, func(i int, w *Checker) bool {
		stop := c.mergePass2Unit(w, uint64(i)*unitBlocks, nblocks)
		if !stop {
			c.progress(2, uint64(i+1)*unitBlocks, nblocks)
		}
		if one := c.refCount.one; rule.due(one.DensePages()) {
			one.Compact(0, one.Len())
			rule.done(one.DensePages())
		}
		return stop
	})
	if err != nil || c.sink.Aborted() || c.abort {
		return err
	}
	if *c.restartLater && c.repairing() {
		// Before the htree checks, as e2fsck; its close of the
		// filesystem writes the bitmaps fixes changed (pass 1D's
		// deletions), as pass 3's restart does.
		return c.pass3Restart()
	}
	c.checkHtrees(dx)
	if c.stats.LargeFiles > 0 && !c.sb.HasRoCompat(ondisk.RoCompatLargeFile) {
		if c.fix(problem.Problem{Code: problem.PR_2_FEATURE_LARGE_FILES}) && c.repairing() {
			c.sb.SetFeatureRoCompat(c.sb.FeatureRoCompat() | ondisk.RoCompatLargeFile)
			c.writeAllSupers()
		}
	}
	return nil
}

// p2Block is a worker's record of one checked directory block: where its
// events and references start, and what the replay must decide.
type p2Block struct {
	db        *dirBlock
	pos       int // the block's index in its unit
	evStart   int
	refStart  int
	rehashDep bool // the result assumed the directory was not queued for rebuild
	dotdotSet bool
	dotdot    uint32
}

// pass2Unit checks a batch of directory blocks.
func (c *Checker) pass2Unit(list []dirBlock) {
	f := c.fs
	w, _ := c.pools.pass2.Get().(*dirWorker)
	if w == nil || len(w.buf) != f.BlockSize || len(w.ibuf) != f.InodeSize {
		w = &dirWorker{buf: make([]byte, f.BlockSize), ibuf: make([]byte, f.InodeSize), scratch: make([]byte, f.BlockSize),
			s: c.newScratch(), names: make(map[uint64]int32, 64)}
	}
	w.c = c
	w.csumIno = 0
	w.pctxDir, w.pctxDirKnown = 0, false
	defer func() { w.c = nil; c.pools.pass2.Put(w) }()
	// Read the batch with one read per run of consecutive blocks (at most
	// maxDirRun), and check each run before reading the next: the buffer
	// is a run, not the unit (256 KiB instead of 1 MiB per worker).
	bs := f.BlockSize
	// Run serially, the blocks' problems are printed as they are found,
	// and a block may be reported as it starts, as e2fsck reports it;
	// recorded, only once nothing in it may stop the run.
	direct := !c.p2recording()
	if cap(w.unit) < maxDirRun*bs {
		w.unit = make([]byte, maxDirRun*bs)
	}
	for i := 0; i < len(list); {
		j := i + 1
		for j < len(list) && list[j].blk != 0 && list[j].blk == list[j-1].blk+1 && j-i < maxDirRun {
			j++
		}
		run := w.unit[:(j-i)*bs]
		var err error
		if list[i].blk != 0 {
			err = f.ReadBlock(list[i].blk, run)
		}
		for k := i; k < j; k++ {
			w.pos = k
			if direct {
				// e2fsck reports a block as it starts it.
				c.unitReached(uint32(k + 1))
			}
			if !w.checkDirBlock(&list[k], c.dx, run[(k-i)*bs:(k-i+1)*bs], err) {
				return
			}
			if c.sink.Aborted() {
				return
			}
			if !direct {
				c.unitReached(uint32(k + 1))
			}
			c.workDone(1)
		}
		i = j
	}
}

// maxDirRun is the most consecutive directory blocks pass 2 reads at once.
const maxDirRun = 64

// mergePass2Unit replays a unit's blocks in order. A block whose result
// assumed its directory was not queued for rebuild, when by now it is, is
// checked again here with the live state.
func (c *Checker) mergePass2Unit(w *Checker, first, nblocks uint64) bool {
	r := w.rec
	if r == nil || r.direct != nil {
		c.stats.add(&w.stats)
		c.abort = c.abort || w.abort
		return c.sink.Aborted() || c.abort
	}
	for k, b := range w.p2blocks {
		// e2fsck reports a block as it starts it.
		c.progress(2, first+uint64(b.pos)+1, nblocks)
		evEnd := len(r.events)
		refEnd := len(w.p2refs)
		if k+1 < len(w.p2blocks) {
			evEnd = w.p2blocks[k+1].evStart
			refEnd = w.p2blocks[k+1].refStart
		}
		if b.rehashDep && c.rehash[b.db.ino] {
			c.recheckDirBlock(b.db)
		} else {
			c.replayEvents(r.events[b.evStart:evEnd])
			for _, t := range w.p2refs[b.refStart:refEnd] {
				c.addRef(t)
			}
			if b.dotdotSet {
				if di := c.findDir(b.db.ino); di != nil {
					di.dotdot = b.dotdot
				}
			}
		}
		if c.sink.Aborted() || c.abort {
			return true
		}
	}
	c.stats.add(&w.stats)
	return false
}

// recheckDirBlock checks one block again on the replay goroutine, with the
// live state and the real sink.
func (c *Checker) recheckDirBlock(db *dirBlock) {
	f := c.fs
	rec := &recSink{direct: c.sink}
	w := c.shard(rec)
	w.rehash = c.rehash
	buf := make([]byte, f.BlockSize)
	var err error
	if db.blk != 0 {
		err = f.ReadBlock(db.blk, buf)
	}
	dw := &dirWorker{c: w, buf: make([]byte, f.BlockSize), ibuf: make([]byte, f.InodeSize), scratch: make([]byte, f.BlockSize),
		s: w.newScratch(), names: map[uint64]int32{}}
	dw.checkDirBlock(db, c.dx, buf, err)
	c.abort = c.abort || w.abort
}

// replayEvents sends recorded events to the real sink and applies the
// order-dependent decisions they carry.
func (c *Checker) replayEvents(evs []event) {
	pctxDirNext := false
	for k := range evs {
		ev := &evs[k]
		switch ev.kind {
		case evFix:
			if pctxDirNext {
				ev.p.Dir = *c.pctxDir
				pctxDirNext = false
			}
			c.sink.Fix(ev.p)
		case evHeader:
			c.sink.Header(ev.p.Code)
		case evEndLatch:
			c.sink.EndLatch(ev.latch)
		case evEARef:
			c.replayEARef(ev.ino, ev.blk, ev.p.Inode)
		case evSubdir:
			c.claimParent(ev.p, ev.ino)
		case evDupName:
			if !c.dirsToHash(ev.p.Ino) {
				c.sink.Fix(ev.p)
				c.setRehash(ev.p.Ino)
			}
		case evDxRefs:
			c.applyDxRefs(ev.dx)
		case evAbort:
			c.abort = true
			return
		case evFatal:
			c.fatalError(ev.p.Str)
			return
		case evUnsupported:
			c.unsupported(ev.p.Code)
			return
		case evWrite:
			c.devWrite(int64(ev.blk), ev.data)
		case evRehash:
			c.setRehash(ev.ino)
		case evClearBad:
			c.inodeBad.Clear(uint64(ev.ino))
		case evPctxDir:
			*c.pctxDir = ev.ino
		case evPctxDirFix:
			pctxDirNext = true
		}
		if c.sink.Aborted() {
			return
		}
	}
}

// addRef counts one directory reference to ino (pass 2's icount).
func (c *Checker) addRef(ino uint32) {
	if c.refCount.Add(ino) > 1 {
		c.stats.Links++
	}
}

// claimParent records dir as the parent of subdirectory sub unless an
// earlier entry did; then the entry is a second link (PR_2_LINK_DIR). It
// returns true when the entry is cleared. p is the entry's problem context.
func (c *Checker) claimParent(p problem.Problem, sub uint32) bool {
	di := c.findDir(sub)
	if di == nil {
		return false
	}
	if di.parent == 0 {
		di.parent = p.Ino
		return false
	}
	p.Code = problem.PR_2_LINK_DIR
	p.Ino2 = di.parent
	return c.sink.Fix(p)
}

// p2recording reports whether this Checker is a recording worker shard.
func (c *Checker) p2recording() bool { return c.rec != nil && c.rec.direct == nil }

// rehashed reports whether dir is queued for rebuild. A worker cannot know
// (the replay decides in order) and assumes not; the block is marked so the
// replay can check it again if the assumption was wrong.
func (c *Checker) rehashed(dir uint32) bool {
	if c.p2recording() {
		return false
	}
	return c.rehash[dir]
}

// dirWorker holds the buffers of the directory pass.
type dirWorker struct {
	c       *Checker
	pos     int // the index in its unit of the block being checked
	buf     []byte
	ibuf    []byte
	scratch []byte
	s       *inodeScratch
	names   map[uint64]int32   // per-block duplicate-name index: name hash -> entry offset
	unit    []byte             // the run of blocks being checked (maxDirRun blocks)
	di      problem.DirentInfo // the entry being checked
	lastDi  problem.DirentInfo // the last entry decoded in the block
	// cur is where the entry being checked lives (repair writes it);
	// entryModified is set when a fix changed it.
	cur           curEntry
	entryModified bool
	// fold folds casefolded names (made on first use); cfDir is e2fsck's
	// cf_dir for the block being checked (casefold.go).
	fold  *casefold.Folder
	cfDir bool
	// csumIno is the directory whose inode checksum dirCsumFails last
	// verified, csumBad the result.
	csumIno uint32
	csumBad bool
	// pctxDir is check_dir_block's sticky pctx.dir as far as this unit
	// knows it (pctxDirKnown: set by one of its blocks); see
	// Checker.pctxDir.
	pctxDir      uint32
	pctxDirKnown bool
}

// stickyDir returns check_dir_block's pctx.dir for a problem about to be
// raised. A worker that does not know it (no htree block of its unit has
// set it yet) records that the replay fills it in.
func (w *dirWorker) stickyDir() uint32 {
	c := w.c
	switch {
	case !c.p2recording():
		return *c.pctxDir
	case w.pctxDirKnown:
		return w.pctxDir
	}
	c.rec.record(event{kind: evPctxDirFix})
	return 0
}

// setStickyDir is the end of an htree directory's block in check_dir_block
// (cd->pctx.dir = cd->pctx.ino).
func (w *dirWorker) setStickyDir(ino uint32) {
	c := w.c
	if !c.p2recording() {
		*c.pctxDir = ino
		return
	}
	w.pctxDir, w.pctxDirKnown = ino, true
	c.rec.record(event{kind: evPctxDir, ino: ino})
}

// readInode reads an inode outside the pass-1 scan.
func (w *dirWorker) readInode(ino uint32) ondisk.Inode {
	if err := w.c.fs.ReadInode(ino, w.ibuf, w.scratch); err != nil {
		clear(w.ibuf)
	}
	return ondisk.Inode(w.ibuf)
}

// checkDirBlock is e2fsck's check_dir_block. It returns false when the
// check must stop (a declined salvage aborts e2fsck).
// data holds the block (read by the unit), readErr the read's error.
func (w *dirWorker) checkDirBlock(db *dirBlock, dx map[uint32]*dxDirState, data []byte, readErr error) bool {
	c := w.c
	f := c.fs
	sb := c.sb
	ino := db.ino
	if !c.inodeUsed.Test(uint64(ino)) {
		return true
	}
	var blk *p2Block
	if c.p2recording() {
		c.p2blocks = append(c.p2blocks, p2Block{db: db, pos: w.pos, evStart: len(c.rec.events), refStart: len(c.p2refs)})
		blk = &c.p2blocks[len(c.p2blocks)-1]
	}
	if sb.HasIncompat(ondisk.IncompatInlineData) && w.dirCsumFails(ino) {
		// ext2fs_inline_data_size reads the directory's inode and fails
		// on its checksum: check_dir_block returns DIRENT_ABORT, which
		// ext2fs_dblist_iterate2 does not take for its own DBLIST_ABORT,
		// so only this block goes unchecked (see csumread.go).
		return true
	}
	base := problem.Problem{Ino: ino, Blk: db.blk, BlkCount: int64(db.lblk)}
	var dirInode ondisk.Inode
	var gen uint32
	inlineSize := 0
	di := c.findDir(ino)
	if di != nil {
		gen = di.gen
	}
	w.cfDir = c.checksEncoding(di)
	if sb.HasIncompat(ondisk.IncompatInlineData) && di != nil && di.inline {
		dirInode = append(ondisk.Inode(nil), w.readInode(ino)...)
		if dirInode.Flags()&ondisk.FlagInlineData != 0 {
			if sz, ok := inlineDataSize(dirInode); ok {
				inlineSize = sz
			} else {
				inlineSize = ondisk.IBlockSize
			}
		}
	}
	if db.blk == 0 && sb.HasIncompat(ondisk.IncompatLargeDir) && !sb.HasIncompat(ondisk.IncompatInlineData) {
		return true // holes in large directories are left alone
	}
	if db.blk == 0 && inlineSize == 0 {
		q := base
		q.Code = problem.PR_2_DIRECTORY_HOLE
		if !c.fix(q) || !c.repairing() {
			return true
		}
		blk, ok := w.allocateDirBlock(db, data)
		if !ok {
			return true
		}
		db.blk = blk
		readErr = nil
	}
	dotState := 0
	if db.lblk != 0 {
		dotState = 2
	}
	dupsFound := c.dirsToHash(ino)
	buf := w.buf
	failedCsum := false
	if inlineSize > 0 {
		clear(buf)
		copy(buf, dirInode.IBlock())
		if inlineSize > ondisk.IBlockSize {
			if v, ok := ext2fs.FindInodeXattr(dirInode, ondisk.XattrIndexSystem, "data"); ok {
				copy(buf[ondisk.IBlockSize:], v)
			}
		}
		if inlineSize&3 != 0 || (inlineSize > ondisk.IBlockSize && inlineSize < ondisk.IBlockSize+12) {
			if c.fix(problem.Problem{Code: problem.PR_2_BAD_INLINE_DIR_SIZE, Ino: ino, Num: uint64(inlineSize)}) && c.repairing() {
				sz, ok := w.fixInlineDirSize(ino, inlineSize, buf)
				if !ok {
					return false
				}
				inlineSize = sz
			}
		}
	} else {
		buf = data
		if readErr != nil {
			// The batch read failed: e2fsck reads this block alone, and
			// its handler may have the error ignored.
			readErr = c.fs.ReadBlock(db.blk, data)
			if readErr != nil && c.readFailed(db.blk, readErr, opDirBlock, data) {
				readErr = nil
			}
		}
		if readErr != nil {
			q := base
			q.Code, q.Err = problem.PR_2_READ_DIRBLOCK, ioErrorText(readErr)
			if !c.fix(q) {
				c.stop()
				return false
			}
			// The check goes on with a fresh block in memory.
			var nb []byte
			if db.lblk == 0 {
				nb = c.newDirBlock(ino, ondisk.RootIno)
			} else {
				nb = c.newDirBlock(0, ondisk.RootIno)
			}
			copy(buf, nb)
		}
		// The library's verification reads the directory's inode for
		// its generation: when that read fails its own checksum, so does
		// the block's.
		if readErr == nil && f.MetadataCsum && (!dirBlockCsumOK(f.BlockSize, buf, f.CsumSeed, ino, gen) ||
			c.repair.inodeCsumSeen.Load() && w.dirCsumFails(ino)) {
			failedCsum = true
			if blk != nil {
				blk.rehashDep = true
			}
		}
	}
	csumSize := 0
	if f.MetadataCsum {
		csumSize = ondisk.DirTailSize
	}
	isLeaf := true
	var dd *dxDirState
	var dxb *dxLeaf
	if d := dx[ino]; d != nil && d.numBlocks > 0 {
		dd = d
		if db.lblk >= d.numBlocks {
			q := problem.Problem{Code: problem.PR_2_UNEXPECTED_HTREE_BLOCK, Ino: ino, Dir: ino, Blk: db.blk, BlkCount: int64(db.lblk)}
			if c.fix(q) && c.repairing() {
				c.clearIndexFlag(ino)
				c.rehashCleared(ino)
				d.numBlocks = 0
			}
			dd = nil
		} else {
			dxb = &d.leaf[db.lblk]
			dxb.typ = dxTypeLeaf
			dxb.minHash = ^uint32(0)
			dxb.maxHash = 0
			first, _ := ondisk.DecodeDirent(buf, 0, f.BlockSize)
			limit, _, _ := ondisk.DxCountLimit(buf, ondisk.DxNodeCountOff)
			dxCsum := 0
			if f.MetadataCsum {
				dxCsum = ondisk.DxTailSize
			}
			if db.lblk == 0 {
				// The hash version and depth were taken from this block
				// in pass 1 (handleHtree), so leaves checked in parallel
				// can hash without waiting for it.
				root, _ := ondisk.DecodeDxRootInfo(buf)
				dxb.typ = dxTypeRoot
				maxLevels := 2
				if sb.HasIncompat(ondisk.IncompatLargeDir) {
					maxLevels = 3
				}
				if root.ReservedZero != 0 || root.InfoLength < 8 || int(root.IndirectLevels) >= maxLevels {
					q := base
					q.Code = problem.PR_2_HTREE_BAD_ROOT
					q.Dir = w.stickyDir()
					if c.fix(q) {
						if c.repairing() {
							c.clearIndexFlag(ino)
							c.rehashCleared(ino)
							d.numBlocks = 0
						}
						dd, dxb = nil, nil
					}
				}
			} else if first.Ino == 0 && first.RecLen == f.BlockSize && first.NameLen == 0 &&
				limit == (f.BlockSize-(ondisk.DxNodeCountOff+dxCsum))/ondisk.DxEntrySize {
				dxb.typ = dxTypeNode
			}
			if dxb != nil {
				isLeaf = dxb.typ == dxTypeLeaf
			} else {
				isLeaf = false
			}
		}
	}
	deCsumSize := csumSize
	if isLeaf && inlineSize == 0 && failedCsum && !dirHasTail(f.BlockSize, buf) {
		deCsumSize = 0
		if c.rehashed(ino) {
			failedCsum = false
		} else {
			q := base
			q.Code = problem.PR_2_LEAF_NODE_MISSING_CSUM
			if c.fix(q) {
				c.setRehash(ino)
				failedCsum = false
			}
		}
	}
	if !isLeaf {
		deCsumSize = 0
	}
	var maxSize int
	area := buf
	if inlineSize > 0 {
		if db.lblk != 0 {
			area = buf[ondisk.IBlockSize:]
			maxSize = inlineSize - ondisk.IBlockSize
			if maxSize <= 0 {
				return true
			}
		} else {
			maxSize = ondisk.IBlockSize
		}
	} else {
		maxSize = f.BlockSize - deCsumSize
	}
	filetypeFS := sb.HasIncompat(ondisk.IncompatFiletype)
	clear(w.names)
	offset := 0
	prevOff := -1
	synthPrev := false
	lastOff := 0
	salvages := 0
	recLen := 0
	modified := false
	// The entry being checked and the last one seen live in the worker,
	// so that passing them by pointer does not allocate per entry (a
	// recording sink copies what it keeps).
	lastDirent := &w.lastDi
	for {
		var d ondisk.Dirent
		var name []byte
		var synthetic bool
		if inlineSize == 0 || dotState > 1 {
			ext := hashExtra(di, dotState) // room for a stored hash (enccasefold.go)
			if maxSize-offset < ondisk.DirentHeaderSize {
				recLen = ondisk.DirRecLen(1, ext)
			} else {
				h, _ := ondisk.DecodeDirent(area, offset, f.BlockSize)
				recLen = h.RecLen
			}
			d, _ = ondisk.DecodeDirent(area, offset, f.BlockSize)
			nameLen := d.NameLen
			lastOff = offset
			w.di = direntInfo(area, offset, d)
			*lastDirent = w.di
			if offset+recLen > maxSize || recLen < ondisk.DirRecLen(1, ext) || recLen%4 != 0 || ondisk.DirRecLen(nameLen, ext) > recLen {
				q := base
				q.Code, q.Num, q.Dirent = problem.PR_2_DIR_CORRUPTED, uint64(offset), &w.di
				if c.fix(q) {
					if !c.repairing() {
						return true
					}
					offset = w.salvageDirectory(area, offset, prevOff, maxSize, synthPrev, hashExtra(di, 2))
					modified = true
					if salvages++; offset >= maxSize || salvages > f.BlockSize {
						break // (bounded: each salvage shrinks what is left)
					}
					continue
				}
				// e2fsck cannot go on with a block it was not allowed to
				// salvage: it stops the whole run.
				c.stop()
				return false
			}
			name = area[offset+ondisk.DirentHeaderSize : offset+ondisk.DirentHeaderSize+nameLen]
			d.RecLen = recLen
		} else {
			synthetic = true
			if dotState == 0 {
				d = ondisk.Dirent{Ino: ino, RecLen: 12, NameLen: 1, FileType: ondisk.FTDir}
				name = dotName
			} else {
				d = ondisk.Dirent{Ino: ondisk.InlineDirParent(buf), RecLen: 12, NameLen: 2, FileType: ondisk.FTDir}
				name = dotDotName
			}
			if !filetypeFS {
				d.FileType = 0
			}
			recLen = d.RecLen
		}
		w.di = problem.DirentInfo{Ino: d.Ino, RecLen: uint32(d.RecLen), NameLen: uint8(d.NameLen), FileType: d.FileType, Name: name}
		*lastDirent = w.di
		w.cur = curEntry{area: area, off: offset, synthetic: synthetic}
		lastOff = offset
		if synthetic {
			w.cur.area = nil
		}
		p := base
		p.Num = uint64(offset)
		p.Dirent = &w.di
		ask := func(code problem.Code) bool {
			q := p
			q.Code = code
			return c.fix(q)
		}
		var nextByte func(i int) byte
		if synthetic {
			nextByte = func(int) byte { return 0 }
		} else {
			o := offset
			nextByte = func(i int) byte {
				if o+ondisk.DirentHeaderSize+i < len(area) {
					return area[o+ondisk.DirentHeaderSize+i]
				}
				return 0
			}
		}
		skip := false
		var pending problem.Code // e2fsck's "problem" carries over to later checks
		switch {
		case dotState == 0:
			if w.checkDot(p, d, name, nextByte) {
				modified = true
			}
		case dotState == 1:
			if w.checkDotDot(p, d, name, nextByte) {
				modified = true
			}
		case d.Ino == ino:
			pending = problem.PR_2_LINK_DOT
			if ask(problem.PR_2_LINK_DOT) {
				skip = true
				if w.clearEntry() {
					modified = true
				}
			}
		}
		if w.cur.area != nil && modified {
			// The fixes of '.' and '..' rewrote the entry.
			d, _ = ondisk.DecodeDirent(area, offset, f.BlockSize)
			name = area[offset+ondisk.DirentHeaderSize : offset+ondisk.DirentHeaderSize+min(d.NameLen, max(0, maxSize-offset-ondisk.DirentHeaderSize))]
			d.RecLen = ondisk.DirentRecLen(area, offset, f.BlockSize)
			w.di = problem.DirentInfo{Ino: d.Ino, RecLen: uint32(d.RecLen), NameLen: uint8(d.NameLen), FileType: d.FileType, Name: name}
			p.Dirent = &w.di
		}
		if !skip && d.Ino != 0 {
			w.entryModified = false
			if w.checkEntry(p, d, name, dotState, ino, dd, dxb, filetypeFS, area, offset, ask, &dupsFound, pending, blk) {
				if w.clearEntry() {
					modified = true
				}
			}
			if w.entryModified {
				modified = true
			}
			if c.abort {
				return false
			}
		}
		synthPrev = synthetic
		prevOff = offset
		if modified && !synthetic {
			recLen = ondisk.DirentRecLen(area, offset, f.BlockSize)
		}
		if inlineSize == 0 || dotState > 1 {
			offset += recLen
		} else if dotState == 1 {
			offset = ondisk.InlineDotDotSize
			prevOff = -1
		}
		dotState++
		if offset >= maxSize {
			break
		}
	}
	if dxb != nil {
		w.setStickyDir(ino)
	}
	if dxb != nil && (dxb.typ == dxTypeRoot || dxb.typ == dxTypeNode) {
		w.parseIntNode(db, dd, buf, failedCsum)
	}
	if offset != maxSize {
		q := base
		q.Code = problem.PR_2_FINAL_RECLEN
		q.Num = uint64(recLen + offset - maxSize)
		q.Dirent = lastDirent
		if c.repairing() && !synthPrev && lastOff+ondisk.DirentHeaderSize <= len(area) {
			// e2fsck's pointer shows the entry as the salvage left it,
			// its name cut at rec_len.
			ld, _ := ondisk.DecodeDirent(area, lastOff, f.BlockSize)
			ld.RecLen = int(ondisk.DirentRawRecLen(area, lastOff))
			di := direntInfo(area, lastOff, ld)
			if int(di.NameLen) > ld.RecLen {
				di.Name = di.Name[:min(len(di.Name), ld.RecLen)]
			}
			q.Dirent = &di
		}
		if c.fix(q) && c.repairing() && lastOff+ondisk.DirentHeaderSize <= len(area) {
			ondisk.SetDirentRawRecLen(area, lastOff, uint16(q.Num))
			modified = true
		}
	}
	if modified && c.repairing() {
		w.writeDirBlockFixed(db, buf, isLeaf, inlineSize, dirInode)
	} else if !modified && isLeaf && inlineSize == 0 && failedCsum {
		q := base
		q.Code = problem.PR_2_LEAF_NODE_ONLY_CSUM_INVALID
		if c.fix(q) && c.repairing() {
			c.writeDirBlock(db.blk, buf, ino)
		}
	}
	return true
}

// direntInfo builds the message view of the entry at off.
func direntInfo(area []byte, off int, d ondisk.Dirent) problem.DirentInfo {
	di := problem.DirentInfo{Ino: d.Ino, RecLen: uint32(d.RecLen), NameLen: uint8(d.NameLen), FileType: d.FileType}
	s := off + ondisk.DirentHeaderSize
	if s < len(area) {
		e := min(s+d.NameLen, len(area))
		di.Name = area[s:e]
	}
	return di
}

// Names of the synthesised '.' and '..' entries of inline directories.
var (
	dotName    = []byte(".")
	dotDotName = []byte("..")
)

// seenName reports whether name already occurred in the current block (its
// entry is at off in area), adding it otherwise. The index maps a 64-bit
// name hash to the entry's offset; a hash hit is confirmed on the bytes.
// With folded (a cf_dir block) names match by their folded forms.
func (w *dirWorker) seenName(area []byte, off int, name []byte, folded bool) bool {
	key := name
	var fo *casefold.Folder
	if folded {
		// Names match by ext2fs_casefold_cmp; one that does not fold
		// matches nothing.
		fo = w.folder()
		f, st := fo.Fold(name)
		if st != casefold.OK {
			return false
		}
		key = f
	}
	h := nameHash(key)
	for {
		prev, ok := w.names[h]
		if !ok {
			w.names[h] = int32(off)
			return false
		}
		d, _ := ondisk.DecodeDirent(area, int(prev), w.c.fs.BlockSize)
		s := int(prev) + ondisk.DirentHeaderSize
		if s+d.NameLen <= len(area) {
			if seen := area[s : s+d.NameLen]; fo == nil && bytes.Equal(seen, name) || fo != nil && fo.Equal(seen, name) {
				return true
			}
		}
		h++ // a collision: probe the next key
	}
}

// nameHash is FNV-1a over a name.
func nameHash(name []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, b := range name {
		h ^= uint64(b)
		h *= 1099511628211
	}
	return h
}

// detach copies a problem's dirent name out of the block buffer so that a
// recorded event stays valid after the buffer is reused.
func (w *dirWorker) detach(p problem.Problem) problem.Problem {
	if p.Dirent != nil {
		d := *p.Dirent
		d.Name = append([]byte(nil), d.Name...)
		p.Dirent = &d
	}
	return p
}

// badSpecialCode is process_bad_inode's problem for a device, FIFO or
// socket inode whose fields its type does not allow.
var badSpecialCode = map[uint16]problem.Code{
	ondisk.SIFCHR:  problem.PR_2_BAD_CHAR_DEV,
	ondisk.SIFBLK:  problem.PR_2_BAD_BLOCK_DEV,
	ondisk.SIFIFO:  problem.PR_2_BAD_FIFO,
	ondisk.SIFSOCK: problem.PR_2_BAD_SOCKET,
}

// dotProblem is the first test of check_dot and check_dotdot: entry d,
// named name, must be in use (else missing), be named '.' (n 1) or '..'
// (n 2) (else notDot), and have a NUL after its name (next(n), else
// noNUL). It returns 0 when the entry passes.
func dotProblem(d ondisk.Dirent, name []byte, next func(int) byte, n int, missing, notDot, noNUL problem.Code) problem.Code {
	switch {
	case d.Ino == 0:
		return missing
	case d.NameLen != n || len(name) < n || string(name[:n]) != ".."[:n]:
		return notDot
	case next(n) != 0:
		return noNUL
	}
	return 0
}

// checkDot validates the '.' entry. It returns true when a fix changed
// the block.
func (w *dirWorker) checkDot(p problem.Problem, d ondisk.Dirent, name []byte, next func(int) byte) bool {
	c := w.c
	code := dotProblem(d, name, next, 1, problem.PR_2_MISSING_DOT, problem.PR_2_1ST_NOT_DOT, problem.PR_2_DOT_NULL_TERM)
	created := false
	status := false
	ft := uint8(ondisk.FTDir)
	if code != 0 {
		ft = w.dotFileType()
		created = c.fix(withCode(p, code))
		if created && w.fixDot(p.Ino) {
			d.Ino = p.Ino
			d.RecLen = max(d.RecLen, 12)
			status = true
		}
	}
	if d.Ino != p.Ino {
		if c.fix(withCode(p, problem.PR_2_BAD_INODE_DOT)) && w.setEntryIno(p.Ino) {
			status = true
		}
	}
	if d.RecLen > 12 && d.RecLen-12 > 12 && (created || c.fix(withCode(p, problem.PR_2_SPLIT_DOT))) {
		if w.splitDot(d.RecLen, ft) {
			status = true
		}
	}
	return status
}

// checkDotDot validates the '..' entry and records its target. It
// returns true when a fix changed the block.
func (w *dirWorker) checkDotDot(p problem.Problem, d ondisk.Dirent, name []byte, next func(int) byte) bool {
	c := w.c
	code := dotProblem(d, name, next, 2, problem.PR_2_MISSING_DOT_DOT, problem.PR_2_2ND_NOT_DOT_DOT, problem.PR_2_DOT_DOT_NULL_TERM)
	if code != 0 {
		if c.fix(withCode(p, code)) {
			return w.fixDotDotEntry()
		}
		return false
	}
	if c.p2recording() {
		b := &c.p2blocks[len(c.p2blocks)-1]
		b.dotdotSet, b.dotdot = true, d.Ino
	} else if di := c.findDir(p.Ino); di != nil {
		di.dotdot = d.Ino
	}
	return false
}

// checkEntry runs the target, type, name, htree and link checks of one
// entry with a non-zero inode. It returns true when the entry was cleared.
func (w *dirWorker) checkEntry(p problem.Problem, d ondisk.Dirent, name []byte, dotState int, dir uint32,
	dd *dxDirState, dxb *dxLeaf, filetypeFS bool, area []byte, off int,
	ask func(problem.Code) bool, dupsFound *bool, code problem.Code, blk *p2Block) bool {
	c := w.c
	f := c.fs
	sb := c.sb
	target := d.Ino
	switch {
	case (target != ondisk.RootIno && target < f.FirstIno) || target > f.InodesCount ||
		target == sb.UsrQuotaInum() || target == sb.GrpQuotaInum() || target == sb.PrjQuotaInum() ||
		(target == sb.OrphanFileInum() && target != 0):
		code = problem.PR_2_BAD_INO
	case c.inodeBB != nil && c.inodeBB.Test(uint64(target)):
		code = problem.PR_2_BB_INODE
	case dotState > 1 && d.NameLen == 1 && name[0] == '.':
		code = problem.PR_2_DUP_DOT
	case dotState > 1 && d.NameLen == 2 && name[0] == '.' && name[1] == '.':
		code = problem.PR_2_DUP_DOT_DOT
	case dotState > 1 && target == ondisk.RootIno:
		code = problem.PR_2_LINK_ROOT
	case dotState > 1 && d.NameLen == 0:
		code = problem.PR_2_NULL_NAME
	}
	if code != 0 {
		if ask(code) {
			return true
		}
		if code == problem.PR_2_BAD_INO {
			return false
		}
	}
	if c.inodeBad.TestAtomic(uint64(target)) {
		if w.processBadInode(dir, target) {
			return true
		}
	}
	ipg := f.InodesPerGroup
	group := (target - 1) / ipg
	gd := f.Group(group)
	// In e2fsck's 32-bit arithmetic: a bg_itable_unused past the group's
	// size wraps it to beyond every inode.
	firstUnused := group*ipg + 1 + ipg - gd.ItableUnused()
	p.Group = group
	if c.skipUninit && gd.Flags()&ondisk.BgInodeUninit != 0 {
		if c.fix(withCode(p, problem.PR_2_INOREF_BG_INO_UNINIT)) && c.repairing() {
			gd.SetFlags(gd.Flags() &^ ondisk.BgInodeUninit)
			gd.UpdateChecksum(sb, group)
			*c.restartLater = true
		}
	} else if c.skipUninit && target >= firstUnused {
		if c.fix(withCode(p, problem.PR_2_INOREF_IN_UNUSED)) && c.repairing() {
			gd.SetItableUnused(0)
			gd.UpdateChecksum(sb, group)
			*c.restartLater = true
		}
	}
	// While a restart is pending, e2fsck clears no entry for an unused
	// inode: pass 1 may have skipped it.
	if !c.inodeUsed.Test(uint64(target)) && (c.restartLater == nil || !*c.restartLater) {
		code = problem.PR_2_UNUSED_INODE
	}
	if code != 0 {
		if ask(code) {
			return true
		}
		if code == problem.PR_2_BAD_INO {
			return false
		}
	}
	w.checkFiletype(p, d, filetypeFS)
	if c.abort {
		return false
	}
	if dirPolicy, encrypted := c.encPolicy[dir]; encrypted {
		if dotState > 1 && w.checkEncryptedEntry(p, d, dirPolicy) {
			return true
		}
		if c.abort {
			return false
		}
	} else if w.cfDir {
		w.checkEncodedName(p, name)
	} else {
		w.checkName(p, name)
	}
	if dxb != nil && dd != nil {
		var hash uint32
		update := true
		if dd.hashVersion == dirhash.SipHash {
			// The hash lives in the entry, after the name padded to 4
			// bytes (encrypted+casefolded dirs: EXT2_DIRENT_HASH), read
			// as e2fsck reads it, whether or not rec_len holds it.
			if dotState > 1 {
				hash, _ = ondisk.DirentHash(area, off, d.NameLen)
			}
		} else {
			hash, update = w.entryHash(dd, name)
		}
		if update && hash < dxb.minHash {
			dxb.minHash = hash
		}
		if update && hash > dxb.maxHash {
			dxb.maxHash = hash
		}
	}
	if dotState > 1 && c.inodeDir.Test(uint64(target)) {
		// The first entry naming a directory is its parent: decided in
		// order, by the replay when recording.
		if c.p2recording() {
			c.rec.record(event{kind: evSubdir, ino: target, p: w.detach(p)})
		} else if c.claimParent(p, target) {
			return true
		}
	}
	if !*dupsFound && w.seenName(area, off, name, w.cfDir) {
		q := problem.Problem{Code: problem.PR_2_REPORT_DUP_DIRENT, Ino: dir, Dirent: p.Dirent}
		*dupsFound = true
		if c.p2recording() {
			c.rec.record(event{kind: evDupName, p: w.detach(q)})
			blk.rehashDep = true
		} else {
			c.fix(q)
			c.setRehash(dir)
		}
	}
	if c.p2recording() {
		c.p2refs = append(c.p2refs, target)
	} else {
		c.addRef(target)
	}
	return false
}

// checkFiletype compares the entry's file type with the target inode.
func (w *dirWorker) checkFiletype(p problem.Problem, d ondisk.Dirent, filetypeFS bool) {
	c := w.c
	if !filetypeFS {
		if d.FileType != 0 {
			if c.fix(withCode(p, problem.PR_2_CLEAR_FILETYPE)) {
				w.setEntryType(0)
			}
		}
		return
	}
	var should uint8
	switch {
	case c.inodeDir.Test(uint64(d.Ino)):
		should = ondisk.FTDir
	case c.inodeReg.Test(uint64(d.Ino)):
		should = ondisk.FTRegFile
	case c.inodeBad.TestAtomic(uint64(d.Ino)):
		should = 0
	default:
		n, ok := w.readInodeChecked(d.Ino, "ext2fs_read_inode", "check_filetype")
		if !ok {
			return
		}
		should = ondisk.FileTypeOfMode(n.Mode())
	}
	if d.FileType == should {
		return
	}
	q := p
	q.Num = uint64(should)
	if d.FileType != 0 {
		q.Code = problem.PR_2_BAD_FILETYPE
	} else {
		q.Code = problem.PR_2_SET_FILETYPE
	}
	if c.fix(q) {
		w.setEntryType(should)
	}
}

// checkEncryptedEntry checks a name in an encrypted directory and that the
// target shares the directory's policy. It returns true when the entry was
// cleared.
func (w *dirWorker) checkEncryptedEntry(p problem.Problem, d ondisk.Dirent, dirPolicy string) bool {
	c := w.c
	if d.NameLen < 16 {
		if c.fix(withCode(p, problem.PR_2_BAD_ENCRYPTED_NAME)) {
			return true
		}
	}
	filePolicy, encrypted := c.encPolicy[d.Ino]
	if encrypted && filePolicy == dirPolicy {
		return false
	}
	q := p
	if !encrypted {
		if !w.needsEncryption(d) {
			return false
		}
		q.Code = problem.PR_2_UNENCRYPTED_FILE
	} else {
		q.Code = problem.PR_2_INCONSISTENT_ENCRYPTION_POLICY
	}
	return c.fix(q)
}

// needsEncryption reports whether the entry's target must be encrypted in
// an encrypted directory (regular files, directories and symlinks).
func (w *dirWorker) needsEncryption(d ondisk.Dirent) bool {
	c := w.c
	if d.FileType != ondisk.FTUnknown {
		return d.FileType == ondisk.FTRegFile || d.FileType == ondisk.FTDir || d.FileType == ondisk.FTSymlink
	}
	if c.inodeReg.Test(uint64(d.Ino)) || c.inodeDir.Test(uint64(d.Ino)) {
		return true
	}
	n, ok := w.readInodeChecked(d.Ino, "ext2fs_read_inode", "check_encryption_policy")
	if !ok {
		return false
	}
	t := n.Type()
	return t == ondisk.SIFREG || t == ondisk.SIFDIR || t == ondisk.SIFLNK
}

// checkName reports '/' and NUL bytes in a name.
func (w *dirWorker) checkName(p problem.Problem, name []byte) {
	if bytes.IndexByte(name, '/') >= 0 || bytes.IndexByte(name, 0) >= 0 {
		q := p
		q.Code = problem.PR_2_BAD_NAME
		if w.c.fix(q) {
			w.fixName(name)
		}
	}
}

// processBadInode is e2fsck_process_bad_inode for an inode flagged in pass
// 1. It returns true when the inode was deallocated (entry cleared).
func (w *dirWorker) processBadInode(dir, ino uint32) bool {
	c := w.c
	f := c.fs
	sb := c.sb
	n := append(ondisk.Inode(nil), w.readInode(ino)...)
	if f.MetadataCsum && !n.ChecksumValid(f.CsumSeed, ino) {
		// e2fsck rereads the inode with the library's checked read, which
		// fails on a checksum that pass 1 was not allowed to fix.
		c.fatalError("ext2fs_read_inode: " + string(ext2fs.ErrInodeCsumInvalid) + " while reading inode " + utoa(ino) + " in process_bad_inode\n")
		return true
	}
	p := problem.Problem{Ino: ino, Dir: dir, Inode: c.inodeInfo(n)}
	ask := func(code problem.Code, num uint64) bool {
		q := p
		q.Code, q.Num = code, num
		return c.fix(q)
	}
	notFixed := false
	modified := false
	acl := n.FileACL(sb.Is64bit())
	if acl != 0 && !sb.HasCompat(ondisk.CompatExtAttr) {
		if !ask(problem.PR_2_FILE_ACL_ZERO, 0) {
			notFixed = true
		} else {
			n.SetFileACL(0)
			modified = true
		}
	}
	var code problem.Code
	switch mode := n.Type(); mode {
	case ondisk.SIFDIR, ondisk.SIFREG:
	case ondisk.SIFCHR, ondisk.SIFBLK, ondisk.SIFIFO, ondisk.SIFSOCK:
		if !c.deviceOK(n) {
			code = badSpecialCode[mode]
		}
	case ondisk.SIFLNK:
		if !c.symlinkOK(w.s, ino, n) {
			code = problem.PR_2_INVALID_SYMLINK
		}
	default:
		code = problem.PR_2_BAD_MODE
	}
	if code != 0 {
		if ask(code, 0) {
			if c.repairing() {
				c.deallocateInode(ino)
			}
			return true
		}
		notFixed = true
	}
	// The field fixes edit the inode read above (e2fsck writes its
	// 128-byte view back at the end).
	fixed := func(code problem.Code, num uint64, apply func()) {
		if ask(code, num) {
			apply()
			modified = true
		} else {
			notFixed = true
		}
	}
	if n.Faddr() != 0 {
		fixed(problem.PR_2_FADDR_ZERO, 0, func() { n.SetFaddr(0) })
	}
	if sb.CreatorOS() == ondisk.OSHurd {
		if n.HurdFrag() != 0 {
			fixed(problem.PR_2_FRAG_ZERO, uint64(n.HurdFrag()), func() { n.SetHurdFrag(0) })
		}
		if n.HurdFsize() != 0 {
			fixed(problem.PR_2_FSIZE_ZERO, uint64(n.HurdFsize()), func() { n.SetHurdFsize(0) })
		}
	}
	if sb.CreatorOS() == ondisk.OSLinux && !sb.HasRoCompat(ondisk.RoCompatHugeFile) && n.BlocksHi() != 0 {
		// A declined answer does not keep the inode in the bad map
		// (e2fsck counts no not_fixed here): check_filetype then reads
		// it instead of expecting type 0.
		if ask(problem.PR_2_BLOCKS_HI_ZERO, uint64(n.BlocksHi())) {
			n.SetBlocksHi(0)
			modified = true
		}
	}
	if sb.CreatorOS() == ondisk.OSLinux && !sb.Is64bit() && n.FileACLHi() != 0 {
		fixed(problem.PR_2_I_FILE_ACL_HI_ZERO, uint64(n.FileACLHi()), func() { n.SetFileACLHi(0) })
	}
	acl = n.FileACL(sb.Is64bit())
	if acl != 0 && (acl < f.FirstDataBlock || acl >= f.BlocksCount) {
		fixed(problem.PR_2_FILE_ACL_BAD, 0, func() { n.SetFileACL(0) })
	}
	if n.SizeHigh() != 0 && !sb.HasIncompat(ondisk.IncompatLargeDir) && n.IsDir() &&
		uint64(n.BlocksLo()) < uint64(1)<<(29-f.BlockBits) {
		fixed(problem.PR_2_DIR_SIZE_HIGH_ZERO, uint64(n.SizeHigh()), func() { n.SetSizeHigh(0) })
	}
	if modified && c.repairing() {
		c.writeInode(ino, n)
	}
	if !notFixed {
		if c.p2recording() {
			// A speculative worker: the replay clears it in order, while
			// other workers read the map.
			c.rec.record(event{kind: evClearBad, ino: ino})
		} else {
			c.inodeBad.Clear(uint64(ino))
		}
	}
	return false
}

// parseIntNode checks an htree root or interior node's index entries.
func (w *dirWorker) parseIntNode(db *dirBlock, dd *dxDirState, buf []byte, failedCsum bool) {
	c := w.c
	f := c.fs
	base := problem.Problem{Ino: db.ino, Dir: db.ino, Blk: db.blk, BlkCount: int64(db.lblk)}
	ask := func(code problem.Code, num, blk uint64) bool {
		q := base
		q.Code, q.Num = code, num
		if blk != 0 {
			q.Blk = blk
		}
		return c.fix(q)
	}
	var entOff int
	if db.lblk == 0 {
		root, _ := ondisk.DecodeDxRootInfo(buf)
		entOff = ondisk.DxRootInfoOff + int(root.InfoLength)
		if failedCsum && (c.rehashed(db.ino) || ask(problem.PR_2_HTREE_ROOT_CSUM_INVALID, 0, 0)) {
			w.clearHtree(dd, db.ino)
			return
		}
	} else {
		entOff = ondisk.DxNodeCountOff
		if failedCsum && (c.rehashed(db.ino) || ask(problem.PR_2_HTREE_NODE_CSUM_INVALID, 0, 0)) {
			w.clearHtree(dd, db.ino)
			return
		}
	}
	limit, count, ok := ondisk.DxCountLimit(buf, entOff)
	if !ok {
		w.clearHtree(dd, db.ino)
		return
	}
	expect := (f.BlockSize - entOff) / ondisk.DxEntrySize
	if f.MetadataCsum {
		expect = (f.BlockSize - (ondisk.DxTailSize + entOff)) / ondisk.DxEntrySize
	}
	if limit != expect {
		if ask(problem.PR_2_HTREE_BAD_LIMIT, uint64(limit), 0) {
			w.clearHtree(dd, db.ino)
			return
		}
	}
	if count > expect {
		if ask(problem.PR_2_HTREE_BAD_COUNT, uint64(count), 0) {
			w.clearHtree(dd, db.ino)
			return
		}
		count = expect
	}
	minHash, maxHash := ^uint32(0), uint32(0)
	var hash uint32
	refs := &dxNodeRefs{dir: db.ino, node: db.lblk, count: count}
	for i := 0; i < count; i++ {
		prev := hash
		h, blk32, ok := ondisk.DxEntry(buf, entOff, i)
		if !ok {
			break
		}
		hash = h &^ 1
		blk := blk32 & ondisk.DxBlockMask
		if blk >= dd.numBlocks {
			if ask(problem.PR_2_HTREE_BADBLK, 0, uint64(blk)) {
				w.clearHtree(dd, db.ino)
				return
			}
			continue
		}
		if hash < prev && ask(problem.PR_2_HTREE_HASH_ORDER, 0, 0) {
			w.clearHtree(dd, db.ino)
			return
		}
		// The child's records are updated by the replay, in order.
		var prevBlk, nextHash uint32
		if i > 0 {
			_, pb, _ := ondisk.DxEntry(buf, entOff, i-1)
			prevBlk = pb & ondisk.DxBlockMask
		}
		if i+1 < count {
			nh, _, _ := ondisk.DxEntry(buf, entOff, i+1)
			nextHash = nh &^ 1
		}
		refs.entries = append(refs.entries, dxEntryRef{index: i, blk: blk, hash: hash, prev: prevBlk, nextHash: nextHash})
		minHash = min(minHash, hash)
		maxHash = max(maxHash, hash)
	}
	if c.p2recording() {
		c.rec.record(event{kind: evDxRefs, dx: refs})
	} else {
		c.applyDxRefs(refs)
	}
	me := &dd.leaf[db.lblk]
	me.minHash = minHash
	me.maxHash = maxHash
}

// applyDxRefs records a node's index entries in its children's records.
func (c *Checker) applyDxRefs(r *dxNodeRefs) {
	dd := c.dx[r.dir]
	if dd == nil {
		return
	}
	for _, e := range r.entries {
		if e.blk >= uint32(len(dd.ref)) {
			continue
		}
		b := &dd.ref[e.blk]
		if b.flags&dxFlagReferenced != 0 {
			b.flags |= dxFlagDupRef
		} else {
			b.flags |= dxFlagReferenced
			b.parent = r.node
		}
		b.previous = e.prev
		b.nodeMinHash = e.hash
		if e.index+1 < r.count {
			b.nodeMaxHash = e.nextHash
		} else {
			b.nodeMaxHash = 0xfffffffe
			b.flags |= dxFlagLast
		}
		if e.index == 0 {
			b.flags |= dxFlagFirst
		}
	}
}

// clearHtree drops the index of a directory (answer yes) and schedules a
// rebuild.
func (w *dirWorker) clearHtree(dd *dxDirState, ino uint32) {
	dd.numBlocks = 0
	w.c.clearIndexFlag(ino)
	// parse_int_node's clear_and_exit: clear_htree, then
	// e2fsck_rehash_dir_later, which makes the list if there is none.
	w.c.setRehash(ino)
}

// checkHtrees runs the whole-tree htree checks after all blocks were seen.
func (c *Checker) checkHtrees(dx map[uint32]*dxDirState) {
	inos := make([]uint32, 0, len(dx))
	for ino := range dx {
		inos = append(inos, ino)
	}
	sort.Slice(inos, func(i, j int) bool { return inos[i] < inos[j] })
	for _, ino := range inos {
		d := dx[ino]
		if c.rehash[ino] || d.numBlocks == 0 {
			continue
		}
		blocks := make([]dxBlock, d.numBlocks)
		for b := range blocks {
			l, r := d.leaf[b], d.ref[b]
			blocks[b] = dxBlock{typ: l.typ, minHash: l.minHash, maxHash: l.maxHash, flags: r.flags,
				parent: r.parent, previous: r.previous, nodeMinHash: r.nodeMinHash, nodeMaxHash: r.nodeMaxHash}
		}
		root := &blocks[0]
		if root.typ == dxTypeRoot {
			root.flags |= dxFlagFirst | dxFlagLast
		}
		if root.flags&dxFlagReferenced != 0 {
			root.flags |= dxFlagDupRef
		} else {
			root.flags |= dxFlagReferenced
		}
		updateParents(blocks, dxTypeLeaf)
		updateParents(blocks, dxTypeNode)
		bad := false
		for b := range blocks {
			x := &blocks[b]
			p := problem.Problem{Dir: ino, BlkCount: int64(b), Group: x.parent}
			if x.flags&dxFlagFirst == 0 && x.minHash < x.nodeMinHash {
				q := p
				q.Code, q.Blk, q.Blk2 = problem.PR_2_HTREE_MIN_HASH, uint64(x.minHash), uint64(x.nodeMinHash)
				c.fix(q)
				bad = true
			}
			if x.typ == dxTypeLeaf {
				if depth := htreeDepth(blocks, b); depth != d.depth {
					q := p
					q.Code, q.Num = problem.PR_2_HTREE_BAD_DEPTH, uint64(d.depth)
					c.fix(q)
					bad = true
				}
			}
			if b > 0 && x.maxHash > x.nodeMaxHash {
				q := p
				q.Code, q.Blk, q.Blk2 = problem.PR_2_HTREE_MAX_HASH, uint64(x.maxHash), uint64(x.nodeMaxHash)
				c.fix(q)
				bad = true
			}
			if x.flags&dxFlagReferenced == 0 {
				c.fix(withCode(p, problem.PR_2_HTREE_NOTREF))
				bad = true
			} else if x.flags&dxFlagDupRef != 0 {
				c.fix(withCode(p, problem.PR_2_HTREE_DUPREF))
				bad = true
			}
		}
		if bad {
			if c.fix(problem.Problem{Code: problem.PR_2_HTREE_CLEAR, Dir: ino}) && c.repairing() {
				c.clearIndexFlag(ino)
				c.rehashCleared(ino)
				d.numBlocks = 0
			}
		}
	}
}

func updateParents(blocks []dxBlock, typ uint8) {
	for b := range blocks {
		x := &blocks[b]
		if x.typ != typ || int(x.parent) >= len(blocks) {
			continue
		}
		parent := &blocks[x.parent]
		if x.flags&dxFlagFirst != 0 {
			parent.minHash = x.minHash
			if parent.previous != 0 && int(parent.previous) < len(blocks) {
				blocks[parent.previous].nodeMaxHash = parent.minHash
			}
		}
		if x.flags&dxFlagLast != 0 {
			parent.maxHash = x.maxHash
		}
	}
}

func htreeDepth(blocks []dxBlock, b int) int {
	depth := 0
	for blocks[b].typ != dxTypeRoot && depth < 32000 {
		b = int(blocks[b].parent)
		if b >= len(blocks) {
			break
		}
		depth++
	}
	return depth
}

// dirHasTail is ext2fs_dirent_has_tail: false only when the entries end
// exactly at the tail position and what is there is not a tail.
func dirHasTail(blockSize int, buf []byte) bool {
	return direntTail(blockSize, buf) != tailNoSpace
}

const (
	tailOK = iota
	tailCorrupt
	tailNoSpace
)

// direntTail walks the entries to the tail position (__get_dirent_tail).
func direntTail(blockSize int, buf []byte) int {
	top := blockSize - ondisk.DirTailSize
	off := 0
	for off < top {
		rl := ondisk.DirentRecLen(buf, off, blockSize)
		if rl < 8 || rl&3 != 0 {
			return tailCorrupt
		}
		off += rl
	}
	if off > blockSize {
		return tailCorrupt
	}
	if off != top {
		return tailNoSpace
	}
	if _, ok := ondisk.DirTail(buf[:blockSize]); !ok {
		return tailNoSpace
	}
	return tailOK
}

// dirBlockCsumOK is ext2fs_dir_block_csum_verify.
func dirBlockCsumOK(blockSize int, buf []byte, seed, ino, gen uint32) bool {
	if direntTail(blockSize, buf) == tailOK {
		stored, _ := ondisk.DirTail(buf[:blockSize])
		return ondisk.DirLeafChecksum(buf[:blockSize], seed, ino, gen) == stored
	}
	countOff, ok := dxCountOffset(blockSize, buf)
	if !ok {
		return false
	}
	limit, count, _ := ondisk.DxCountLimit(buf, countOff)
	sum, stored, ok := ondisk.DxChecksum(buf[:blockSize], countOff, limit, count, seed, ino, gen)
	return ok && sum == stored
}

// dxCountOffset is __get_dx_countlimit: where the count/limit of an htree
// root or node lives, if the block is one.
func dxCountOffset(blockSize int, buf []byte) (int, bool) {
	d, _ := ondisk.DecodeDirent(buf, 0, blockSize)
	var off int
	switch {
	case d.RecLen == blockSize && d.NameLen == 0:
		off = ondisk.DxNodeCountOff
	case d.RecLen == 12:
		d2, ok := ondisk.DecodeDirent(buf, 12, blockSize)
		if !ok || d2.RecLen != blockSize-12 || d2.NameLen != 2 {
			return 0, false
		}
		root, _ := ondisk.DecodeDxRootInfo(buf)
		if root.ReservedZero != 0 || root.InfoLength != 8 {
			return 0, false
		}
		off = ondisk.DxRootInfoOff + ondisk.DxRootInfoSize
	default:
		return 0, false
	}
	limit, count, ok := ondisk.DxCountLimit(buf, off)
	maxSane := (blockSize - off) / ondisk.DxEntrySize
	if !ok || limit > maxSane || count > maxSane {
		return 0, false
	}
	return off, true
}

// dirBlockCmp is e2fsck's order of the directory block list: with
// dir_index, special_dir_block_cmp (first blocks of directories first),
// else the library's dir_block_cmp2; then by block, inode and logical
// block, each difference cast to int as C's (int)(a - b) does.
func dirBlockCmp(firstBlocksFirst bool) func(a, b *dirBlock) int {
	return func(a, b *dirBlock) int {
		if firstBlocksFirst {
			switch {
			case a.lblk != 0 && b.lblk == 0:
				return 1
			case a.lblk == 0 && b.lblk != 0:
				return -1
			}
		}
		if a.blk != b.blk {
			return int(int32(uint32(a.blk - b.blk)))
		}
		if a.ino != b.ino {
			return int(int32(a.ino - b.ino))
		}
		return int(int32(a.lblk - b.lblk))
	}
}
