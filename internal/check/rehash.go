package check

import (
	"errors"
	"sort"

	"gofsck/internal/casefold"
	"gofsck/internal/dirhash"
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Pass 3A in a writable run: e2fsck's rehash.c. Each queued directory is
// read whole, its duplicate names are dropped or renamed, and its entries
// are written back into its own blocks, either as a fresh htree (dx_root,
// leaves filled to 80 %, interior nodes when the root cannot hold every
// leaf) or, for small directories and without dir_index, packed linearly
// in inode order. Blocks left over are punched; missing ones are added.
//
// In a writable run with dir_index, pass 1 also queues every directory of
// three blocks or more that is not indexed (queueLinearDirs).

// errRehashUnsupported is a rebuild e2fsck makes but gofsck cannot make
// the same (a third index level): the run stops as for an unimplemented
// fix, writing nothing.
var errRehashUnsupported = errHtreeTooDeep

// queueLinearDirs is the end of e2fsck's check_blocks for directories in a
// writable run with dir_index: a directory without INDEX_FL whose i_size
// spans three blocks or more is rebuilt in pass 3A, except /lost+found (as
// found before pass 1 scans). With -D every directory is (e2fsck's
// E2F_OPT_COMPRESS_DIRS, for which e2fsck_dir_will_be_rehashed is always
// true).
func (c *Checker) queueLinearDirs() {
	if c.optimizeAll() {
		if c.rehash == nil {
			c.rehash = map[uint32]bool{}
		}
		c.rehashAsked = make(map[uint32]bool, len(c.rehash))
		for d := range c.rehash {
			c.rehashAsked[d] = true
		}
		for i := range c.dirs {
			c.rehash[c.dirs[i].ino] = true
		}
		return
	}
	if !c.repairing() || !c.sb.HasCompat(ondisk.CompatDirIndex) {
		return
	}
	if c.rehash == nil {
		c.rehash = map[uint32]bool{}
	}
	f := c.fs
	lpf, _ := c.lookupName(ondisk.RootIno, "lost+found")
	ibuf := make([]byte, f.InodeSize)
	scratch := make([]byte, f.BlockSize)
	for i := range c.dirs {
		ino := c.dirs[i].ino
		if ino == lpf || c.dirs[i].inline || !c.inodeUsed.Test(uint64(ino)) || !c.inodeDir.Test(uint64(ino)) {
			continue
		}
		if f.ReadInode(ino, ibuf, scratch) != nil {
			continue
		}
		n := ondisk.Inode(ibuf)
		if n.Flags()&ondisk.FlagIndex != 0 || uint32(n.Size())/uint32(f.BlockSize) < 3 {
			continue
		}
		c.rehash[ino] = true
	}
}

// dirsToHash reports whether dir was queued for rebuild by a problem
// (e2fsck's dirs_to_hash list, without -D's every directory). A recording
// worker assumes not, as rehashed does.
func (c *Checker) dirsToHash(dir uint32) bool {
	if c.rehashAsked == nil || c.p2recording() {
		return c.rehashed(dir)
	}
	return c.rehashAsked[dir]
}

// optimizeAll reports whether every directory is rebuilt (-D).
func (c *Checker) optimizeAll() bool { return c.opt.OptimizeDirs && c.repairing() }

// rehashDir is e2fsck_rehash_dir for one queued directory; a read-only
// run only reports the duplicate names.
func (c *Checker) rehashDir(dir uint32) {
	if c.sink.Aborted() {
		return // stopped (a preen halt exits at its question)
	}
	if !c.repairing() {
		c.reportDuplicateNames(dir)
		return
	}
	if err := c.rebuildDir(dir); errors.Is(err, errRehashUnsupported) {
		c.unsupported(problem.PR_3A_OPTIMIZE_DIR)
		return
	} else if err != nil {
		c.sink.EndLatch(problem.LatchOptimizeDir)
		c.fix(problem.Problem{Code: problem.PR_3A_OPTIMIZE_DIR_ERR, Dir: dir, Err: err.Error()})
	}
	for i := range c.names {
		if c.names[i].dir == dir {
			c.names[i].valid = false
		}
	}
}

// rebuildDir reads, deduplicates, sorts and rewrites directory dir.
func (c *Checker) rebuildDir(dir uint32) error {
	f := c.fs
	sb := c.sb
	bs := f.BlockSize
	n := c.readFullInode(dir)
	osize := n.Size()
	if sb.HasIncompat(ondisk.IncompatInlineData) && n.Flags()&ondisk.FlagInlineData != 0 {
		return nil
	}
	fo := c.rehashFolder(n) // nil unless names hash and compare casefolded
	lblks, pblks := c.dirDataBlocks(n, 1<<22)
	compress := !sb.HasCompat(ondisk.CompatDirIndex) || uint32(n.Size())/uint32(bs) < 2
	hv := dirhash.Version(sb.DefHashVersion())
	if hv <= dirhash.TEA && sb.Flags()&ondisk.FlagUnsignedHash != 0 {
		hv += 3
	}
	seed := sb.HashSeed()
	csumSize := 0
	if f.MetadataCsum {
		csumSize = ondisk.DirTailSize
	}

	// Read every entry (fill_dir_block).
	ents, parent, compress, err := c.fillDir(n, lblks, pblks, compress, hv, &seed, fo)
	if err != nil {
		return err
	}

	// Sort and resolve duplicates.
	for {
		part := ents
		if compress && len(ents) > 1 {
			part = ents[2:]
		}
		sortRehash(part, fo) // sort_r's order (enccasefold.go)
		if c.fixDuplicates(dir, n, ents, hv, &seed, fo) == 0 {
			break
		}
	}
	if c.sink.Aborted() {
		return nil // a preen halt at a duplicate: e2fsck exits there
	}
	if compress && len(ents) > 1 {
		part := ents[2:]
		sort.SliceStable(part, func(i, j int) bool { return int32(part[i].ino-part[j].ino) < 0 })
	}

	// Lay out the leaves (copy_dir_entries).
	hashIn := hashInInode(n) // entries keep their hashes (enccasefold.go)
	slackPct := 20
	if c.opt.DirSlack != nil {
		slackPct = int(*c.opt.DirSlack)
	}
	out, hashes := copyDirEntries(ents, bs, csumSize, slackPct, compress, hashIn)
	if !compress {
		var ft uint8
		if sb.HasIncompat(ondisk.IncompatFiletype) {
			ft = ondisk.FTDir
		}
		hv := sb.DefHashVersion()
		if hashIn {
			hv = byte(dirhash.SipHash) // set_root_node's hash_version
		}
		var err error
		if out, err = calculateTree(out, hashes, dir, parent, ft, hv, f.MetadataCsum); err != nil {
			return err
		}
	}
	if err := c.writeDirectory(dir, n, osize, out, compress); err != nil {
		return err
	}
	return c.rehashCheckExtents(dir) // optimize.go
}

// fillDir reads every entry of directory inode n (e2fsck's fill_dir_block
// over its blocks): names, inodes and hashes, '.' and '..' only when
// compress; the parent is '..'. An index directory whose entries fit in
// one block is read again packed (compress true on return). A directory
// keeping its hashes (enccasefold.go) gives the stored ones.
func (c *Checker) fillDir(n ondisk.Inode, lblks []int64, pblks []uint64, compress bool, hv dirhash.Version, seed *[4]uint32, fo *casefold.Folder) ([]hashEntry, uint32, bool, error) {
	f := c.fs
	bs := f.BlockSize
	hashIn := hashInInode(n)
	var ents []hashEntry
	var parent uint32
	buf := make([]byte, bs)
	for {
		ents = ents[:0]
		dirSize := 0
		for k, lb := range lblks {
			if uint64(lb+1)*uint64(bs) > uint64(uint32(n.Size())) {
				return nil, 0, compress, ext2fs.ErrDirCorrupted
			}
			if f.ReadBlock(pblks[k], buf) != nil {
				return nil, 0, compress, ext2fs.ErrDirCorrupted
			}
			for off := 0; off < bs; {
				d, ok := ondisk.DecodeDirent(buf, off, bs)
				minRec := ondisk.DirentHeaderSize
				extended := hashIn && !isFakeEntry(uint32(lb), off, bs, f.MetadataCsum)
				if extended {
					minRec += ondisk.DirentHashSize
				}
				recLen, nameLen, ino := d.RecLen, d.NameLen, d.Ino
				if !ok || off+recLen > bs || recLen < minRec || recLen%4 != 0 || nameLen+minRec > recLen {
					return nil, 0, compress, ext2fs.ErrDirCorrupted
				}
				e := buf[off : off+recLen]
				off += recLen
				if ino == 0 {
					continue
				}
				if nameLen == 0 {
					return nil, 0, compress, ext2fs.ErrDirCorrupted
				}
				name := e[8 : 8+nameLen]
				if !compress && nameLen == 1 && name[0] == '.' {
					continue
				}
				if !compress && nameLen == 2 && name[0] == '.' && name[1] == '.' {
					parent = ino
					continue
				}
				re := hashEntry{ino: ino, ft: d.FileType, name: append([]byte(nil), name...)}
				extra := 0
				if extended {
					re.hash, re.minor, _ = ondisk.DirentHashes(e, 0, nameLen)
					extra = ondisk.DirentHashSize
				} else if !compress {
					var err error
					if re.hash, re.minor, err = hashName(fo, hv, name, seed); errors.Is(err, errFoldFailed) {
						return nil, 0, compress, err
					}
				}
				dirSize += ondisk.DirRecLen(nameLen, extra)
				ents = append(ents, re)
			}
		}
		if compress || dirSize >= bs-24 {
			return ents, parent, compress, nil
		}
		compress = true
	}
}

// fixDuplicates is duplicate_search_and_fix over sorted entries; it
// returns how many it fixed.
func (c *Checker) fixDuplicates(dir uint32, n ondisk.Inode, ents []hashEntry, hv dirhash.Version, seed *[4]uint32, fo *casefold.Folder) int {
	fixed := 0
	for i := 1; i < len(ents); i++ {
		e, prev := &ents[i], &ents[i-1]
		if e.ino == 0 || !sameName(fo, e.name, prev.name) {
			continue
		}
		di := &problem.DirentInfo{Ino: e.ino, NameLen: uint8(len(e.name)), Name: e.name}
		p := problem.Problem{Ino: dir, Dirent: di}
		// The same inode twice, or a name that cannot be renamed: the
		// entry goes.
		drop := func(code problem.Code) bool {
			q := p
			q.Code = code
			if !c.fix(q) {
				return false
			}
			c.adjustInodeCount(e.ino, -1)
			e.ino = 0
			fixed++
			return true
		}
		if e.ino == prev.ino && drop(problem.PR_2_DUPLICATE_DIRENT) ||
			n.Flags()&ondisk.FlagEncrypt != 0 && drop(problem.PR_2_NON_UNIQUE_FILE_NO_RENAME) {
			continue
		}
		newName := mutateName(append([]byte(nil), e.name...))
		for j := 0; j < len(ents); j++ {
			if j == i || !sameName(fo, newName, ents[j].name) {
				continue
			}
			newName = mutateName(newName)
			j = -1
		}
		q := p
		q.Code = problem.PR_2_NON_UNIQUE_FILE
		q.Str = string(newName[:cstrLen(newName)]) // printed with %s: up to a NUL
		if c.fix(q) {
			e.name = newName
			// The library's error is ignored there: a name that cannot
			// be folded keeps its hashes, an unknown hash version
			// zeroes the major one only.
			switch h, m, err := hashName(fo, hv, newName, seed); {
			case err == nil:
				e.hash, e.minor = h, m
			case !errors.Is(err, errFoldFailed):
				e.hash = 0
			}
			fixed++
		}
	}
	return fixed
}

// copyDirEntries packs the entries into leaf blocks as e2fsck's
// copy_dir_entries does. In index mode block 0 is left for the root.
// hashes[i] is the first hash of block i (with the collision bit). With
// hashIn every entry is written with its hashes after the name. Outside
// compress mode slackPct percent of each block is left free
// (indexed_dir_slack_percentage).
func copyDirEntries(ents []hashEntry, bs, csumSize, slackPct int, compress, hashIn bool) ([][]byte, []uint32) {
	var out [][]byte
	var hashes []uint32
	next := func() []byte {
		b := make([]byte, bs)
		out = append(out, b)
		hashes = append(hashes, 0)
		return b
	}
	if !compress {
		next()
	}
	extra := 0
	if hashIn {
		extra = ondisk.DirentHashSize
	}
	minRecLen := ondisk.DirRecLen(1, extra)
	slack := minRecLen
	if !compress {
		slack = (bs - csumSize) * slackPct / 100
		if slack < minRecLen {
			slack = minRecLen
		}
	}
	block := next()
	offset := 0
	left := bs - csumSize
	prevRecLen, recLen := 0, 0
	dirent := 0
	prevHash := uint32(1)
	tail := func(b []byte) {
		if csumSize > 0 {
			initDirTail(b, bs)
		}
	}
	for i := range ents {
		e := &ents[i]
		if e.ino == 0 {
			continue
		}
		recLen = ondisk.DirRecLen(len(e.name), extra)
		if recLen > left {
			if left > 0 {
				left += prevRecLen
				ext2fs.SetRecLen(block, dirent, left, bs)
			}
			tail(block)
			block = next()
			offset = 0
		}
		left = bs - csumSize - offset
		dirent = offset
		if offset == 0 {
			if e.hash == prevHash {
				hashes[len(out)-1] = e.hash | 1
			} else {
				hashes[len(out)-1] = e.hash
			}
		}
		ext2fs.PutDirent(block, dirent, e.ino, recLen, len(e.name), e.ft, bs)
		copy(block[dirent+8:], e.name)
		if hashIn {
			ondisk.SetDirentHashes(block, dirent, len(e.name), e.hash, e.minor)
		}
		prevRecLen = recLen
		offset += recLen
		left -= recLen
		if left < slack {
			prevRecLen += left
			ext2fs.SetRecLen(block, dirent, prevRecLen, bs)
			offset += left
			left = 0
		}
		prevHash = e.hash
	}
	if left > 0 {
		ext2fs.SetRecLen(block, dirent, recLen+left, bs)
	}
	tail(block)
	return out, hashes
}

// writeDirectory is e2fsck's write_directory: make room for every block
// of out, write them in the directory's block order, then set INDEX_FL
// (or clear it), i_size, and punch the blocks past the new end.
func (c *Checker) writeDirectory(dir uint32, n ondisk.Inode, osize uint64, out [][]byte, compress bool) error {
	f := c.fs
	bs := f.BlockSize
	if err := c.expandDirTo(dir, n, len(out)); err != nil {
		return err
	}
	num := len(out)
	lpf := c.lpf
	if lpf == 0 {
		lpf = c.getLostAndFound(false)
	}
	lblks, pblks := c.dirDataBlocks(n, 1<<22)
	for k, lb := range lblks {
		var blk []byte
		switch {
		case lb < int64(num):
			if lb < int64(len(out)) {
				blk = out[lb]
			} else {
				blk = c.newDirBlock(0, 0)
			}
		case dir == lpf:
			blk = c.newDirBlock(0, 0)
			num++
		default:
			continue
		}
		c.writeDirBlock(pblks[k], blk, dir)
	}
	flags := n.Flags()
	if compress {
		flags &^= ondisk.FlagIndex
	} else {
		flags |= ondisk.FlagIndex
	}
	n.SetFlags(flags)
	n.SetSize(uint64(num) * uint64(bs))
	if err := ext2fs.Punch(c.libfs(), dir, n, uint64(num)); err != nil {
		return err
	}
	c.writeInode(dir, n)
	// The blocks punched stay charged to the quota: e2fsck 1.47.0's
	// rehash does no quota accounting (1.47.1 added a quota_data_sub of
	// the size lost), so its quota rewrite keeps them.
	return nil
}

// expandDirTo is e2fsck_expand_directory(ctx, dir, -1, num): holes and
// missing blocks up to num are allocated (block-mapped directories), or
// blocks appended after the last extent (extent-mapped ones).
func (c *Checker) expandDirTo(dir uint32, n ondisk.Inode, num int) error {
	f := c.fs
	lblks, _ := c.dirDataBlocks(n, 1<<22)
	have := 0
	for _, lb := range lblks {
		if lb < int64(num) {
			have++
		}
	}
	if have == num {
		// Nothing to allocate: only i_size changes, to num blocks.
		n.SetSize(uint64(num) * uint64(f.BlockSize))
		return nil
	}
	es := c.dirExpander(dir)
	es.Guaranteed = int64(num)
	if err := es.Expand(n); err != nil {
		return err
	}
	n.SetSize(uint64(es.LastBlock+1) * uint64(f.BlockSize))
	_ = ext2fs.IblkAddBlocks(f, n, uint64(es.NewBlocks))
	if es.NewBlocks > 0 {
		c.chargeQuota(dir, n, uint64(es.NewBlocks)*c.clusterBytes(), 0)
	}
	c.writeInode(dir, n)
	return nil
}

// dirExpander is the library's expand_dir_proc over directory dir,
// allocating from the passes' maps and writing through the repair path.
func (c *Checker) dirExpander(dir uint32) *ext2fs.DirExpander {
	return &ext2fs.DirExpander{Fsys: c.libfs(), IO: repairIO{c}, Dir: dir,
		NewDirBlock: func(blk uint64) { c.writeDirBlock(blk, c.newDirBlock(0, 0), dir) }}
}
