package check

import (
	"sort"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// dupInode is an inode holding multiply-claimed clusters (pass 1B).
type dupInode struct {
	ino      uint32
	dir      uint32 // containing directory found in pass 1C
	inode    []byte
	clusters []uint64 // in discovery order
	numDup   uint64
}

// dupCluster lists the inodes claiming one cluster.
type dupCluster struct {
	numBad int
	inodes []uint32 // in discovery order
}

// passDup runs passes 1B, 1C and 1D: find who claims each duplicated
// cluster, find the files' names, and report each file.
func (c *Checker) passDup() {
	f := c.fs
	c.sink.Header(problem.PR_1B_PASS_HEADER)
	inodes := map[uint32]*dupInode{}
	clusters := map[uint64]*dupCluster{}
	var order []uint32
	dupInodeCount := 0
	s := c.newScratch()
	ipg := f.InodesPerGroup
	buf := make([]byte, f.BlockSize)
	for g := uint32(0); g < f.Groups; g++ {
		gd := f.Group(g)
		limit := ipg
		if c.skipUninit {
			if gd.Flags()&ondisk.BgInodeUninit != 0 {
				continue
			}
			limit = ipg - min(gd.ItableUnused(), ipg) // as the inode scan
		}
		bufBlk := ^uint64(0)
		for idx := uint32(1); idx <= limit; idx++ {
			ino := g*ipg + idx
			used := ino == ondisk.BadBlocksIno || c.inodeUsed.Test(uint64(ino))
			if !used && !f.MetadataCsum {
				continue
			}
			blk, off, ok := f.InodeLoc(ino)
			if !ok {
				continue
			}
			if blk != bufBlk {
				if f.ReadBlock(blk, buf) != nil {
					bufBlk = ^uint64(0)
					continue
				}
				bufBlk = blk
			}
			raw := ondisk.Inode(buf[off : off+f.InodeSize])
			if f.MetadataCsum && !raw.ChecksumValid(f.CsumSeed, ino) {
				// Pass 1B's inode scan verifies every inode's checksum
				// (used or not) and stops the run at the first that
				// fails: one pass 1 reported and was not allowed to fix.
				c.fix(problem.Problem{Code: problem.PR_1B_ISCAN_ERROR, Ino: ino, Err: string(ext2fs.ErrInodeCsumInvalid)})
				c.abort = true
				return
			}
			if !used {
				continue
			}
			n := append(ondisk.Inode(nil), raw...)
			var cur struct {
				lastBlk       uint64
				lo, hi        uint64
				dupBlocks     int
				curCl, physCl uint64
			}
			cur.curCl, cur.physCl = ^uint64(0), ^uint64(0)
			visit := func(b uint64, blockcnt int64) {
				if b == 0 {
					return
				}
				lc := uint64(blockcnt) >> f.ClusterBits
				pc := f.ClusterOf(b)
				if c.dupMapOutOfRange(b) {
					c.dupMapRangeWarning(b)
				} else if c.blockDup.Test(pc) {
					if ino != ondisk.BadBlocksIno {
						if cur.lastBlk+1 != b {
							if cur.lastBlk != 0 {
								c.reportDupRun(ino, cur.lo, cur.hi)
							}
							cur.lo = b
						}
						cur.hi = b
						cur.lastBlk = b
					}
					cur.dupBlocks++
					if blockcnt < 0 || lc != cur.curCl || pc != cur.physCl {
						di := inodes[ino]
						if di == nil {
							di = &dupInode{ino: ino, inode: n}
							if ino == ondisk.RootIno {
								di.dir = ondisk.RootIno
							}
							inodes[ino] = di
							order = append(order, ino)
						}
						di.clusters = append(di.clusters, pc)
						di.numDup++
						dc := clusters[pc]
						if dc == nil {
							dc = &dupCluster{}
							clusters[pc] = dc
						}
						dc.inodes = append(dc.inodes, ino)
						dc.numBad++
					}
				}
				cur.curCl, cur.physCl = lc, pc
			}
			var iterErr string
			if c.hasValidBlocks(n) || ino == ondisk.BadBlocksIno {
				iterErr = c.iterateBlocksErr(s, ino, n, visit)
			}
			if c.sb.HasCompat(ondisk.CompatExtAttr) {
				if acl := n.FileACL(c.sb.Is64bit()); acl != 0 {
					visit(acl, -5)
				}
			}
			if cur.dupBlocks > 0 {
				if ino != ondisk.BadBlocksIno {
					c.reportDupRun(ino, cur.lo, cur.hi)
				}
				c.sink.EndLatch(problem.LatchDBlock)
				if ino >= f.FirstIno || ino == ondisk.RootIno {
					dupInodeCount++
				}
			}
			if iterErr != "" {
				c.fix(problem.Problem{Code: problem.PR_1B_BLOCK_ITERATE, Ino: ino, Str: "pass1b", Err: iterErr})
			}
		}
	}

	// Pass 1C: find a directory naming each affected inode.
	c.sink.Header(problem.PR_1C_PASS_HEADER)
	need := 0
	for _, di := range inodes {
		if di.dir == 0 {
			need++
		}
	}
	if need > 0 {
		sorted := append([]dirBlock(nil), c.dblist...)
		sort.Slice(sorted, func(i, j int) bool {
			a, b := sorted[i], sorted[j]
			if a.blk != b.blk {
				return a.blk < b.blk
			}
			if a.ino != b.ino {
				return a.ino < b.ino
			}
			return a.lblk < b.lblk
		})
		c.pass1CSearch(sorted, inodes, need)
	}

	// Pass 1D: report each file.
	c.sink.Header(problem.PR_1D_PASS_HEADER)
	c.fix(problem.Problem{Code: problem.PR_1D_NUM_DUP_INODES, Num: uint64(dupInodeCount)})
	sortU32(order)
	metaData := false // e2fsck never resets this between files
	for _, ino := range order {
		if ino == ondisk.BadBlocksIno || ino == ondisk.ResizeIno {
			continue
		}
		di := inodes[ino]
		var shared []uint32
		fileOK := true
		for k := len(di.clusters) - 1; k >= 0; k-- {
			cl := di.clusters[k]
			dc := clusters[cl]
			if dc.numBad > 1 {
				fileOK = false
			}
			if c.blockMeta.Test(cl) {
				fileOK = false
				metaData = true
			}
			for r := len(dc.inodes) - 1; r >= 0; r-- {
				other := dc.inodes[r]
				if other == ino {
					continue
				}
				found := false
				for _, x := range shared {
					if x == other {
						found = true
						break
					}
				}
				if !found {
					shared = append(shared, other)
				}
			}
		}
		num := uint64(len(shared))
		if metaData {
			num++
		}
		n := ondisk.Inode(di.inode)
		c.fix(problem.Problem{Code: problem.PR_1D_DUP_FILE, Ino: ino, Dir: di.dir, BlkCount: int64(di.numDup), Num: num, Inode: c.inodeInfo(n)})
		if metaData {
			c.fix(problem.Problem{Code: problem.PR_1D_SHARE_METADATA, Ino: ino, Dir: di.dir, Inode: c.inodeInfo(n)})
		}
		for _, o := range shared {
			t := inodes[o]
			if t == nil {
				continue
			}
			c.fix(problem.Problem{Code: problem.PR_1D_DUP_FILE_LIST, Ino: o, Dir: t.dir, Inode: c.inodeInfo(ondisk.Inode(t.inode))})
		}
		if fileOK && num != 0 {
			c.fix(problem.Problem{Code: problem.PR_1D_DUP_BLOCKS_DEALT, Ino: ino, Dir: di.dir, Inode: c.inodeInfo(n)})
			continue
		}
		p := problem.Problem{Ino: ino, Dir: di.dir, Inode: c.inodeInfo(n)}
		p.Code = problem.PR_1D_CLONE_QUESTION
		if c.fix(p) {
			if !c.repairing() {
				continue
			}
			err := c.cloneFile(di, inodes, clusters)
			if err == "" {
				continue
			}
			if c.sink.Aborted() {
				return
			}
			q := p
			q.Code = problem.PR_1D_CLONE_ERROR
			q.Err = err
			c.fix(q)
		}
		p.Code = problem.PR_1D_DELETE_QUESTION
		if c.fix(p) && c.repairing() {
			c.deleteDupFile(di, clusters)
		}
	}
}

// reportDupRun prints one block or run of an inode's duplicate list.
func (c *Checker) reportDupRun(ino uint32, lo, hi uint64) {
	code := problem.PR_1B_DUP_RANGE
	if lo == hi {
		code = problem.PR_1B_DUP_BLOCK
	}
	c.fix(problem.Problem{Code: code, Ino: ino, Blk: lo, Blk2: hi})
}

// iterateBlocks visits every block of an inode the way the library's block
// iterator does for pass 1B: metadata blocks (blockcnt < 0) before the
// blocks they map, data blocks with their logical number. Bounded by the
// tree shapes the format allows.
func (c *Checker) iterateBlocks(s *inodeScratch, n ondisk.Inode, visit func(b uint64, blockcnt int64)) {
	c.iterateBlocksErr(s, 0, n, visit)
}

// iterateBlocksErr is iterateBlocks returning the error that
// ext2fs_block_iterate3 returns ("" for none): a block-mapped inode's
// mapping block out of range, or, given the inode's number (ino != 0) on
// a metadata_csum filesystem, an extent block whose checksum does not
// match (the library's step down into it fails, which ends the walk after
// the index entry naming it). A mapping block that cannot be read maps
// nothing (zeroedReads), nor does an extent node that cannot be followed
// (BlockFlagSkipBadNode).
func (c *Checker) iterateBlocksErr(s *inodeScratch, ino uint32, n ondisk.Inode, visit func(b uint64, blockcnt int64)) string {
	flags := ext2fs.BlockFlagReadOnly | ext2fs.BlockFlagSkipBadNode
	if ino == 0 {
		flags |= ext2fs.BlockFlagIgnoreCsum
	}
	it := s.blockIter(c, zeroedReads{c: c}, flags)
	_, err := it.IterateInode(c.libfs(), ino, asBlockMap(n), func(blk *uint64, blockcnt int64, _ uint64, _ int) int {
		visit(*blk, blockcnt)
		return 0
	})
	if err != nil {
		return err.Error()
	}
	return ""
}

// dupMapRangeWarning is what the library prints when the multiply
// claimed block map is tested with a block outside the file system (it
// then answers "not set").
func (c *Checker) dupMapRangeWarning(b uint64) {
	c.diag(string(ext2fs.ErrBadBlockTest)+" #%d for multiply claimed block map\n", c.fs.ClusterOf(b))
}

// dupMapOutOfRange reports whether block b lies outside the clusters the
// multiply claimed block map covers.
func (c *Checker) dupMapOutOfRange(b uint64) bool {
	f := c.fs
	return f.ClusterOf(b) < f.ClusterOf(f.FirstDataBlock) || f.ClusterOf(b) > f.ClusterOf(f.BlocksCount-1)
}

// pass1CSearch is pass 1C's walk (ext2fs_dblist_dir_iterate with
// search_dirent_proc): the directory blocks in sorted order, each live
// entry past a block's "." and ".." naming an inode of inodes that has no
// directory yet gives it this one, until need inodes have one.
//
// As in the library, an inline directory's one list entry walks its
// synthesized "." (skipped), its ".." (i_block[0], visited like any name,
// since the library passes it as an ordinary entry), the entries in
// i_block after it and those in its system.data value. A hole in an
// ordinary directory (block 0) names nothing: the library reads block 0,
// which never parses as directory entries on a sane filesystem.
func (c *Checker) pass1CSearch(sorted []dirBlock, inodes map[uint32]*dupInode, need int) {
	f := c.fs
	buf := make([]byte, f.BlockSize)
	ibuf := make([]byte, f.InodeSize)
	scratch := make([]byte, f.BlockSize)
	visit := func(dir, e uint32) bool {
		if e <= f.InodesCount {
			if di := inodes[e]; di != nil && di.dir == 0 {
				di.dir = dir
				need--
			}
		}
		return need > 0
	}
	for _, db := range sorted {
		if db.blk == 0 {
			if f.ReadInode(db.ino, ibuf, scratch) != nil {
				return // ext2fs_read_inode fails: the whole walk ends
			}
			n := ondisk.Inode(ibuf)
			if n.Flags()&ondisk.FlagInlineData == 0 || !n.IsDir() {
				continue
			}
			ib := n.IBlock()
			if !visit(db.ino, leU32(ib)) {
				return
			}
			if !libDirEntries(ib[4:], f.BlockSize, 0, func(e uint32) bool { return visit(db.ino, e) }) {
				return
			}
			if v, ok := ext2fs.FindInodeXattr(n, ondisk.XattrIndexSystem, "data"); ok && len(v) > 0 {
				if !libDirEntries(v, f.BlockSize, 0, func(e uint32) bool { return visit(db.ino, e) }) {
					return
				}
			}
			continue
		}
		if f.ReadBlock(db.blk, buf) != nil {
			continue
		}
		skip := 0
		if db.lblk == 0 {
			skip = 2
		}
		if !libDirEntries(buf, f.BlockSize, skip, func(e uint32) bool { return visit(db.ino, e) }) {
			return
		}
	}
}

// libDirEntries visits the live entries of one directory buffer as the
// library's ext2fs_process_dir_block does: entries starting in the last 8
// bytes are not read, a malformed entry ends the buffer, and the first
// skip live entries (a block 0's "." and "..", by position, not by name)
// are passed over. It returns false when fn does, to end the walk.
func libDirEntries(buf []byte, blockSize, skip int, fn func(ino uint32) bool) bool {
	for off := 0; off+8 < len(buf); {
		d, ok := ondisk.DecodeDirent(buf, off, blockSize)
		if !ok || d.RecLen < 8 || d.RecLen%4 != 0 || off+d.RecLen > len(buf) || d.NameLen+8 > d.RecLen {
			return true
		}
		if d.Ino != 0 {
			if skip > 0 {
				skip--
			} else if !fn(d.Ino) {
				return false
			}
		}
		off += d.RecLen
	}
	return true
}
