package check

import (
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// checkInodeExtraSpace validates i_extra_isize, the in-inode EA area and
// the old pre-1970 timestamp encoding. It returns the quota blocks charged
// by EA inodes referenced from the inode body.
func (c *Checker) checkInodeExtraSpace(ino uint32, n ondisk.Inode) uint64 {
	f := c.fs
	if f.InodeSize == ondisk.GoodOldInodeSize {
		return 0
	}
	const minExtra = 4
	maxExtra := f.InodeSize - ondisk.GoodOldInodeSize
	e := int(n.ExtraIsize())
	if e != 0 && (e < minExtra || e > maxExtra || e&3 != 0) {
		if !c.fix(problem.Problem{Code: problem.PR_1_EXTRA_ISIZE, Ino: ino, Inode: c.inodeInfo(n)}) {
			return 0
		}
		if e < minExtra || e > maxExtra {
			e = int(c.sb.WantExtraIsize())
		} else {
			e = (e + 3) &^ 3
		}
		n.SetExtraIsize(uint16(e))
		c.putInode(ino, n)
	}
	if e >= maxExtra-4 {
		return 0
	}
	var quota uint64
	hdr := n[ondisk.GoodOldInodeSize+e:]
	if ondisk.HasXattrMagic(hdr) {
		quota = c.checkEAInInode(ino, n, hdr)
	}
	// Old encoding of pre-1970 times: sign bit set and both epoch bits set.
	if c.opt.Now.Unix() < extraNegativeDateCutoff {
		neg := func(base uint32, extra uint32, ok bool) bool {
			return ok && base&(1<<31) != 0 && extra&3 == 3
		}
		ce, cok := n.CtimeExtra()
		me, mok := n.MtimeExtra()
		ae, aok := n.AtimeExtra()
		re, rok := n.CrtimeExtra()
		crtime := uint32(0)
		if rok {
			crtime = n.Crtime()
		}
		if neg(n.Atime(), ae, aok) || neg(n.Ctime(), ce, cok) || neg(crtime, re, rok) || neg(n.Mtime(), me, mok) {
			if !c.fix(problem.Problem{Code: problem.PR_1_EA_TIME_OUT_OF_RANGE, Ino: ino, Inode: c.inodeInfo(n)}) {
				return quota
			}
			// The epoch bits of each bad time are cleared.
			fixExtra := func(set func(uint32), base uint32, extra uint32, ok bool) {
				if neg(base, extra, ok) {
					set(extra &^ 3)
				}
			}
			fixExtra(n.SetAtimeExtra, n.Atime(), ae, aok)
			fixExtra(n.SetCtimeExtra, n.Ctime(), ce, cok)
			fixExtra(n.SetCrtimeExtra, crtime, re, rok)
			fixExtra(n.SetMtimeExtra, n.Mtime(), me, mok)
			c.putInode(ino, n)
		}
	}
	return quota
}

// extraNegativeDateCutoff is 2242-03-16, after which the old encoding can
// no longer be told apart from real dates.
const extraNegativeDateCutoff = 5 * (int64(1) << 32) / 2

// checkEAInInode validates the in-inode EA entries in area (starting with
// the 4-byte magic). Any failure is one problem that wipes them all.
func (c *Checker) checkEAInInode(ino uint32, n ondisk.Inode, area []byte) uint64 {
	size := len(area)
	used := regions{max: size}
	used.add(0, 4)
	remain := size - 4
	entries := area[4:]
	var code problem.Code
	var num uint64
	var quota uint64
	var refs []uint32 // EA inodes counted as referenced
	off := 0
	// The walk stops, as e2fsck's, when less than an entry header remains
	// (values count) or at the end marker; the marker's 4 bytes, wherever
	// the walk stopped, must then fit the area without overlapping.
	// remain never exceeds what is left of entries after off.
	for code == 0 && remain >= ondisk.XattrEntrySize && !ondisk.XattrEndAt(entries, off) {
		nameLen := int(entries[off])
		if !used.add(4+off, ondisk.XattrEntryLen(nameLen)) {
			code = problem.PR_1_INODE_EA_ALLOC_COLLISION
			break
		}
		remain -= ondisk.XattrEntrySize
		if (nameLen+3)&^3 > remain {
			code, num = problem.PR_1_ATTR_NAME_LEN, uint64(nameLen)
			break
		}
		remain -= (nameLen + 3) &^ 3
		e, _, ok := ondisk.DecodeXattrEntry(entries, off)
		if !ok {
			code = problem.PR_1_INODE_EA_ALLOC_COLLISION
			break
		}
		if e.ValueInum == 0 {
			if int64(e.ValueSize) > int64(remain) {
				code, num = problem.PR_1_ATTR_VALUE_SIZE, uint64(e.ValueSize)
				break
			}
			if e.ValueSize != 0 && !used.add(4+e.ValueOffs, (int(e.ValueSize)+3)&^3) {
				code = problem.PR_1_INODE_EA_ALLOC_COLLISION
				break
			}
			// The hash runs over whole words: the padding bytes count
			// as they are on disk (ext2fs_ext_attr_hash_entry). An
			// empty value may have any offset: only the name is hashed.
			var value []byte
			if e.ValueSize != 0 {
				value = entries[e.ValueOffs:min(len(entries), e.ValueOffs+(int(e.ValueSize)+3)&^3)]
			}
			if e.Hash != 0 && !ext2fs.EAHashMatches(e, value) {
				code, num = problem.PR_1_ATTR_HASH, uint64(e.Hash)
				break
			}
			remain -= int(e.ValueSize)
		} else {
			if e.ValueInum >= c.fs.FirstIno && e.ValueInum <= c.fs.InodesCount {
				refs = append(refs, e.ValueInum)
			}
			q, pc, pn := c.checkEAInodeRef(ino, e)
			if pc != 0 {
				code, num = pc, pn
				break
			}
			quota += q
		}
		off += e.EntryBytes
	}
	if code == 0 && !used.add(4+off, 4) {
		code = problem.PR_1_INODE_EA_ALLOC_COLLISION
	}
	if code != 0 && c.fix(problem.Problem{Code: code, Ino: ino, Num: num, Inode: c.inodeInfo(n)}) {
		// Every attribute in the inode goes: the area's magic is zeroed,
		// and the EA inodes it named are not referenced.
		clear(area[:4])
		c.putInode(ino, n)
		c.dropEAInodeRefs(refs)
		return 0
	}
	return quota
}

// checkEAInodeRef validates a reference to an EA-value inode (e2fsck
// 1.47.0's check_large_ea_inode). It returns the quota charge, or a
// problem code with its number.
func (c *Checker) checkEAInodeRef(ino uint32, e ondisk.XattrEntry) (uint64, problem.Code, uint64) {
	f := c.fs
	if e.ValueInum < f.FirstIno || e.ValueInum > f.InodesCount {
		return 0, problem.PR_1_ATTR_VALUE_EA_INODE, uint64(e.ValueInum)
	}
	c.shared.mu.Lock()
	c.shared.eaInodeRefs[e.ValueInum]++
	c.shared.mu.Unlock()
	buf := make([]byte, f.InodeSize)
	scratch := make([]byte, f.BlockSize)
	if err := f.ReadInode(e.ValueInum, buf, scratch); err != nil {
		clear(buf)
	}
	t := ondisk.Inode(buf)
	h := ondisk.XattrNameHash(e.Name, false)
	h = h<<16 ^ h>>16 ^ t.Atime()
	hs := ondisk.XattrNameHash(e.Name, true)
	hs = hs<<16 ^ hs>>16 ^ t.Atime()
	var quota uint64
	if h == e.Hash || hs == e.Hash {
		cl := uint64(f.BlockSize) << f.ClusterBits
		quota = (uint64(e.ValueSize) + cl - 1) / cl << f.ClusterBits
	} else {
		self := make([]byte, f.InodeSize)
		if f.ReadInode(ino, self, scratch) != nil {
			clear(self)
		}
		if !(t.Mtime() == ino && t.Generation() == ondisk.Inode(self).Generation()) {
			if t.Flags()&ondisk.FlagEAInode == 0 {
				return 0, problem.PR_1_ATTR_VALUE_EA_INODE, uint64(e.ValueInum)
			}
			return 0, problem.PR_1_ATTR_HASH, uint64(e.Hash)
		}
	}
	if t.Flags()&ondisk.FlagEAInode == 0 {
		if !c.fix(problem.Problem{Code: problem.PR_1_ATTR_SET_EA_INODE_FL, Ino: ino, Num: uint64(e.ValueInum)}) {
			return 0, problem.PR_1_ATTR_NO_EA_INODE_FL, uint64(e.ValueInum)
		}
		t.SetFlags(t.Flags() | ondisk.FlagEAInode)
		c.writeInode(e.ValueInum, t)
	}
	return quota, 0, 0
}

// regions tracks used byte ranges to detect overlapping EA structures.
type regions struct {
	max int // size of the area; 0 means unbounded
	r   [][2]int
}

// add records [off, off+n) and reports false if it overlaps a previous one.
func (g *regions) add(off, n int) bool {
	if n < 0 || off < 0 || (g.max > 0 && off+n > g.max) {
		return false
	}
	for _, x := range g.r {
		if off < x[1] && x[0] < off+n {
			return false
		}
	}
	g.r = append(g.r, [2]int{off, off + n})
	return true
}

// checkIsReallyDir is e2fsck's check_is_really_dir: a special file whose
// first block looks like a directory is offered to become one.
func (c *Checker) checkIsReallyDir(s *inodeScratch, ino uint32, n ondisk.Inode) {
	mode := n.Type()
	if mode == ondisk.SIFDIR || mode == ondisk.SIFREG || mode == ondisk.SIFLNK || n.Block(0) == 0 {
		return
	}
	f := c.fs
	flags := n.Flags()
	extentFS := c.sb.HasIncompat(ondisk.IncompatExtents)
	inlineFS := c.sb.HasIncompat(ondisk.IncompatInlineData)
	var buf []byte
	if inlineFS && flags&ondisk.FlagInlineData != 0 {
		// The inline data must be readable with a size that is a multiple
		// of 4; then the 4-byte parent and the first entry's inode (which
		// may be 0, not another reserved inode) must be sane and its
		// rec_len must fit the rest of i_block.
		sz, ok := c.libInlineDataSize(n)
		if !ok || sz&3 != 0 {
			return
		}
		ib := n.IBlock()
		dotdot := ondisk.InlineDirParent(ib)
		if dotdot >= f.InodesCount || (dotdot < f.FirstIno && dotdot != ondisk.RootIno) {
			return
		}
		d, ok := ondisk.DecodeDirent(ib, 4, f.BlockSize)
		if !ok || d.Ino >= f.InodesCount || (d.Ino < f.FirstIno && d.Ino != 0) ||
			d.RecLen > ondisk.IBlockSize-4 {
			return
		}
		c.treatAsDirectory(ino, n)
		return
	}
	var blk uint64
	notDevice := false
	if extentFS && flags&ondisk.FlagExtents != 0 {
		notDevice = true // device files are never extent mapped
		h := ondisk.ExtentHeader(n.IBlock())
		if h.Verify() != nil || h.Entries() == 0 || h.Depth() != 0 {
			return
		}
		x := h.Leaf(0)
		if x.Lblk != 0 || x.Len == 0 {
			return
		}
		blk = x.Pblk
	} else {
		// Every block must be in range; one past the fourth rules out a
		// device.
		for i := 0; i < ondisk.NBlocks; i++ {
			b := n.Block(i)
			if b == 0 {
				continue
			}
			if i >= 4 {
				notDevice = true
			}
			if uint64(b) < f.FirstDataBlock || uint64(b) >= f.BlocksCount {
				return
			}
		}
		blk = uint64(n.Block(0))
	}
	// Devices with one link and a plausible rdev layout are left alone.
	if (mode == ondisk.SIFCHR || mode == ondisk.SIFBLK) && n.LinksCount() == 1 && !notDevice {
		return
	}
	if blk < f.FirstDataBlock || blk >= f.BlocksCount {
		return
	}
	buf = s.blk2
	if c.readBlockIO(s, blk, buf) != nil {
		return
	}
	// ext2fs_read_dir_block4 fails on a block that does not pass its
	// checksum (or has neither a dirent tail nor an htree count).
	if f.MetadataCsum && (c.csumInodeRereadFails(s, ino) ||
		!dirBlockCsumOK(f.BlockSize, buf, f.CsumSeed, ino, n.Generation())) {
		return
	}
	d, ok := ondisk.DecodeDirent(buf, 0, f.BlockSize)
	if !ok || d.NameLen != 1 || buf[8] != '.' || d.Ino != ino || d.RecLen < 12 || d.RecLen%4 != 0 || d.RecLen >= f.BlockSize-12 {
		return
	}
	d2, ok := ondisk.DecodeDirent(buf, d.RecLen, f.BlockSize)
	if !ok || d2.NameLen != 2 || buf[d.RecLen+8] != '.' || buf[d.RecLen+9] != '.' ||
		d2.RecLen < 12 || d2.RecLen%4 != 0 {
		return
	}
	c.treatAsDirectory(ino, n)
}

// checkEncryption validates the encryption context of an ENCRYPT_FL inode
// (failedCsum: its checksum failed when pass 1 read it). It returns false
// when the inode was cleared.
func (c *Checker) checkEncryption(ino uint32, n ondisk.Inode, failedCsum bool) bool {
	ctx, found := c.encryptionXattr(n, failedCsum) // encxattr.go
	if !found {
		if c.fix(problem.Problem{Code: problem.PR_1_MISSING_ENCRYPTION_XATTR, Ino: ino, Inode: c.inodeInfo(n)}) {
			n.SetFlags(n.Flags() &^ ondisk.FlagEncrypt)
			c.putInode(ino, n)
		}
		return true
	}
	policy, ok := encryptionPolicy(ctx)
	if !ok {
		return !c.fix(problem.Problem{Code: problem.PR_1_CORRUPT_ENCRYPTION_XATTR, Ino: ino, Inode: c.inodeInfo(n)})
	}
	c.shared.mu.Lock()
	c.shared.encPolicy[ino] = policy
	c.shared.mu.Unlock()
	return true
}

// unrecognizedPolicy stands for a context of an unknown version; all such
// inodes count as having the same policy.
const unrecognizedPolicy = "?"

// encryptionPolicy extracts the policy (the context without its nonce)
// from an fscrypt context: v1 is 28 bytes, v2 40; ok is false when the
// context is corrupt.
func encryptionPolicy(ctx []byte) (string, bool) {
	if len(ctx) < 1 {
		return "", false
	}
	switch ctx[0] {
	case 0:
		return "", false
	case 1:
		if len(ctx) != 28 {
			return "", false
		}
		return string(ctx[:12]), true
	case 2:
		if len(ctx) != 40 {
			return "", false
		}
		return string(ctx[:24]), true
	}
	return unrecognizedPolicy, true
}

// symlinkOK is e2fsck's symlink rule (spec 3.2).
func (c *Checker) symlinkOK(s *inodeScratch, ino uint32, n ondisk.Inode) bool {
	f := c.fs
	if n.SizeHigh() != 0 || n.Size() == 0 || n.Flags()&ondisk.FlagIndex != 0 {
		return false
	}
	size := n.Size()
	if n.Flags()&ondisk.FlagInlineData != 0 {
		if n.Flags()&ondisk.FlagExtents != 0 {
			return false
		}
		// ext2fs_inline_data_size reads the inode by number, a read that
		// fails on its checksum (as it is on disk: a fix written since
		// stored a good one in n too).
		if c.inodeCsumFails(ino, n) {
			return false
		}
		sz, ok := c.libInlineDataSize(n)
		return ok && uint64(sz) == size
	}
	encrypted := n.Flags()&ondisk.FlagEncrypt != 0
	if ext2fs.IsFastSymlink(n) {
		if n.Flags()&ondisk.FlagExtents != 0 {
			return false
		}
		ib := n.IBlock()
		var l int
		if encrypted {
			l = ondisk.EncryptedSymlinkLen(ib)
		} else {
			l = cstrLen(ib)
		}
		return l < ondisk.IBlockSize && uint64(l) == size
	}
	var blk uint64
	if n.Flags()&ondisk.FlagExtents != 0 {
		h := ondisk.ExtentHeader(n.IBlock())
		if h.Verify() != nil || h.Entries() != 1 || h.Depth() != 0 {
			return false
		}
		x := h.Leaf(0)
		if x.Lblk != 0 || x.Len != 1 {
			return false
		}
		blk = x.Pblk
	} else {
		blk = uint64(n.Block(0))
		for i := 1; i < ondisk.NBlocks; i++ {
			if n.Block(i) != 0 {
				return false
			}
		}
	}
	if blk < f.FirstDataBlock || blk >= f.BlocksCount {
		return false
	}
	if size >= uint64(f.BlockSize) {
		return false
	}
	if c.readBlockIO(s, blk, s.blk2) != nil {
		return false
	}
	var l int
	if encrypted {
		l = ondisk.EncryptedSymlinkLen(s.blk2)
	} else {
		l = cstrLen(s.blk2)
	}
	return l < f.BlockSize && uint64(l) == size
}

func cstrLen(b []byte) int {
	for i, x := range b {
		if x == 0 {
			return i
		}
	}
	return len(b)
}

// xattrsReadable reports whether the library could read all of an inode's
// extended attributes: the in-inode entries must fit their area and the
// EA block, if any, must have a valid header (and checksum).
func (c *Checker) xattrsReadable(n ondisk.Inode) bool {
	return ext2fs.XattrsReadInode(c.fs, n, false) == ext2fs.XattrReadOK
}

// treatAsDirectory offers to make an inode that looks like a directory
// one (PR_1_TREAT_AS_DIRECTORY): its type becomes a directory.
func (c *Checker) treatAsDirectory(ino uint32, n ondisk.Inode) {
	if c.fix(problem.Problem{Code: problem.PR_1_TREAT_AS_DIRECTORY, Ino: ino, Inode: c.inodeInfo(n)}) {
		n.SetMode(n.Mode()&0o7777 | ondisk.SIFDIR)
		c.putInode(ino, n)
	}
}
