package check

import (
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Repair helpers of passes 2-4: the library's allocation statistics,
// e2fsck_clear_inode, deallocate_inode, e2fsck_adjust_inode_count and
// directory block writes with their checksums. Serial code only (repair
// runs the passes serially).

// groupStatsBlock is the accounting half of ext2fs_block_alloc_stats2:
// the group's free count, its BLOCK_UNINIT flag and the superblock's free
// count. The maps and the bitmap edit are done by allocBlock/freeBlock.
func (c *Checker) groupStatsBlock(blk uint64, inuse int) {
	f := c.fs
	if blk < f.FirstDataBlock || blk >= f.BlocksCount {
		return
	}
	g := f.GroupOfBlock(blk)
	gd := f.Group(g)
	gd.SetFreeBlocks(uint32(int64(gd.FreeBlocks()) - int64(inuse)))
	gd.SetFlags(gd.Flags() &^ ondisk.BgBlockUninit)
	gd.UpdateChecksum(c.sb, g)
	ratio := int64(1) << f.ClusterBits
	c.sb.SetFreeBlocksCount(uint64(int64(c.sb.FreeBlocksCount()) - int64(inuse)*ratio))
}

// releaseBlock is ext2fs_block_alloc_stats2(fs, blk, -1) with e2fsck's
// callback: the on-disk bitmap bit and counts, and the block found map
// unless the block is critical metadata.
func (c *Checker) releaseBlock(blk uint64) {
	f := c.fs
	if blk < f.FirstDataBlock || blk >= f.BlocksCount {
		return
	}
	cl := f.ClusterOf(blk)
	c.markBlockOnDisk(cl, false)
	if !c.blockMeta.Test(cl) {
		c.blockFound.Clear(cl)
	}
	c.groupStatsBlock(blk, -1)
}

// newBlock is ext2fs_new_block2 over the block found map followed by the
// marking and ext2fs_block_alloc_stats2(+1) that e2fsck's callers do.
func (c *Checker) newBlock(goal uint64) (uint64, bool) {
	blk, ok := c.allocBlock(goal)
	if !ok {
		return 0, false
	}
	c.groupStatsBlock(blk, 1)
	return blk, true
}

// inodeAllocStats is ext2fs_inode_alloc_stats2 (the on-disk bitmap and
// the group and superblock counts).
func (c *Checker) inodeAllocStats(ino uint32, inuse int, isDir bool) {
	f := c.fs
	if ino == 0 || ino > f.InodesCount {
		return
	}
	c.markInodeOnDisk(ino, inuse > 0)
	ipg := f.InodesPerGroup
	g := (ino - 1) / ipg
	gd := f.Group(g)
	gd.SetFreeInodes(uint32(int64(gd.FreeInodes()) - int64(inuse)))
	if isDir {
		gd.SetUsedDirs(uint32(int64(gd.UsedDirs()) + int64(inuse)))
	}
	gd.SetFlags(gd.Flags() &^ ondisk.BgInodeUninit)
	if f.GdtCsum {
		firstUnused := ipg - gd.ItableUnused() + g*ipg + 1 // ext2fs_inode_alloc_stats2's, wrapping
		if ino >= firstUnused {
			gd.SetItableUnused(g*ipg + ipg - ino)
		}
		gd.UpdateChecksum(c.sb, g)
	}
	c.sb.SetFreeInodesCount(uint32(int64(c.sb.FreeInodesCount()) - int64(inuse)))
}

// readFullInode reads inode ino into a new buffer (zeros when unreadable).
func (c *Checker) readFullInode(ino uint32) ondisk.Inode {
	f := c.fs
	buf := make([]byte, f.InodeSize)
	scratch := make([]byte, f.BlockSize)
	if err := f.ReadInode(ino, buf, scratch); err != nil {
		clear(buf)
	}
	return ondisk.Inode(buf)
}

// dtimeNow is ext2fs_set_dtime's value.
func (c *Checker) dtimeNow() uint32 {
	t := uint32(c.opt.Now.Unix())
	if t < c.fs.InodesCount {
		t = c.fs.InodesCount
	}
	return t
}

// zapInode is e2fsck_clear_inode after pass 1 (wipeInode), written back;
// the cached names are dropped.
func (c *Checker) zapInode(ino uint32, n ondisk.Inode) {
	c.wipeInode(ino, n, c.dtimeNow())
	c.writeInode(ino, n)
	c.invalidateNames()
}

// wipeInode is e2fsck_clear_inode but the write: no flags or links, the
// deletion time dtime, out of the in-use maps; a reserved inode also
// loses its block map, and the bad-blocks inode is zeroed.
func (c *Checker) wipeInode(ino uint32, n ondisk.Inode, dtime uint32) {
	n.SetFlags(0)
	n.SetLinksCount(0)
	if c.linkInfo != nil {
		c.linkInfo.Set(ino, 0)
	}
	n.SetDtime(dtime)
	if ino < c.fs.FirstIno {
		clear(n.IBlock())
	}
	c.inodeDir.Clear(uint64(ino))
	c.inodeUsed.Clear(uint64(ino))
	c.inodeReg.Clear(uint64(ino))
	c.inodeBad.Clear(uint64(ino))
	if ino == ondisk.BadBlocksIno {
		clear(n[:ondisk.GoodOldInodeSize])
	}
}

// deallocateInode is pass 2's deallocate_inode: the inode bitmap and
// counts, the EA block's reference, the inode's blocks, then
// e2fsck_clear_inode. It returns false when the run must stop.
func (c *Checker) deallocateInode(ino uint32) bool {
	n := c.readFullInode(ino)
	c.inodeAllocStats(ino, -1, n.IsDir())
	if acl := n.FileACL(c.sb.Is64bit()); acl != 0 && c.sb.HasCompat(ondisk.CompatExtAttr) {
		count, err := c.adjustEARefcount(acl, -1)
		if err != nil {
			c.fix(problem.Problem{Code: problem.PR_2_ADJ_EA_REFCOUNT, Ino: ino, Blk: acl})
			c.abort = true
			return false
		}
		if count == 0 {
			c.releaseBlock(acl)
		}
	}
	if c.hasValidBlocks(n) && n.Flags()&ondisk.FlagInlineData == 0 {
		if n.IsReg() && n.Size() >= 0x80000000 && c.stats.LargeFiles > 0 {
			c.stats.LargeFiles--
		}
		c.punchAll(n, c.releaseBlock) // which skips a block out of range
	}
	n = c.readFullInode(ino)
	c.zapInode(ino, n)
	return true
}

// adjustEARefcount is ext2fs_adjust_ea_refcount3: it changes the
// reference count of EA block blk by adj (in 32 bits, as the library
// does) and writes the block. A block number outside the filesystem
// counts as one reference (EXT2_ET_BAD_EA_BLOCK_NUM, which every caller
// takes so); a block that does not read as an EA block returns the
// library's error (ext2fs.ReadExtAttr).
func (c *Checker) adjustEARefcount(blk uint64, adj int) (uint32, error) {
	f := c.fs
	if blk >= f.BlocksCount || blk < f.FirstDataBlock {
		return 1, nil
	}
	buf := make([]byte, f.BlockSize)
	if err := ext2fs.ReadExtAttr(f, blk, buf); err != nil {
		return 0, err
	}
	x := ondisk.XattrBlock(buf)
	rc := uint32(int64(x.Refcount()) + int64(adj))
	x.SetRefcount(rc)
	if f.MetadataCsum {
		x.SetChecksum(f.CsumSeed, blk)
	}
	c.writeBlock(blk, buf)
	return rc, nil
}

// adjustInodeCount is e2fsck_adjust_inode_count (adj is +1 or -1).
func (c *Checker) adjustInodeCount(ino uint32, adj int) bool {
	if ino == 0 {
		return true
	}
	if ino > c.fs.InodesCount {
		return false // the inode cannot be read
	}
	n := c.readFullInode(ino)
	if adj > 0 {
		c.refCount.Add(ino)
		if n.LinksCount() == 0xFFFF {
			return true
		}
		c.linkInfo.Set(ino, c.linkInfo.Get(ino)+1)
		n.SetLinksCount(n.LinksCount() + 1)
	} else {
		if v := c.refCount.Get(ino); v > 0 {
			c.refCount.Set(ino, v-1)
		}
		if n.LinksCount() == 0 {
			return true
		}
		if v := c.linkInfo.Get(ino); v > 0 {
			c.linkInfo.Set(ino, v-1)
		}
		n.SetLinksCount(n.LinksCount() - 1)
	}
	c.writeInode(ino, n)
	return true
}

// dirGeneration is the i_generation used in dir's block checksums.
func (c *Checker) dirGeneration(dir uint32) uint32 {
	if di := c.findDir(dir); di != nil {
		return di.gen
	}
	return c.readFullInode(dir).Generation()
}

// setDirBlockCsum is ext2fs_dir_block_csum_set: the leaf tail or the
// htree node tail gets the block's checksum. It returns false when the
// block has room for neither.
func (c *Checker) setDirBlockCsum(buf []byte, dir uint32) bool {
	f := c.fs
	if !f.MetadataCsum {
		return true
	}
	bs := f.BlockSize
	gen := c.dirGeneration(dir)
	if direntTail(bs, buf) == tailOK {
		sum := ondisk.DirLeafChecksum(buf[:bs], f.CsumSeed, dir, gen)
		ondisk.SetDirTailChecksum(buf[:bs], sum)
		return true
	}
	countOff, ok := dxCountOffset(bs, buf)
	if !ok {
		return false
	}
	limit, count, _ := ondisk.DxCountLimit(buf, countOff)
	sum, _, ok := ondisk.DxChecksum(buf[:bs], countOff, limit, count, f.CsumSeed, dir, gen)
	if !ok {
		return false
	}
	ondisk.SetDxTailChecksum(buf, countOff, limit, sum)
	return true
}

// writeDirBlock is ext2fs_write_dir_block4: checksum, then write.
func (c *Checker) writeDirBlock(blk uint64, buf []byte, dir uint32) {
	c.setDirBlockCsum(buf, dir)
	c.writeBlock(blk, buf)
	c.invalidateNames()
}

// invalidateNames drops the path-name cache after a fix changed a
// directory.
func (c *Checker) invalidateNames() {
	for i := range c.names {
		c.names[i].valid = false
	}
}

// initDirTail writes an empty checksum tail at the end of a leaf block
// (ext2fs_initialize_dirent_tail).
func initDirTail(buf []byte, bs int) { ondisk.InitDirTail(buf[:bs]) }

// newDirBlock is ext2fs_new_dir_block: an empty block, or with dirIno
// set, '.' and '..' (parent); with metadata_csum a tail.
func (c *Checker) newDirBlock(dirIno, parent uint32) []byte {
	f := c.fs
	bs := f.BlockSize
	buf := make([]byte, bs)
	csumSize := 0
	if f.MetadataCsum {
		csumSize = ondisk.DirTailSize
	}
	var ft uint8
	if c.sb.HasIncompat(ondisk.IncompatFiletype) {
		ft = ondisk.FTDir
	}
	if dirIno == 0 {
		ext2fs.SetRecLen(buf, 0, bs-csumSize, bs)
	} else {
		ext2fs.PutDirent(buf, 0, dirIno, 12, 1, ft, bs)
		buf[8] = '.'
		ext2fs.PutDirent(buf, 12, parent, bs-12-csumSize, 2, ft, bs)
		buf[20], buf[21] = '.', '.'
	}
	if csumSize > 0 {
		initDirTail(buf, bs)
	}
	return buf
}

// unmarkValid is ext2fs_unmark_valid after a fix that failed: the run
// ends with "still has errors".
func (c *Checker) unmarkValid() { c.sink.MarkInvalid() }
