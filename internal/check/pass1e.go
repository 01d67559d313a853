package check

import (
	"encoding/binary"

	"gofsck/internal/bitmap"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Pass 1E: extent trees that could be shallower or narrower are rebuilt
// (e2fsck's e2fsck_should_rebuild_extents and rebuild_extents).
//
// gofsck rebuilds a tree whose extents, once merged, fit in the inode
// itself (at most four): the tree's index blocks are freed and the
// extents written into i_block. A bigger rebuild (new tree blocks) is not
// implemented: the run then stops before the question is printed, as for
// any fix gofsck does not make.

func init() {
	canRepair(problem.PR_1E_CAN_COLLAPSE_EXTENT_TREE, problem.PR_1E_CAN_NARROW_EXTENT_TREE,
		problem.PR_1_EXTENT_BAD_MAX_DEPTH)
}

// extSeg is one extent of a rebuild list.
type extSeg struct {
	lblk, pblk uint64
	len        uint64
	uninit     bool
}

// askRebuildExtents asks code (level lvl) about the inode of x and queues
// it for pass 1E on "yes".
func (c *Checker) askRebuildExtents(x *extentScan, code problem.Code, lvl int) {
	w := x.w
	p := problem.Problem{Code: code, Ino: w.ino, Blk: uint64(lvl), Inode: c.inodeInfo(w.n)}
	queued := c.rebuildQueued(w.ino)
	if queued && c.willAnswerYes(p) {
		if _, _, ok := c.loadExtents(w.n, false, false); !ok {
			c.p1Unsupported(code)
			return
		}
	}
	if c.fix(p) && queued {
		c.p1.rebuild.Set(uint64(w.ino))
	}
}

// rebuildQueued reports whether a "yes" to rebuilding ino's extent tree
// queues it for pass 1E (e2fsck_rebuild_extents_later).
func (c *Checker) rebuildQueued(ino uint32) bool {
	return c.repairing() && c.p1.rebuild != nil && c.sb.HasIncompat(ondisk.IncompatExtents) &&
		(ino == ondisk.RootIno || ino >= c.fs.FirstIno)
}

// willAnswerYes reports whether the sink will answer p yes (unknown
// answers count as yes). A stopped run (preen halt, abort) answers no.
func (c *Checker) willAnswerYes(p problem.Problem) bool {
	var s any = c.sink
	if c.rec != nil {
		switch {
		case c.rec.direct != nil:
			s = c.rec.direct
		case c.rec.answer != nil:
			return c.rec.answer.Answer(p)
		}
	}
	if a, ok := s.(Answerer); ok {
		return a.Answer(p)
	}
	return !c.sink.Aborted()
}

// p1Unsupported stops the run at a fix gofsck does not make, before its
// question is printed.
func (c *Checker) p1Unsupported(code problem.Code) {
	s := c.sink
	if c.rec != nil && c.rec.direct != nil {
		s = c.rec.direct
	}
	if u, ok := s.(unsupportedFixer); ok {
		u.Unsupported(code)
	}
	c.abort = true
}

// loadExtents is load_extents over inode n's tree: its leaf extents in
// order, merged where they continue each other, and its index blocks
// (freed when free is set, as the library's walk does). ok is false when
// the tree cannot be walked or the extents would not fit in the inode.
//
// With lenient (a forecast made before pass 1 fixes the tree), index
// entries and nodes that pass 1 would delete are left out instead.
func (c *Checker) loadExtents(n ondisk.Inode, free, lenient bool) (list []extSeg, index []uint64, ok bool) {
	f := c.fs
	var walk func(h ondisk.ExtentHeader, depth int) bool
	walk = func(h ondisk.ExtentHeader, depth int) bool {
		if h.Verify() != nil || depth > 8 {
			return false
		}
		for i := 0; i < int(h.Entries()); i++ {
			if h.Depth() == 0 {
				e := h.Leaf(i)
				seg := extSeg{lblk: uint64(e.Lblk), pblk: e.Pblk, len: uint64(e.Len), uninit: e.Uninit}
				if k := len(list); k > 0 {
					last := &list[k-1]
					if last.pblk+last.len == seg.pblk && last.lblk+last.len == seg.lblk &&
						last.uninit == seg.uninit && last.len+seg.len < 1<<32 {
						last.len += seg.len
						continue
					}
				}
				list = append(list, seg)
				if len(list) > 64 {
					return false
				}
				continue
			}
			blk := h.Idx(i).Leaf
			if blk < f.FirstDataBlock || blk >= f.BlocksCount || len(index) > 64 {
				if lenient && len(index) <= 64 {
					continue
				}
				return false
			}
			buf := make([]byte, f.BlockSize)
			if err := f.ReadBlock(blk, buf); err != nil || ondisk.ExtentHeader(buf).Verify() != nil {
				if lenient {
					continue
				}
				return false
			}
			index = append(index, blk)
			if !walk(ondisk.ExtentHeader(buf), depth+1) {
				return false
			}
		}
		return true
	}
	if !walk(ondisk.ExtentHeader(n.IBlock()), 0) {
		return nil, nil, false
	}
	// Written back in pieces of at most the largest extent length.
	pieces := 0
	for _, s := range list {
		max := uint64(32768)
		if s.uninit {
			max = 32767
		}
		pieces += int((s.len + max - 1) / max)
	}
	if pieces > 4 {
		return nil, nil, false
	}
	if free {
		for _, b := range index {
			c.blockAllocStatsFree(b)
		}
	}
	return list, index, true
}

// pass1E rebuilds the queued extent trees.
func (c *Checker) pass1E() {
	if c.p1.rebuild == nil || c.invalidBitmaps || !c.sb.HasIncompat(ondisk.IncompatExtents) {
		return
	}
	f := c.fs
	first := true
	buf := make([]byte, f.InodeSize)
	scratch := make([]byte, f.BlockSize)
	for ino := c.p1.rebuild.NextSet(1); ino <= uint64(f.InodesCount); ino = c.p1.rebuild.NextSet(ino + 1) {
		if first {
			c.sink.Header(problem.PR_1E_PASS_HEADER)
			first = false
		}
		if f.ReadInode(uint32(ino), buf, scratch) != nil {
			continue
		}
		n := ondisk.Inode(buf)
		if n.LinksCount() == 0 || n.Flags()&ondisk.FlagInlineData != 0 || n.Flags()&ondisk.FlagExtents == 0 {
			continue
		}
		list, index, ok := c.loadExtents(n, true, false)
		if !ok {
			c.p1Unsupported(problem.PR_1E_CAN_COLLAPSE_EXTENT_TREE)
			return
		}
		c.rewriteExtents(uint32(ino), n, list, uint64(len(index)))
	}
}

// rewriteExtents is rewrite_extent_replay for a list that fits in the
// inode: the index blocks' sectors leave i_blocks and the quota, and the
// extents are written into a fresh root.
func (c *Checker) rewriteExtents(ino uint32, n ondisk.Inode, list []extSeg, freed uint64) {
	f := c.fs
	n.SetFlags(n.Flags() &^ ondisk.FlagExtents)
	clear(n.IBlock())
	c.chargeQuota(ino, n, uint64(-int64(freed*uint64(f.BlockSize))), 0)
	huge := c.sb.HasRoCompat(ondisk.RoCompatHugeFile)
	b := uint64(n.BlocksLo())
	if huge {
		b |= uint64(n.BlocksHi()) << 32
	}
	sub := freed
	if !huge || n.Flags()&ondisk.FlagHugeFile == 0 {
		sub *= uint64(f.BlockSize / 512)
	}
	sub <<= f.ClusterBits
	if sub <= b {
		b -= sub
		binary.LittleEndian.PutUint32(n[0x1C:], uint32(b))
		if huge {
			binary.LittleEndian.PutUint16(n[0x74:], uint16(b>>32))
		}
	}
	ib := n.IBlock()
	binary.LittleEndian.PutUint16(ib[0:], 0xF30A)
	binary.LittleEndian.PutUint16(ib[4:], 4) // eh_max
	k := 0
	for _, s := range list {
		for s.len > 0 {
			max := uint64(32768)
			if s.uninit {
				max = 32767
			}
			l := min(s.len, max)
			e := ib[ondisk.ExtentHeaderSize+k*ondisk.ExtentEntrySize:]
			binary.LittleEndian.PutUint32(e[0:], uint32(s.lblk))
			ln := uint16(l)
			if s.uninit {
				ln += 32768
			}
			binary.LittleEndian.PutUint16(e[4:], ln)
			binary.LittleEndian.PutUint16(e[6:], uint16(s.pblk>>32))
			binary.LittleEndian.PutUint32(e[8:], uint32(s.pblk))
			k++
			s.lblk += l
			s.pblk += l
			s.len -= l
		}
	}
	binary.LittleEndian.PutUint16(ib[2:], uint16(k))
	n.SetFlags(n.Flags() | ondisk.FlagExtents)
	c.writeInode(ino, n)
}

// newRebuildMap returns the map of inodes queued for pass 1E.
func newRebuildMap(n uint64) *bitmap.Bitmap { return bitmap.New(n) }
