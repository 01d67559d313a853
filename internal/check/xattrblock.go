package check

import (
	"sort"
	"sync"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// xattrSizeMax is the largest EA value the format allows.
const xattrSizeMax = 1 << 24

// eaEntry is the validation of one EA block, done once by whichever worker
// meets it first; its problems are printed (at replay, in e2fsck's order)
// for the first inode referring to it.
type eaEntry struct {
	once     sync.Once
	problems []problem.Problem // recorded with the validating inode; patched at replay
	quota    uint64            // blocks charged to each referring inode
	stored   bool              // no fix cleared the reference: later references count
	cleared  bool              // a fix cleared the reference (clear_extattr)
	refcount uint32            // h_refcount
}

// checkExtAttr handles the inode's EA block (e2fsck's check_ext_attr). It
// returns the blocks charged to the inode for it (the block's cluster plus
// the EA inodes its entries refer to), 0 when none.
func (c *Checker) checkExtAttr(s *inodeScratch, ino uint32, n ondisk.Inode) uint64 {
	f := c.fs
	sb := c.sb
	blk := n.FileACL(sb.Is64bit())
	if blk == 0 {
		return 0
	}
	if !sb.HasCompat(ondisk.CompatExtAttr) || blk < f.FirstDataBlock || blk >= f.BlocksCount {
		c.inodeBad.Set(uint64(ino))
		return 0
	}
	c.shared.mu.Lock()
	e := c.shared.eaCache[blk]
	if e == nil {
		e = &eaEntry{}
		c.shared.eaCache[blk] = e
	}
	c.shared.mu.Unlock()
	e.once.Do(func() { c.validateEABlock(e, s, ino, n, blk) })
	info := c.inodeInfo(n)
	if c.rec != nil && c.rec.direct == nil {
		c.rec.record(event{kind: evEARef, ino: ino, blk: blk, p: problem.Problem{Inode: info}})
	} else {
		c.replayEARef(ino, blk, info)
	}
	if e.stored {
		return e.quota
	}
	if c.repairing() && e.cleared {
		// clear_extattr: the inode loses its EA block. Every inode
		// naming a block that a fix rejected loses it, as e2fsck
		// validates the block again for each of them.
		n.SetFileACL(0)
		c.putInode(ino, n)
	}
	return 0
}

// writeEABlock writes EA block blk from buf with its checksum recomputed
// (ext2fs_write_ext_attr3).
func (c *Checker) writeEABlock(blk uint64, buf []byte) {
	if c.fs.MetadataCsum {
		ondisk.XattrBlock(buf).SetChecksum(c.fs.CsumSeed, blk)
	}
	c.writeBlock(blk, buf)
}

// replayEARef applies one reference to an EA block in e2fsck's order: the
// first reference prints the block's problems, later ones count.
func (c *Checker) replayEARef(ino uint32, blk uint64, info *problem.InodeInfo) {
	if r := c.eaSeen[blk]; r != nil {
		if r.remaining > 0 {
			r.remaining--
		} else {
			r.extra++
		}
		return
	}
	c.shared.mu.Lock()
	e := c.shared.eaCache[blk]
	c.shared.mu.Unlock()
	for _, p := range e.problems {
		p.Ino, p.Inode = ino, info
		c.sink.Fix(p)
	}
	if e.stored {
		// h_refcount - 1 in 32 bits, as e2fsck stores it.
		c.eaSeen[blk] = &eaBlockRef{remaining: e.refcount - 1, orig: e.refcount, quota: e.quota}
	}
}

// validateEABlock checks an EA block the first time any inode refers to it
// and records the problems (with their answers) in e.
func (c *Checker) validateEABlock(e *eaEntry, s *inodeScratch, ino uint32, n ondisk.Inode, blk uint64) {
	v := c
	var capture *recSink
	if a := c.answerer(); a != nil {
		capture = &recSink{answer: a}
		v = c.shard(capture)
	}
	quota, stored, refcount := v.validateEA(s, ino, n, blk)
	e.quota, e.stored, e.refcount = quota, stored, refcount
	e.cleared = !stored
	if capture != nil {
		for _, ev := range capture.events {
			switch ev.kind {
			case evFix:
				e.problems = append(e.problems, ev.p)
			case evWrite:
				// A fix of the block itself (its checksum), made once.
				c.writeAt(int64(ev.blk), ev.data)
			}
		}
	}
}

// validateEA is e2fsck's validation of an EA block. It returns the blocks
// charged per referring inode, whether the block is kept (no fix cleared
// the reference) and its h_refcount.
func (c *Checker) validateEA(s *inodeScratch, ino uint32, n ondisk.Inode, blk uint64) (_ uint64, stored bool, _ uint32) {
	f := c.fs
	var refs []uint32 // EA inodes counted as referenced
	defer func() {
		if !stored {
			// clear_extattr: the block's EA inodes are not referenced.
			c.dropEAInodeRefs(refs)
		}
	}()
	quota := uint64(1) << f.ClusterBits
	p := problem.Problem{Ino: ino, Blk: blk, Inode: c.inodeInfo(n)}
	ask := func(code problem.Code) bool {
		q := p
		q.Code = code
		return c.fix(q)
	}
	buf := s.blk
	readErr := c.readBlockIO(s, blk, buf)
	x := ondisk.XattrBlock(buf)
	headerOK := readErr == nil && (x.Magic() == ondisk.XattrMagic || x.Magic() == ondisk.XattrMagicV1) && x.Blocks() == 1
	failedCsum := false
	if readErr == nil && headerOK && f.MetadataCsum && x.ComputeChecksum(f.CsumSeed, blk) != x.Checksum() {
		failedCsum = true
	}
	if readErr != nil {
		if ask(problem.PR_1_READ_EA_BLOCK) {
			return 0, false, 0
		}
		clear(buf)
	}
	if x.Magic() != ondisk.XattrMagic {
		if ask(problem.PR_1_BAD_EA_BLOCK) {
			return 0, false, 0
		}
	}
	if x.Blocks() != 1 {
		if ask(problem.PR_1_EA_MULTI_BLOCK) {
			return 0, false, 0
		}
	}
	if readErr != nil && ask(problem.PR_1_READ_EA_BLOCK) {
		return 0, false, 0 // e2fsck asks a second time here
	}
	used := regions{max: f.BlockSize}
	used.add(0, ondisk.XattrHeaderSize)
	off := ondisk.XattrHeaderSize
	for off+4 <= len(buf) && !ondisk.XattrEndAt(buf, off) {
		nameLen := int(buf[off])
		if off+ondisk.XattrEntrySize > len(buf) || !used.add(off, ondisk.XattrEntryLen(nameLen)) {
			if ask(problem.PR_1_EA_ALLOC_COLLISION) {
				return 0, false, 0
			}
			break
		}
		e, _, ok := ondisk.DecodeXattrEntry(buf, off)
		if !ok {
			if ask(problem.PR_1_EA_ALLOC_COLLISION) {
				return 0, false, 0
			}
			break
		}
		if e.NameIndex == 0 {
			if ask(problem.PR_1_EA_BAD_NAME) {
				return 0, false, 0
			}
			break
		}
		if e.ValueInum == 0 {
			if e.ValueSize > xattrSizeMax || e.ValueOffs+int(e.ValueSize) > f.BlockSize {
				if ask(problem.PR_1_EA_BAD_VALUE) {
					return 0, false, 0
				}
				break
			}
			if e.ValueSize != 0 && !used.add(e.ValueOffs, (int(e.ValueSize)+3)&^3) {
				if ask(problem.PR_1_EA_ALLOC_COLLISION) {
					return 0, false, 0
				}
			}
			// Hashed in whole words, the padding as it is on disk.
			value := buf[e.ValueOffs:min(len(buf), e.ValueOffs+(int(e.ValueSize)+3)&^3)]
			if !ext2fs.EAHashMatches(e, value) {
				q := p
				q.Code, q.Num = problem.PR_1_ATTR_HASH, uint64(e.Hash)
				if c.fix(q) {
					return 0, false, 0
				}
			}
		} else {
			if e.ValueInum >= f.FirstIno && e.ValueInum <= f.InodesCount {
				refs = append(refs, e.ValueInum)
			}
			q0, code, num := c.checkEAInodeRef(ino, e)
			if code != 0 {
				q := p
				q.Code, q.Num = code, num
				if c.fix(q) {
					return 0, false, 0
				}
			}
			quota += q0
		}
		off += e.EntryBytes
	}
	if !used.add(off, 4) {
		if ask(problem.PR_1_EA_ALLOC_COLLISION) {
			return 0, false, 0
		}
	}
	if failedCsum && ask(problem.PR_1_EA_BLOCK_ONLY_CSUM_INVALID) {
		c.writeEABlock(blk, buf)
	}
	c.markBlockUsed(blk)
	return quota, true, x.Refcount()
}

// checkEARefcounts reports EA blocks whose h_refcount disagrees with the
// number of inodes referring to them (end of pass 1).
func (c *Checker) checkEARefcounts() {
	blks := make([]uint64, 0, len(c.eaSeen))
	for b := range c.eaSeen {
		blks = append(blks, b)
	}
	sort.Slice(blks, func(i, j int) bool { return blks[i] < blks[j] })
	buf := make([]byte, c.fs.BlockSize)
	// Like e2fsck, each block is read again (with its checksum verified)
	// before its count is reported; a block that cannot be read stops the
	// run (PR_1_EXTATTR_READ_ABORT is fatal).
	readable := func(b uint64) bool {
		if err := ext2fs.ReadExtAttr(c.fs, b, buf); err != nil {
			c.fix(problem.Problem{Code: problem.PR_1_EXTATTR_READ_ABORT, Blk: b, Err: err.Error()})
			return false
		}
		return true
	}
	for _, b := range blks {
		r := c.eaSeen[b]
		if r.extra != 0 {
			if !readable(b) {
				return
			}
			c.fixEARefcount(b, buf, problem.Problem{Code: problem.PR_1_EXTATTR_REFCOUNT, Blk: b, BlkCount: int64(r.orig), Num: uint64(r.orig) + uint64(r.extra)})
		}
	}
	for _, b := range blks {
		r := c.eaSeen[b]
		if r.remaining != 0 {
			if !readable(b) {
				return
			}
			c.fixEARefcount(b, buf, problem.Problem{Code: problem.PR_1_EXTATTR_REFCOUNT, Blk: b, BlkCount: int64(r.orig), Num: uint64(int64(r.orig) - int64(int32(r.remaining)))})
		}
	}
}

// fixEARefcount asks p (PR_1_EXTATTR_REFCOUNT) about EA block b, read in
// buf, and on "yes" stores the count in h_refcount.
func (c *Checker) fixEARefcount(b uint64, buf []byte, p problem.Problem) {
	if c.fix(p) {
		ondisk.XattrBlock(buf).SetRefcount(uint32(p.Num))
		c.writeEABlock(b, buf)
	}
}

// handleHtree checks an INDEX_FL inode's htree root (pass 1). It returns
// true when the index flag should be cleared (the dir is then linear).
func (c *Checker) handleHtree(s *inodeScratch, ino uint32, n ondisk.Inode) bool {
	f := c.fs
	sb := c.sb
	p := problem.Problem{Ino: ino, Inode: c.inodeInfo(n)}
	ask := func(code problem.Code, num uint64) bool {
		q := p
		q.Code, q.Num = code, num
		return c.fix(q)
	}
	if !n.IsDir() && ask(problem.PR_1_HTREE_NODIR, 0) {
		return true
	}
	if !sb.HasCompat(ondisk.CompatDirIndex) && ask(problem.PR_1_HTREE_SET, 0) {
		return true
	}
	s.root = ondisk.DxRootInfo{}
	blk, ok := c.mapBlock(s, n, 0)
	if !ok || blk == 0 || blk < f.FirstDataBlock || blk >= f.BlocksCount {
		return ask(problem.PR_1_HTREE_BADROOT, 0)
	}
	buf := s.blk2
	if c.readBlockIO(s, blk, buf) != nil && ask(problem.PR_1_HTREE_BADROOT, 0) {
		return true
	}
	root, _ := ondisk.DecodeDxRootInfo(buf)
	s.root = root
	if (root.ReservedZero != 0 || root.InfoLength < 8) && ask(problem.PR_1_HTREE_BADROOT, 0) {
		return true
	}
	hv := root.HashVersion
	if hv != 0 && hv != 1 && hv != 2 && hv != 6 && ask(problem.PR_1_HTREE_HASHV, uint64(hv)) {
		return true
	}
	inDirent := n.Flags()&ondisk.FlagEncrypt != 0 && n.Flags()&ondisk.FlagCasefold != 0
	if inDirent {
		if hv != 6 && ask(problem.PR_1_HTREE_NEEDS_SIPHASH, uint64(hv)) {
			return true
		}
	} else if hv == 6 && ask(problem.PR_1_HTREE_CANNOT_SIPHASH, uint64(hv)) {
		return true
	}
	if root.UnusedFlags&1 != 0 && ask(problem.PR_1_HTREE_INCOMPAT, 0) {
		return true
	}
	levels := uint64(root.IndirectLevels)
	if levels > 3 && ask(problem.PR_1_HTREE_DEPTH, levels) {
		return true
	}
	maxLevel := uint64(2)
	if sb.HasIncompat(ondisk.IncompatLargeDir) {
		maxLevel = 3
	}
	if levels > maxLevel && !sb.HasIncompat(ondisk.IncompatLargeDir) {
		blockbits := uint(f.BlockBits) + 10
		idxPB := uint64(1) << (blockbits - 3)
		limit := (idxPB - 1) * (idxPB - 2)
		if n.Size() < limit<<blockbits && uint64(n.BlocksLo()) < limit<<(blockbits-9) && ask(problem.PR_1_HTREE_DEPTH, levels) {
			return true
		}
	}
	if levels > 2 || n.Size() >= 1<<31 {
		c.stats.LargeDirs++ // needs large_dir (checked at the end of pass 1)
	}
	return false
}

// mapBlock returns the physical block of logical block lblk of an inode
// (0 for a hole), walking at most the tree depth the format allows.
func (c *Checker) mapBlock(s *inodeScratch, n ondisk.Inode, lblk uint32) (uint64, bool) {
	f := c.fs
	if n.Flags()&ondisk.FlagExtents != 0 {
		h := ondisk.ExtentHeader(n.IBlock())
		buf := s.blk
		for depth := 0; depth < 8; depth++ {
			if h.Verify() != nil {
				return 0, false
			}
			if h.Depth() == 0 {
				for i := 0; i < int(h.Entries()); i++ {
					e := h.Leaf(i)
					if lblk >= e.Lblk && uint64(lblk) < uint64(e.Lblk)+uint64(e.Len) {
						return e.Pblk + uint64(lblk-e.Lblk), true
					}
				}
				return 0, true
			}
			var next uint64
			found := false
			for i := 0; i < int(h.Entries()); i++ {
				e := h.Idx(i)
				if e.Lblk > lblk {
					break
				}
				next, found = e.Leaf, true
			}
			if !found {
				return 0, true
			}
			if f.ReadBlock(next, buf) != nil {
				return 0, false
			}
			h = ondisk.ExtentHeader(buf)
		}
		return 0, false
	}
	if lblk < 12 {
		return uint64(n.Block(int(lblk))), true
	}
	per := uint32(f.BlockSize / 4)
	l := lblk - 12
	if l < per {
		ind := uint64(n.Block(12))
		if ind == 0 {
			return 0, true
		}
		if f.ReadBlock(ind, s.blk) != nil {
			return 0, false
		}
		return uint64(ondisk.MapBlock(s.blk).Ptr(int(l))), true
	}
	return 0, false
}
