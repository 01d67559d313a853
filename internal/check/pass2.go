package check

import (
	"bytes"
	"context"
	"encoding/binary"
	"sort"

	"gofsck/internal/dirhash"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
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

// dxDirState is an indexed directory during pass 2.
type dxDirState struct {
	ino         uint32
	numBlocks   uint32
	hashVersion dirhash.Version
	depth       int
	blocks      []dxBlock
}

// pass2 checks every directory block found in pass 1.
func (c *Checker) pass2(ctx context.Context) error {
	f := c.fs
	c.refCount = make([]uint16, uint64(f.InodesCount)+1)
	if c.rehash == nil {
		c.rehash = map[uint32]bool{}
	}
	dx := make(map[uint32]*dxDirState, len(c.dxDirs))
	for _, d := range c.dxDirs {
		n := d.numBlocks
		if n > 1<<22 {
			n = 1 << 22 // bounded: 4M blocks of a directory is already 16 GiB
		}
		dx[d.ino] = &dxDirState{ino: d.ino, numBlocks: n, blocks: make([]dxBlock, n)}
	}
	if c.sb.HasCompat(ondisk.CompatDirIndex) {
		sort.Slice(c.dblist, func(i, j int) bool {
			a, b := c.dblist[i], c.dblist[j]
			if (a.lblk == 0) != (b.lblk == 0) {
				return a.lblk == 0
			}
			if a.blk != b.blk {
				return a.blk < b.blk
			}
			if a.ino != b.ino {
				return a.ino < b.ino
			}
			return a.lblk < b.lblk
		})
	} else {
		sort.Slice(c.dblist, func(i, j int) bool {
			a, b := c.dblist[i], c.dblist[j]
			if a.blk != b.blk {
				return a.blk < b.blk
			}
			if a.ino != b.ino {
				return a.ino < b.ino
			}
			return a.lblk < b.lblk
		})
	}
	w := &dirWorker{c: c, buf: make([]byte, f.BlockSize), ibuf: make([]byte, f.InodeSize), scratch: make([]byte, f.BlockSize), s: c.newScratch()}
	for i := range c.dblist {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if !w.checkDirBlock(&c.dblist[i], dx) {
			return nil // aborted
		}
		if c.sink.Aborted() {
			return nil
		}
	}
	c.checkHtrees(dx)
	if c.stats.LargeFiles > 0 && !c.sb.HasRoCompat(ondisk.RoCompatLargeFile) {
		c.fix(problem.Problem{Code: problem.PR_2_FEATURE_LARGE_FILES})
	}
	return nil
}

// dirWorker holds the buffers of the directory pass.
type dirWorker struct {
	c       *Checker
	buf     []byte
	ibuf    []byte
	scratch []byte
	s       *inodeScratch
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
func (w *dirWorker) checkDirBlock(db *dirBlock, dx map[uint32]*dxDirState) bool {
	c := w.c
	f := c.fs
	sb := c.sb
	ino := db.ino
	if !c.inodeUsed.Test(uint64(ino)) {
		return true
	}
	base := problem.Problem{Ino: ino, Blk: db.blk, BlkCount: int64(db.lblk)}
	var dirInode ondisk.Inode
	inlineSize := 0
	if sb.HasIncompat(ondisk.IncompatInlineData) {
		dirInode = append(ondisk.Inode(nil), w.readInode(ino)...)
		if dirInode.Flags()&ondisk.FlagInlineData != 0 {
			if sz, ok := inlineDataSize(dirInode); ok {
				inlineSize = sz
			} else {
				inlineSize = ondisk.IBlockSize
			}
		}
	}
	if db.blk == 0 && inlineSize == 0 {
		q := base
		q.Code = problem.PR_2_DIRECTORY_HOLE
		c.fix(q)
		return true
	}
	dotState := 0
	if db.lblk != 0 {
		dotState = 2
	}
	dupsFound := c.rehash[ino]
	buf := w.buf
	failedCsum := false
	if inlineSize > 0 {
		clear(buf)
		copy(buf, dirInode.IBlock())
		if inlineSize > ondisk.IBlockSize {
			if v, ok := findInodeXattr(dirInode, ondisk.XattrIndexSystem, "data"); ok {
				copy(buf[ondisk.IBlockSize:], v)
			}
		}
		if inlineSize&3 != 0 || (inlineSize > ondisk.IBlockSize && inlineSize < ondisk.IBlockSize+12) {
			c.fix(problem.Problem{Code: problem.PR_2_BAD_INLINE_DIR_SIZE, Ino: ino, Num: uint64(inlineSize)})
		}
	} else {
		if err := f.ReadBlock(db.blk, buf); err != nil {
			q := base
			q.Code, q.Err = problem.PR_2_READ_DIRBLOCK, err.Error()
			if !c.fix(q) {
				c.abort = true
				return false
			}
			clear(buf)
		}
		if f.MetadataCsum && !dirBlockCsumOK(f.BlockSize, buf, f.CsumSeed, ino, w.generation(ino)) {
			failedCsum = true
		}
	}
	csumSize := 0
	if f.MetadataCsum {
		csumSize = ondisk.DirTailSize
	}
	isLeaf := true
	var dd *dxDirState
	var dxb *dxBlock
	if d := dx[ino]; d != nil && d.numBlocks > 0 {
		dd = d
		if db.lblk >= d.numBlocks {
			q := problem.Problem{Code: problem.PR_2_UNEXPECTED_HTREE_BLOCK, Ino: ino, Dir: ino, Blk: db.blk, BlkCount: int64(db.lblk)}
			c.fix(q)
			dd = nil
		} else {
			dxb = &d.blocks[db.lblk]
			dxb.typ = dxTypeLeaf
			dxb.minHash = ^uint32(0)
			dxb.maxHash = 0
			first, _ := ondisk.DecodeDirent(buf, 0, f.BlockSize)
			limit := int(binary.LittleEndian.Uint16(buf[8:]))
			dxCsum := 0
			if f.MetadataCsum {
				dxCsum = ondisk.DxTailSize
			}
			if db.lblk == 0 {
				root, _ := ondisk.DecodeDxRootInfo(buf)
				dxb.typ = dxTypeRoot
				dxb.flags |= dxFlagFirst | dxFlagLast
				maxLevels := 2
				if sb.HasIncompat(ondisk.IncompatLargeDir) {
					maxLevels = 3
				}
				if root.ReservedZero != 0 || root.InfoLength < 8 || int(root.IndirectLevels) >= maxLevels {
					q := base
					q.Code = problem.PR_2_HTREE_BAD_ROOT
					if c.fix(q) {
						dd, dxb = nil, nil
					}
				}
				d.hashVersion = dirhash.Version(root.HashVersion)
				if d.hashVersion <= dirhash.TEA && sb.Flags()&ondisk.FlagUnsignedHash != 0 {
					d.hashVersion += 3
				}
				d.depth = int(root.IndirectLevels) + 1
			} else if first.Ino == 0 && first.RecLen == f.BlockSize && first.NameLen == 0 &&
				limit == (f.BlockSize-(8+dxCsum))/ondisk.DxEntrySize {
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
		if c.rehash[ino] {
			failedCsum = false
		} else {
			q := base
			q.Code = problem.PR_2_LEAF_NODE_MISSING_CSUM
			if c.fix(q) {
				c.rehash[ino] = true
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
	names := w.nameSet()
	offset := 0
	prevOff := -1
	recLen := 0
	modified := false
	var lastDirent problem.DirentInfo
	for {
		var d ondisk.Dirent
		var name []byte
		var synthetic bool
		if inlineSize == 0 || dotState > 1 {
			if maxSize-offset < ondisk.DirentHeaderSize {
				recLen = 12
			} else {
				h, _ := ondisk.DecodeDirent(area, offset, f.BlockSize)
				recLen = h.RecLen
			}
			d, _ = ondisk.DecodeDirent(area, offset, f.BlockSize)
			nameLen := d.NameLen
			di := direntInfo(area, offset, d)
			lastDirent = di
			if offset+recLen > maxSize || recLen < 12 || recLen%4 != 0 || ondisk.DirRecLen(nameLen, 0) > recLen {
				q := base
				q.Code, q.Num, q.Dirent = problem.PR_2_DIR_CORRUPTED, uint64(offset), &di
				if c.fix(q) {
					return true
				}
				// e2fsck cannot go on with a block it was not allowed to
				// salvage: it stops the whole run.
				c.abort = true
				return false
			}
			name = area[offset+ondisk.DirentHeaderSize : offset+ondisk.DirentHeaderSize+nameLen]
			d.RecLen = recLen
		} else {
			synthetic = true
			if dotState == 0 {
				d = ondisk.Dirent{Ino: ino, RecLen: 12, NameLen: 1, FileType: ondisk.FTDir}
				name = []byte(".")
			} else {
				d = ondisk.Dirent{Ino: binary.LittleEndian.Uint32(buf), RecLen: 12, NameLen: 2, FileType: ondisk.FTDir}
				name = []byte("..")
			}
			if !filetypeFS {
				d.FileType = 0
			}
			recLen = d.RecLen
		}
		di := problem.DirentInfo{Ino: d.Ino, RecLen: uint32(d.RecLen), NameLen: uint8(d.NameLen), FileType: d.FileType, Name: name}
		lastDirent = di
		p := base
		p.Num = uint64(offset)
		p.Dirent = &di
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
			w.checkDot(p, d, name, nextByte)
		case dotState == 1:
			w.checkDotDot(p, d, name, nextByte)
		case d.Ino == ino:
			pending = problem.PR_2_LINK_DOT
			if ask(problem.PR_2_LINK_DOT) {
				skip = true
			}
		}
		if !skip && d.Ino != 0 {
			w.checkEntry(p, d, name, dotState, ino, dd, dxb, filetypeFS, names, ask, &dupsFound, pending)
		}
		prevOff = offset
		if inlineSize == 0 || dotState > 1 {
			offset += recLen
		} else if dotState == 1 {
			offset = 4
			prevOff = -1
		}
		dotState++
		if offset >= maxSize {
			break
		}
	}
	_ = prevOff
	if dxb != nil && (dxb.typ == dxTypeRoot || dxb.typ == dxTypeNode) {
		w.parseIntNode(db, dd, buf, failedCsum)
	}
	if offset != maxSize {
		q := base
		q.Code = problem.PR_2_FINAL_RECLEN
		q.Num = uint64(recLen + offset - maxSize)
		q.Dirent = &lastDirent
		c.fix(q)
	}
	if !modified && isLeaf && inlineSize == 0 && failedCsum {
		q := base
		q.Code = problem.PR_2_LEAF_NODE_ONLY_CSUM_INVALID
		c.fix(q)
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

// generation returns an inode's i_generation (for directory checksums).
func (w *dirWorker) generation(ino uint32) uint32 {
	return w.readInode(ino).Generation()
}

// nameSet returns the per-block duplicate-name set, reused.
func (w *dirWorker) nameSet() map[string]struct{} {
	return make(map[string]struct{}, 32)
}

// checkDot validates the '.' entry.
func (w *dirWorker) checkDot(p problem.Problem, d ondisk.Dirent, name []byte, next func(int) byte) {
	c := w.c
	var code problem.Code
	switch {
	case d.Ino == 0:
		code = problem.PR_2_MISSING_DOT
	case d.NameLen != 1 || name[0] != '.':
		code = problem.PR_2_1ST_NOT_DOT
	case next(1) != 0:
		code = problem.PR_2_DOT_NULL_TERM
	}
	created := false
	if code != 0 {
		q := p
		q.Code = code
		created = c.fix(q)
	}
	if d.Ino != p.Ino {
		q := p
		q.Code = problem.PR_2_BAD_INODE_DOT
		c.fix(q)
	}
	if d.RecLen > 12 && d.RecLen-12 > 12 && !created {
		q := p
		q.Code = problem.PR_2_SPLIT_DOT
		c.fix(q)
	}
}

// checkDotDot validates the '..' entry and records its target.
func (w *dirWorker) checkDotDot(p problem.Problem, d ondisk.Dirent, name []byte, next func(int) byte) {
	c := w.c
	var code problem.Code
	switch {
	case d.Ino == 0:
		code = problem.PR_2_MISSING_DOT_DOT
	case d.NameLen != 2 || name[0] != '.' || name[1] != '.':
		code = problem.PR_2_2ND_NOT_DOT_DOT
	case next(2) != 0:
		code = problem.PR_2_DOT_DOT_NULL_TERM
	}
	if code != 0 {
		q := p
		q.Code = code
		c.fix(q)
		return
	}
	if di := c.findDir(p.Ino); di != nil {
		di.dotdot = d.Ino
	}
}

// checkEntry runs the target, type, name, htree and link checks of one
// entry with a non-zero inode. It returns true when the entry was cleared.
func (w *dirWorker) checkEntry(p problem.Problem, d ondisk.Dirent, name []byte, dotState int, dir uint32,
	dd *dxDirState, dxb *dxBlock, filetypeFS bool, names map[string]struct{},
	ask func(problem.Code) bool, dupsFound *bool, code problem.Code) bool {
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
	if c.inodeBad.Test(uint64(target)) {
		if w.processBadInode(dir, target) {
			return true
		}
	}
	ipg := f.InodesPerGroup
	group := (target - 1) / ipg
	gd := f.Group(group)
	firstUnused := group*ipg + 1 + ipg - min(gd.ItableUnused(), ipg)
	p.Group = group
	if c.skipUninit && gd.Flags()&ondisk.BgInodeUninit != 0 {
		q := p
		q.Code = problem.PR_2_INOREF_BG_INO_UNINIT
		c.fix(q)
	} else if c.skipUninit && target >= firstUnused {
		q := p
		q.Code = problem.PR_2_INOREF_IN_UNUSED
		c.fix(q)
	}
	if !c.inodeUsed.Test(uint64(target)) {
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
	if dirPolicy, encrypted := c.encPolicy[dir]; encrypted {
		if dotState > 1 && w.checkEncryptedEntry(p, d, dirPolicy) {
			return true
		}
	} else {
		w.checkName(p, name)
	}
	if dxb != nil && dd != nil {
		var hash uint32
		if dd.hashVersion == dirhash.SipHash {
			// The hash lives in the entry (encrypted+casefolded dirs).
			if dotState > 1 && len(name) > 0 {
				hash = 0
			}
		} else {
			seed := sb.HashSeed()
			h, _, err := dirhash.Hash(dd.hashVersion, name, &seed)
			if err == nil {
				hash = h
			}
		}
		if hash < dxb.minHash {
			dxb.minHash = hash
		}
		if hash > dxb.maxHash {
			dxb.maxHash = hash
		}
	}
	if dotState > 1 && c.inodeDir.Test(uint64(target)) {
		if di := c.findDir(target); di != nil {
			if di.parent != 0 {
				q := p
				q.Code = problem.PR_2_LINK_DIR
				q.Ino2 = di.parent
				if c.fix(q) {
					return true
				}
			} else {
				di.parent = dir
			}
		}
	}
	if *dupsFound {
	} else if _, seen := names[string(name)]; seen {
		c.fix(problem.Problem{Code: problem.PR_2_REPORT_DUP_DIRENT, Ino: dir, Dirent: p.Dirent})
		c.rehash[dir] = true
		*dupsFound = true
	} else {
		names[string(name)] = struct{}{}
	}
	if c.refCount[target] < 0xFFFF {
		c.refCount[target]++
	}
	if c.refCount[target] > 1 {
		c.stats.Links++
	}
	return false
}

// checkFiletype compares the entry's file type with the target inode.
func (w *dirWorker) checkFiletype(p problem.Problem, d ondisk.Dirent, filetypeFS bool) {
	c := w.c
	if !filetypeFS {
		if d.FileType != 0 {
			q := p
			q.Code = problem.PR_2_CLEAR_FILETYPE
			c.fix(q)
		}
		return
	}
	var should uint8
	switch {
	case c.inodeDir.Test(uint64(d.Ino)):
		should = ondisk.FTDir
	case c.inodeReg.Test(uint64(d.Ino)):
		should = ondisk.FTRegFile
	case c.inodeBad.Test(uint64(d.Ino)):
		should = 0
	default:
		should = ondisk.FileTypeOfMode(w.readInode(d.Ino).Mode())
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
	c.fix(q)
}

// checkEncryptedEntry checks a name in an encrypted directory and that the
// target shares the directory's policy. It returns true when the entry was
// cleared.
func (w *dirWorker) checkEncryptedEntry(p problem.Problem, d ondisk.Dirent, dirPolicy string) bool {
	c := w.c
	if d.NameLen < 16 {
		q := p
		q.Code = problem.PR_2_BAD_ENCRYPTED_NAME
		if c.fix(q) {
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
	t := w.readInode(d.Ino).Type()
	return t == ondisk.SIFREG || t == ondisk.SIFDIR || t == ondisk.SIFLNK
}

// checkName reports '/' and NUL bytes in a name.
func (w *dirWorker) checkName(p problem.Problem, name []byte) {
	if bytes.IndexByte(name, '/') >= 0 || bytes.IndexByte(name, 0) >= 0 {
		q := p
		q.Code = problem.PR_2_BAD_NAME
		w.c.fix(q)
	}
}

// processBadInode is e2fsck_process_bad_inode for an inode flagged in pass
// 1. It returns true when the inode was deallocated (entry cleared).
func (w *dirWorker) processBadInode(dir, ino uint32) bool {
	c := w.c
	f := c.fs
	sb := c.sb
	n := append(ondisk.Inode(nil), w.readInode(ino)...)
	p := problem.Problem{Ino: ino, Dir: dir, Inode: c.inodeInfo(n)}
	ask := func(code problem.Code, num uint64) bool {
		q := p
		q.Code, q.Num = code, num
		return c.fix(q)
	}
	notFixed := false
	acl := n.FileACL(sb.Is64bit())
	if acl != 0 && !sb.HasCompat(ondisk.CompatExtAttr) {
		if !ask(problem.PR_2_FILE_ACL_ZERO, 0) {
			notFixed = true
		}
	}
	var code problem.Code
	switch n.Type() {
	case ondisk.SIFDIR, ondisk.SIFREG:
	case ondisk.SIFCHR:
		if !c.deviceOK(n) {
			code = problem.PR_2_BAD_CHAR_DEV
		}
	case ondisk.SIFBLK:
		if !c.deviceOK(n) {
			code = problem.PR_2_BAD_BLOCK_DEV
		}
	case ondisk.SIFIFO:
		if !c.deviceOK(n) {
			code = problem.PR_2_BAD_FIFO
		}
	case ondisk.SIFSOCK:
		if !c.deviceOK(n) {
			code = problem.PR_2_BAD_SOCKET
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
			return true
		}
		notFixed = true
	}
	if n.Faddr() != 0 && !ask(problem.PR_2_FADDR_ZERO, 0) {
		notFixed = true
	}
	if sb.CreatorOS() == ondisk.OSHurd {
		if n.HurdFrag() != 0 && !ask(problem.PR_2_FRAG_ZERO, uint64(n.HurdFrag())) {
			notFixed = true
		}
		if n.HurdFsize() != 0 && !ask(problem.PR_2_FSIZE_ZERO, uint64(n.HurdFsize())) {
			notFixed = true
		}
	}
	if sb.CreatorOS() == ondisk.OSLinux && !sb.HasRoCompat(ondisk.RoCompatHugeFile) && n.BlocksHi() != 0 {
		if !ask(problem.PR_2_BLOCKS_HI_ZERO, uint64(n.BlocksHi())) {
			notFixed = true
		}
	}
	if sb.CreatorOS() == ondisk.OSLinux && !sb.Is64bit() && n.FileACLHi() != 0 {
		if !ask(problem.PR_2_I_FILE_ACL_HI_ZERO, uint64(n.FileACLHi())) {
			notFixed = true
		}
	}
	acl = n.FileACL(sb.Is64bit())
	if acl != 0 && (acl < f.FirstDataBlock || acl >= f.BlocksCount) {
		if !ask(problem.PR_2_FILE_ACL_BAD, 0) {
			notFixed = true
		}
	}
	if n.SizeHigh() != 0 && !sb.HasIncompat(ondisk.IncompatLargeDir) && n.IsDir() &&
		uint64(n.BlocksLo()) < uint64(1)<<(29-f.BlockBits) {
		if !ask(problem.PR_2_DIR_SIZE_HIGH_ZERO, uint64(n.SizeHigh())) {
			notFixed = true
		}
	}
	if !notFixed {
		c.inodeBad.Clear(uint64(ino))
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
		if failedCsum && (c.rehash[db.ino] || ask(problem.PR_2_HTREE_ROOT_CSUM_INVALID, 0, 0)) {
			w.clearHtree(dd, db.ino)
			return
		}
	} else {
		entOff = ondisk.DxNodeCountOff
		if failedCsum && (c.rehash[db.ino] || ask(problem.PR_2_HTREE_NODE_CSUM_INVALID, 0, 0)) {
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
	for i := 0; i < count; i++ {
		prev := hash
		h, blk32, ok := ondisk.DxEntry(buf, entOff, i)
		if !ok {
			break
		}
		hash = h &^ 1
		blk := blk32 & 0x0FFFFFFF
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
		b := &dd.blocks[blk]
		if b.flags&dxFlagReferenced != 0 {
			b.flags |= dxFlagDupRef
		} else {
			b.flags |= dxFlagReferenced
			b.parent = db.lblk
		}
		if i > 0 {
			_, pb, _ := ondisk.DxEntry(buf, entOff, i-1)
			b.previous = pb & 0x0FFFFFFF
		} else {
			b.previous = 0
		}
		minHash = min(minHash, hash)
		maxHash = max(maxHash, hash)
		b.nodeMinHash = hash
		if i+1 < count {
			nh, _, _ := ondisk.DxEntry(buf, entOff, i+1)
			b.nodeMaxHash = nh &^ 1
		} else {
			b.nodeMaxHash = 0xfffffffe
			b.flags |= dxFlagLast
		}
		if i == 0 {
			b.flags |= dxFlagFirst
		}
	}
	me := &dd.blocks[db.lblk]
	me.minHash = minHash
	me.maxHash = maxHash
}

// clearHtree drops the index of a directory (answer yes) and schedules a
// rebuild.
func (w *dirWorker) clearHtree(dd *dxDirState, ino uint32) {
	dd.numBlocks = 0
	w.c.rehash[ino] = true
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
		blocks := d.blocks[:d.numBlocks]
		root := &blocks[0]
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
				q := p
				q.Code = problem.PR_2_HTREE_NOTREF
				c.fix(q)
				bad = true
			} else if x.flags&dxFlagDupRef != 0 {
				q := p
				q.Code = problem.PR_2_HTREE_DUPREF
				c.fix(q)
				bad = true
			}
		}
		if bad {
			c.fix(problem.Problem{Code: problem.PR_2_HTREE_CLEAR, Dir: ino})
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
				blocks[parent.previous].nodeMaxHash = parent.maxHash
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
		rl := ondisk.DecodeRecLen(binary.LittleEndian.Uint16(buf[off+4:]), blockSize)
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
		off = 8
	case d.RecLen == 12:
		d2, ok := ondisk.DecodeDirent(buf, 12, blockSize)
		if !ok || d2.RecLen != blockSize-12 || d2.NameLen != 2 {
			return 0, false
		}
		root, _ := ondisk.DecodeDxRootInfo(buf)
		if root.ReservedZero != 0 || root.InfoLength != 8 {
			return 0, false
		}
		off = 32
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
