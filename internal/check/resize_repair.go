package check

import (
	"encoding/binary"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Recreating the resize inode. check_resize_inode clears an invalid resize
// inode (PR_0_RESIZE_INODE_INVALID, "Recreate") and asks for it to be
// rebuilt, as it does silently when inode 7 cannot be read; once pass 1
// has mapped the blocks in use, e2fsck runs the library's
// ext2fs_create_resize_inode (a double-indirect block listing the
// reserved GDT blocks, each listing its copies in the backup groups) and
// stamps the inode's mtime.

func init() {
	canRepair(problem.PR_0_RESIZE_INODE_INVALID, problem.PR_1_RESIZE_INODE_CREATE)
}

// Inode field offsets the re-creation sets (struct ext2_inode_large).
const (
	inoAtime      = 0x08
	inoCtime      = 0x0C
	inoMtime      = 0x10
	inoLinks      = 0x1A
	inoBlocksLo   = 0x1C
	inoBlock      = 0x28
	inoSizeHigh   = 0x6C
	inoBlocksHi   = 0x74
	inoExtraIsize = 0x80
	inoCrtime     = 0x90
)

// clearResizeInode is the "yes" of PR_0_RESIZE_INODE_INVALID: the base
// inode (the first 128 bytes, what e2fsck's struct ext2_inode covers) is
// zeroed, the rest kept, and the re-creation is due at pass 1's end.
func (c *Checker) clearResizeInode(n ondisk.Inode) {
	w := make(ondisk.Inode, len(n))
	copy(w, n)
	clear(w[:min(len(w), ondisk.GoodOldInodeSize)])
	c.writeInode(ondisk.ResizeIno, w)
	c.repair.reloc.resize = true
}

// recreateResizeInode is the end of pass 1 when the resize inode is due:
// ext2fs_create_resize_inode, PR_1_RESIZE_INODE_CREATE when it fails
// (declining aborts the run), then the inode's mtime set to now.
func (c *Checker) recreateResizeInode() {
	r := &c.repair.reloc
	if !r.resize {
		return
	}
	r.resize = false
	if msg := c.createResizeInode(); msg != "" {
		if c.abort {
			return
		}
		if !c.fix(problem.Problem{Code: problem.PR_1_RESIZE_INODE_CREATE, Err: msg}) {
			c.abort = true
			return
		}
	}
	n, ok := c.readResizeInode()
	if !ok {
		// e2fsck stops with a fatal read error here.
		c.unsupported(problem.PR_1_RESIZE_INODE_CREATE)
		return
	}
	binary.LittleEndian.PutUint32(n[inoMtime:], uint32(c.opt.Now.Unix()))
	c.writeInode(ondisk.ResizeIno, n)
}

// readResizeInode reads inode 7 as ext2fs_read_inode does (a checksum
// that does not verify is an error).
func (c *Checker) readResizeInode() (ondisk.Inode, bool) {
	f := c.fs
	buf := make([]byte, f.InodeSize)
	if f.ReadInode(ondisk.ResizeIno, buf, make([]byte, f.BlockSize)) != nil {
		return nil, false
	}
	n := ondisk.Inode(buf)
	if f.MetadataCsum && !n.ChecksumValid(f.CsumSeed, ondisk.ResizeIno) {
		return nil, false
	}
	return n, true
}

// createResizeInode is ext2fs_create_resize_inode. It returns the error
// message of a failure ("" on success); a failure gofsck cannot follow
// stops the run (c.abort, with the problem marked unsupported).
func (c *Checker) createResizeInode() string {
	f := c.fs
	sb := c.sb
	bs := f.BlockSize
	full, ok := c.readResizeInode()
	if !ok {
		c.unsupported(problem.PR_1_RESIZE_INODE_CREATE)
		return "unreadable"
	}
	// The library works on the 128-byte base inode and writes it back as
	// a new inode.
	n := make(ondisk.Inode, ondisk.GoodOldInodeSize)
	copy(n, full)
	now := uint32(c.opt.Now.Unix())
	sbBlk := uint32(f.FirstDataBlock)
	if bs == 1024 && sbBlk == 0 {
		sbBlk = 1 // 1 KiB blocks with bigalloc
	}
	apb := uint32(bs / 4)
	dind := n.Block(dindSlot)
	dindBuf := make([]byte, bs)
	dindDirty, inodeDirty := false, false
	var msg string
	if dind != 0 {
		if !c.readTableBlock(uint64(dind), dindBuf) {
			return string(ext2fs.ErrShortRead)
		}
	} else {
		goal := sbBlk + f.DescBlocks + uint32(sb.ReservedGdtBlocks()) + 2 + f.InodeBlocksPerGroup
		// Through e2fsck's allocator: fs->block_map is marked only if
		// something loaded it before (else pass 5 finds the block, as
		// after a revision 0 superblock gained resize_inode).
		var blk uint64
		var ok bool
		if c.libBlockMapUnloaded() {
			blk, ok = c.unloadedAllocBlock(uint64(goal))
		} else {
			blk, ok = c.newBlock(uint64(goal))
		}
		if !ok {
			return string(ext2fs.ErrBlockAllocFail)
		}
		dind = uint32(blk)
		binary.LittleEndian.PutUint16(n[0:], ondisk.SIFREG|0o600)
		binary.LittleEndian.PutUint16(n[inoLinks:], 1)
		binary.LittleEndian.PutUint32(n[inoBlock+4*dindSlot:], dind)
		c.setIblocks(n, 1)
		dindDirty, inodeDirty = true, true
		size := (uint64(apb)*uint64(apb) + uint64(apb) + 12) * uint64(bs)
		if size >= 0x80000000 && !sb.HasRoCompat(ondisk.RoCompatLargeFile) {
			sb.SetFeatureRoCompat(sb.FeatureRoCompat() | ondisk.RoCompatLargeFile)
		}
		binary.LittleEndian.PutUint32(n[0x04:], uint32(size))
		binary.LittleEndian.PutUint32(n[inoSizeHigh:], uint32(size>>32))
		binary.LittleEndian.PutUint32(n[inoCtime:], now)
	}
	gdtBuf := make([]byte, bs)
	gdtOff, gdtBlk := f.DescBlocks, sbBlk+1+f.DescBlocks
	for rsv := uint32(0); rsv < uint32(sb.ReservedGdtBlocks()) && msg == ""; rsv, gdtOff, gdtBlk = rsv+1, gdtOff+1, gdtBlk+1 {
		gdtOff %= apb
		gdtDirty := false
		switch binary.LittleEndian.Uint32(dindBuf[4*gdtOff:]) {
		case 0:
			gdtDirty, dindDirty, inodeDirty = true, true, true
			clear(gdtBuf)
			binary.LittleEndian.PutUint32(dindBuf[4*gdtOff:], gdtBlk)
			c.addIblocks(n, 1)
		case gdtBlk:
			if !c.readTableBlock(uint64(gdtBlk), gdtBuf) {
				msg = string(ext2fs.ErrShortRead)
				continue
			}
		default:
			msg = string(ext2fs.ErrResizeInodeCorrupt)
			continue
		}
		it := backupIter{three: 1, five: 5, seven: 7}
		for last := uint32(0); ; last++ {
			grp := it.next(sb, f.Groups)
			if grp >= uint64(f.Groups) {
				break
			}
			if last >= apb {
				// The library would write past its buffer.
				msg = string(ext2fs.ErrResizeInodeCorrupt)
				break
			}
			expect := gdtBlk + uint32(grp)*f.BlocksPerGroup
			switch binary.LittleEndian.Uint32(gdtBuf[4*last:]) {
			case 0:
				binary.LittleEndian.PutUint32(gdtBuf[4*last:], expect)
				c.addIblocks(n, 1)
				gdtDirty, inodeDirty = true, true
			case expect:
			default:
				msg = string(ext2fs.ErrResizeInodeCorrupt)
			}
			if msg != "" {
				break
			}
		}
		if msg == "" && gdtDirty {
			c.writeTableBlock(uint64(gdtBlk), gdtBuf)
		}
	}
	if dindDirty {
		c.writeTableBlock(uint64(dind), dindBuf)
	}
	if inodeDirty {
		binary.LittleEndian.PutUint32(n[inoAtime:], now)
		binary.LittleEndian.PutUint32(n[inoMtime:], now)
		c.writeNewInode(ondisk.ResizeIno, n, now)
	}
	return msg
}

// readTableBlock reads block blk of an indirect table; false when it is
// outside the filesystem or unreadable.
func (c *Checker) readTableBlock(blk uint64, buf []byte) bool {
	return blk < c.fs.BlocksCount && c.fs.ReadBlock(blk, buf) == nil
}

// writeTableBlock writes an indirect table block inside the filesystem.
func (c *Checker) writeTableBlock(blk uint64, buf []byte) {
	if blk < c.fs.BlocksCount {
		c.writeBlock(blk, buf)
	}
}

// writeNewInode is ext2fs_write_new_inode: base holds the 128-byte inode;
// its zero times become now and, in a large inode, everything past the
// base is zero but i_extra_isize and i_crtime (now).
func (c *Checker) writeNewInode(ino uint32, base ondisk.Inode, now uint32) {
	for _, off := range []int{inoCtime, inoMtime, inoAtime} {
		if binary.LittleEndian.Uint32(base[off:]) == 0 {
			binary.LittleEndian.PutUint32(base[off:], now)
		}
	}
	n := make(ondisk.Inode, c.fs.InodeSize)
	copy(n, base)
	if len(n) > ondisk.GoodOldInodeSize {
		binary.LittleEndian.PutUint16(n[inoExtraIsize:], largeInodeExtra)
		if len(n) >= inoCrtime+4 {
			binary.LittleEndian.PutUint32(n[inoCrtime:], now)
		}
	}
	c.writeInode(ino, n)
}

// iblocksUnit is what one block adds to i_blocks (ext2fs_iblk_add_blocks):
// 512-byte sectors unless the inode counts in blocks (huge_file with
// EXT4_HUGE_FILE_FL), times the cluster ratio.
func (c *Checker) iblocksUnit(n ondisk.Inode) uint64 {
	u := uint64(1) << c.fs.ClusterBits
	if !c.sb.HasRoCompat(ondisk.RoCompatHugeFile) || n.Flags()&ondisk.FlagHugeFile == 0 {
		u *= uint64(c.fs.BlockSize / 512)
	}
	return u
}

// setIblocks is ext2fs_iblk_set(n, blocks).
func (c *Checker) setIblocks(n ondisk.Inode, blocks uint64) {
	c.storeIblocks(n, blocks*c.iblocksUnit(n))
}

// addIblocks is ext2fs_iblk_add_blocks(n, blocks); like the library's
// callers here, an overflow leaves i_blocks as it was.
func (c *Checker) addIblocks(n ondisk.Inode, blocks uint64) {
	b := uint64(n.BlocksLo())
	if c.sb.HasRoCompat(ondisk.RoCompatHugeFile) {
		b |= uint64(n.BlocksHi()) << 32
	}
	c.storeIblocks(n, b+blocks*c.iblocksUnit(n))
}

// storeIblocks stores i_blocks (the high half with huge_file; without
// it a value past 32 bits is not stored).
func (c *Checker) storeIblocks(n ondisk.Inode, b uint64) {
	if c.sb.HasRoCompat(ondisk.RoCompatHugeFile) {
		binary.LittleEndian.PutUint16(n[inoBlocksHi:], uint16(b>>32))
	} else if b>>32 != 0 {
		return
	}
	binary.LittleEndian.PutUint32(n[inoBlocksLo:], uint32(b))
}

// backupIter walks the groups holding backup superblock and descriptor
// copies in the library's order (list_backups): s_backup_bgs with
// sparse_super2, every group without sparse_super, else the powers of 3,
// 5 and 7. next returns a value >= groups when there are no more.
type backupIter struct {
	three, five, seven uint64
}

func (it *backupIter) next(sb ondisk.Superblock, groups uint32) uint64 {
	if sb.HasCompat(ondisk.CompatSparseSuper2) {
		if it.three == 1 {
			it.three++
			if b := sb.BackupBG(0); b != 0 {
				return uint64(b)
			}
		}
		if it.three == 2 {
			it.three++
			if b := sb.BackupBG(1); b != 0 {
				return uint64(b)
			}
		}
		return uint64(groups)
	}
	if !sb.HasRoCompat(ondisk.RoCompatSparseSuper) {
		r := it.three
		it.three++
		return r
	}
	p, mult := &it.three, uint64(3)
	if it.five < *p {
		p, mult = &it.five, 5
	}
	if it.seven < *p {
		p, mult = &it.seven, 7
	}
	r := *p
	*p *= mult
	return r
}
