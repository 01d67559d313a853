package check

import (
	"errors"
	"sort"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// The "yes" paths of pass 3: creating the root and /lost+found,
// reconnecting inodes to /lost+found (also used by pass 4) and fixing
// '..' entries. Serial code only.

// Errors of the directory edits that are not among the library's codes
// (ext2fs.ErrDirNoSpace, ext2fs.ErrBlockAllocFail).
var (
	errDirCorrupted = errors.New("Corrupt directory")
	errExpandDir    = errors.New("Error while expanding directory")
)

// addDirInfo is e2fsck_add_dir_info for a directory created by a fix.
func (c *Checker) addDirInfo(ino, parent uint32) {
	if di := c.findDir(ino); di != nil {
		di.parent, di.dotdot = parent, parent
		return
	}
	i := sort.Search(len(c.dirs), func(i int) bool { return c.dirs[i].ino >= ino })
	c.dirs = append(c.dirs, dirInfo{})
	copy(c.dirs[i+1:], c.dirs[i:])
	c.dirs[i] = dirInfo{ino: ino, parent: parent, dotdot: parent}
}

// newInodeBytes is a zeroed inode of the mode as ext2fs_write_new_inode
// completes it.
func (c *Checker) newInodeBytes(mode uint16) ondisk.Inode {
	base := make(ondisk.Inode, ondisk.GoodOldInodeSize)
	base.SetMode(mode)
	return ext2fs.NewInode(c.fs, base, uint32(c.opt.Now.Unix()))
}

// writeNewDir writes directory ino as check_root and
// e2fsck_get_lost_and_found create it: mode, two links, one block blk
// holding '.' and '..' (parent).
func (c *Checker) writeNewDir(ino, parent uint32, mode uint16, blk uint64) ondisk.Inode {
	n := c.newInodeBytes(mode)
	n.SetSize(uint64(c.fs.BlockSize))
	n.SetLinksCount(2)
	n.SetBlocks(c.iblkOne())
	n.SetBlock(0, uint32(blk))
	c.writeInode(ino, n)
	c.writeDirBlock(blk, c.newDirBlock(ino, parent), ino)
	return n
}

// iblkOne is ext2fs_iblk_set(fs, inode, 1) for an inode without
// HUGE_FILE_FL: one cluster in 512-byte units.
func (c *Checker) iblkOne() uint64 {
	return uint64(c.fs.BlockSize/512) << c.fs.ClusterBits
}

// createRoot is check_root's "yes": a new root directory with one block.
// The block and inode are marked in the maps and bitmaps without the
// group counts, as e2fsck does (pass 5 then fixes those).
func (c *Checker) createRoot() bool {
	blk, ok := c.allocBlock(0)
	if !ok {
		c.fix(problem.Problem{Code: problem.PR_3_CREATE_ROOT_ERROR, Str: "ext2fs_new_block", Err: ext2fs.ErrBlockAllocFail.Error()})
		c.abort = true
		return false
	}
	n := c.writeNewDir(ondisk.RootIno, ondisk.RootIno, 0o40755, blk)
	c.addDirInfo(ondisk.RootIno, ondisk.RootIno)
	c.refCount.Set(ondisk.RootIno, 2)
	c.linkInfo.Set(ondisk.RootIno, 2)
	c.inodeUsed.Set(ondisk.RootIno)
	c.inodeDir.Set(ondisk.RootIno)
	c.markInodeOnDisk(ondisk.RootIno, true)
	c.chargeQuota(ondisk.RootIno, n, c.clusterBytes(), 1)
	return true
}

// clusterBytes is EXT2_CLUSTER_SIZE, the quota charge of a new block.
func (c *Checker) clusterBytes() uint64 { return uint64(c.fs.BlockSize) << c.fs.ClusterBits }

// lookupName returns the inode named name in dir (ext2fs_lookup). The
// blocks read until the name is found must pass their checksums, unless
// dir is queued for rebuilding (e2fsck then ignores checksum errors);
// failed is set when the lookup failed that way (or on a corrupt block).
func (c *Checker) lookupName(dir uint32, name string) (uint32, bool) {
	ino, found, _ := c.lookupNameErr(dir, name)
	return ino, found
}

// lookupNameErr is lookupName that also says whether the lookup failed.
func (c *Checker) lookupNameErr(dir uint32, name string) (ino uint32, found, failed bool) {
	ok := c.iterateDirOpt(dir, !c.rehash[dir], func(e uint32, n []byte) bool {
		if string(n) == name {
			ino, found = e, true
			return false
		}
		return true
	})
	return ino, found, !ok && !found
}

// getLostAndFound is e2fsck_get_lost_and_found: the /lost+found inode,
// created when fix is set and it is missing (0 when there is none).
func (c *Checker) getLostAndFound(fix bool) uint32 {
	if c.lpf != 0 {
		return c.lpf
	}
	const name = "lost+found"
	ino, found, failed := c.lookupNameErr(ondisk.RootIno, name)
	if !found && !fix {
		return 0
	}
	if failed {
		c.fix(problem.Problem{Code: problem.PR_3_ERR_FIND_LPF, Err: string(ext2fs.ErrDirCsumInvalid)})
	}
	if found {
		n := c.readFullInode(ino)
		unlink := false
		if fix && n.Flags()&ondisk.FlagInlineData != 0 {
			if !c.fix(problem.Problem{Code: problem.PR_3_LPF_INLINE_DATA}) {
				return 0
			}
			unlink = true
		} else if fix && n.Flags()&ondisk.FlagEncrypt != 0 {
			if !c.fix(problem.Problem{Code: problem.PR_3_LPF_ENCRYPTED}) {
				return 0
			}
			unlink = true
		}
		if !unlink {
			if ino <= c.fs.InodesCount && n.IsDir() {
				c.lpf = ino
				return ino
			}
			if !fix {
				return 0
			}
			if !c.fix(problem.Problem{Code: problem.PR_3_LPF_NOTDIR, Ino: ino}) {
				return 0
			}
		}
		if !c.unlinkName(ondisk.RootIno, name, ino) {
			c.fix(problem.Problem{Code: problem.PR_3_CREATE_LPF_ERROR, Str: "ext2fs_unlink", Err: errDirCorrupted.Error()})
			return 0
		}
		if di := c.findDir(ino); di != nil {
			di.parent = 0
		}
		c.adjustInodeCount(ino, -1)
		if n.IsDir() {
			// The old directory is cut off from the tree: e2fsck
			// goes on creating a new one and restarts the whole check
			// when pass 3 stops (lpfRestart).
			c.requestRestart()
		}
	}
	if !c.fix(problem.Problem{Code: problem.PR_3_NO_LF_DIR}) {
		return 0
	}
	blk, ok := c.newBlock(0)
	if !ok {
		if c.fix(problem.Problem{Code: problem.PR_3_LPF_NO_SPACE, Err: ext2fs.ErrBlockAllocFail.Error()}) {
			c.fix(problem.Problem{Code: problem.PR_3_NO_SPACE_TO_RECOVER})
			c.lpf = ondisk.RootIno
			return 0
		}
		// Declined: e2fsck reports the allocation's error.
		c.fix(problem.Problem{Code: problem.PR_3_ERR_LPF_NEW_BLOCK, Err: ext2fs.ErrBlockAllocFail.Error()})
		return 0
	}
	ino, ok = c.allocInode(ondisk.RootIno, true)
	if !ok {
		const errNoInode = "Could not allocate inode in ext2 filesystem"
		if c.fix(problem.Problem{Code: problem.PR_3_LPF_NO_SPACE, Err: errNoInode}) {
			c.fix(problem.Problem{Code: problem.PR_3_NO_SPACE_TO_RECOVER})
			c.lpf = ondisk.RootIno
			return 0
		}
		c.fix(problem.Problem{Code: problem.PR_3_ERR_LPF_NEW_INODE, Err: errNoInode})
		return 0
	}
	c.inodeAllocStats(ino, 1, true)
	n := c.writeNewDir(ino, ondisk.RootIno, 0o40700, blk)
	if err := c.linkName(ondisk.RootIno, name, ino, ondisk.FTDir, true); err != nil {
		c.fix(problem.Problem{Code: problem.PR_3_CREATE_LPF_ERROR, Str: "ext2fs_link", Err: err.Error()})
		return 0
	}
	c.addDirInfo(ino, ondisk.RootIno)
	c.adjustInodeCount(ondisk.RootIno, 1)
	c.refCount.Set(ino, 2)
	c.linkInfo.Set(ino, 2)
	c.lpf = ino
	c.chargeQuota(ino, n, c.clusterBytes(), 1)
	return ino
}

// reconnectFile is e2fsck_reconnect_file: link ino into /lost+found as
// #ino. It returns true when that failed.
func (c *Checker) reconnectFile(ino uint32) bool {
	if !c.badLPF && c.lpf == 0 {
		// ctx->lost_and_found takes the result, also when
		// get_lost_and_found chose the root directory and returned 0.
		if c.lpf = c.getLostAndFound(true); c.lpf == 0 {
			c.badLPF = true
		}
	}
	if c.badLPF {
		c.fix(problem.Problem{Code: problem.PR_3_NO_LPF, Ino: ino})
		return true
	}
	name := "#" + utoa(ino)
	var ft uint8
	if n := c.readFullInode(ino); n != nil {
		ft = ondisk.FileTypeOfMode(n.Mode())
	}
	err := c.linkName(c.lpf, name, ino, ft, false)
	if err == ext2fs.ErrDirNoSpace {
		if !c.fix(problem.Problem{Code: problem.PR_3_EXPAND_LF_DIR, Ino: ino}) {
			return true
		}
		added, xerr := c.expandDirectory(c.lpf, false)
		if xerr != nil {
			c.fix(problem.Problem{Code: problem.PR_3_CANT_EXPAND_LPF, Ino: ino, Err: xerr.Error()})
			return true
		}
		// e2fsck_expand_directory charges the new blocks to the quota
		// (ext2fs_expand_dir, used for the root, does not).
		c.chargeQuota(c.lpf, c.readFullInode(c.lpf), uint64(added)*c.clusterBytes(), 0)
		err = c.linkName(c.lpf, name, ino, ft, false)
	}
	if err != nil {
		c.fix(problem.Problem{Code: problem.PR_3_CANT_RECONNECT, Ino: ino, Err: err.Error()})
		return true
	}
	c.adjustInodeCount(ino, 1)
	return false
}

// dirDataBlocks returns dir's data blocks in the library's order (logical
// number, physical block), at most limit of them.
func (c *Checker) dirDataBlocks(n ondisk.Inode, limit int) (lblks []int64, pblks []uint64) {
	s := c.newScratch()
	c.iterateBlocks(s, n, func(b uint64, blockcnt int64) {
		if blockcnt < 0 || b == 0 || len(pblks) >= limit {
			return
		}
		lblks = append(lblks, blockcnt)
		pblks = append(pblks, b)
	})
	return lblks, pblks
}

// linkName is ext2fs_link on a linear directory: the first entry with room
// takes the name (splitting a live entry or reusing an empty one); with
// expand the directory grows by a block when none has room.
func (c *Checker) linkName(dir uint32, name string, ino uint32, ft uint8, expand bool) error {
	if !c.sb.HasIncompat(ondisk.IncompatFiletype) {
		ft = 0
	}
	for try := 0; try < 2; try++ {
		n := c.readFullInode(dir)
		if n.Flags()&ondisk.FlagInlineData != 0 {
			return ext2fs.ErrDirNoSpace
		}
		_, pblks := c.dirDataBlocks(n, 1<<20)
		switch err := ext2fs.LinkBlocks(c.libfs(), pblks, c.dirBlockWriter(dir), name, ino, ft); err {
		case nil:
			return nil
		case ext2fs.ErrDirCorrupted:
			return errDirCorrupted
		}
		if !expand {
			return ext2fs.ErrDirNoSpace
		}
		if _, err := c.expandDirectory(dir, true); err != nil {
			return err
		}
	}
	return ext2fs.ErrDirNoSpace
}

// unlinkName is ext2fs_unlink of name (naming ino) in dir: the entry is
// merged into the previous one, or emptied when first in its block.
func (c *Checker) unlinkName(dir uint32, name string, ino uint32) bool {
	_, pblks := c.dirDataBlocks(c.readFullInode(dir), 1<<20)
	return ext2fs.UnlinkBlocks(c.libfs(), pblks, c.dirBlockWriter(dir), name, ino) == nil
}

// dirBlockWriter writes a block of directory dir with its checksum.
func (c *Checker) dirBlockWriter(dir uint32) func(blk uint64, buf []byte) {
	return func(blk uint64, buf []byte) { c.writeDirBlock(blk, buf, dir) }
}

// expandDirectory is e2fsck_expand_directory(ctx, dir, 1, 0), or with lib
// the library's ext2fs_expand_dir: one new empty block at the end of the
// directory, mapped as the library's iterator with BLOCK_FLAG_APPEND maps
// it (a hole among the blocks is filled first; indirect blocks are
// allocated, extent nodes split, as needed). It returns how many blocks
// were allocated, mapping blocks included.
func (c *Checker) expandDirectory(dir uint32, lib bool) (int64, error) {
	f := c.fs
	n := c.readFullInode(dir)
	if n == nil || !n.IsDir() || n.Flags()&ondisk.FlagInlineData != 0 {
		return 0, errExpandDir
	}
	es := c.dirExpander(dir)
	es.Num, es.Lib = 1, lib
	err := es.Expand(n)
	if err == nil && lib && es.Num != 0 {
		err = errExpandDir
	}
	if err != nil {
		return 0, err
	}
	if lib {
		// ext2fs_expand_dir: one block more than i_size said.
		n.SetSize(n.Size() + uint64(f.BlockSize))
	} else {
		n.SetSize(uint64(es.LastBlock+1) * uint64(f.BlockSize))
	}
	_ = ext2fs.IblkAddBlocks(f, n, uint64(es.NewBlocks))
	c.writeInode(dir, n)
	return es.NewBlocks, nil
}

// adjustDotDot moves a '..' reference from old to parent, reporting an
// inode whose count cannot be adjusted as fix_dotdot_proc does.
func (c *Checker) adjustDotDot(old, parent uint32) {
	if !c.adjustInodeCount(old, -1) {
		c.fix(problem.Problem{Code: problem.PR_3_ADJUST_INODE, Err: string(ext2fs.ErrBadInodeNum)})
	}
	if !c.adjustInodeCount(parent, 1) {
		c.fix(problem.Problem{Code: problem.PR_3_ADJUST_INODE, Err: string(ext2fs.ErrBadInodeNum)})
	}
}

// fixDotDot is pass 3's fix_dotdot: dir's '..' names parent, the link
// counts follow, and the directory's recorded parent becomes /lost+found
// (as e2fsck records it).
func (c *Checker) fixDotDot(dir, parent uint32) {
	f := c.fs
	bs := f.BlockSize
	n := c.readFullInode(dir)
	ft := uint8(ondisk.FTDir)
	if !c.sb.HasIncompat(ondisk.IncompatFiletype) {
		ft = 0
	}
	done := false
	if n.Flags()&ondisk.FlagInlineData != 0 {
		c.adjustDotDot(n.Block(0), parent)
		n = c.readFullInode(dir)
		n.SetBlock(0, parent)
		c.writeInode(dir, n)
		done = true
	} else {
		_, pblks := c.dirDataBlocks(n, 1<<20)
		buf := make([]byte, bs)
	blocks:
		for _, pb := range pblks {
			if pb >= f.BlocksCount || f.ReadBlock(pb, buf) != nil {
				break
			}
			for off := 0; off < bs-8; {
				d, _ := ondisk.DecodeDirent(buf, off, bs)
				if off+d.RecLen > bs || d.RecLen < 8 || d.RecLen%4 != 0 || d.NameLen+8 > d.RecLen {
					break blocks
				}
				if d.NameLen == 2 && buf[off+8] == '.' && buf[off+9] == '.' {
					c.adjustDotDot(d.Ino, parent)
					ondisk.SetDirentIno(buf, off, parent)
					ondisk.SetDirentFileType(buf, off, ft)
					c.writeDirBlock(pb, buf, dir)
					done = true
					break blocks
				}
				off += d.RecLen
			}
		}
	}
	if !done {
		c.fix(problem.Problem{Code: problem.PR_3_FIX_PARENT_NOFIND, Ino: dir})
		c.unmarkValid()
	}
	if di := c.findDir(dir); di != nil {
		di.dotdot = parent
		di.parent = c.lpf
	} else {
		c.fix(problem.Problem{Code: problem.PR_3_NO_DIRINFO, Ino: dir})
	}
}
