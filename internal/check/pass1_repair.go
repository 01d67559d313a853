package check

import (
	"bytes"
	"errors"

	"gofsck/internal/bitmap"
	"gofsck/internal/ondisk"
)

// Pass 1 repairs: the "yes" paths of the inode checks.
//
// e2fsck fixes the inode it is scanning in memory and writes it at once
// (e2fsck_write_inode); the later checks of the same inode see the fixed
// copy. Pass 1 does the same on its copy n (a slice of the unit's
// inode-table buffer, or the deferred copy) and writes through putInode,
// which also remembers that the inode was written: e2fsck's last step
// rereads an inode whose checksum failed, and a written inode no longer
// fails (PR_1_INODE_ONLY_CSUM_INVALID is then not asked).
//
// Maps: e2fsck_clear_inode takes the inode out of the in-use, directory,
// regular and bad maps (atomic bitmaps; every pass-1 unit owns its
// inodes) and zeroes its link count (a per-inode slot). The blocks an
// inode claims are only marked once its checks have passed, so a cleared
// inode leaves nothing behind in blockFound, except after a failed block
// walk, where e2fsck restarts from the beginning (p1State.restart).

// p1State is a pass-1 unit's repair state (the Checker copy of one shard).
type p1State struct {
	// wrote is set when the inode being checked was written.
	wrote bool
	// restart is set when an inode was cleared after some of its blocks
	// were claimed (e2fsck's E2F_FLAG_RESTART).
	restart bool
	// restartLater is set when a mapping block (indirect or extent
	// tree) sits in critical metadata in a run that may write (e2fsck's
	// E2F_FLAG_RESTART_LATER): pass 1B moves it, and pass 2 starts the
	// check again after its directory walk.
	restartLater bool
	// rebuild holds the inodes queued for pass 1E (shared by the
	// shards; nil in a read-only run).
	rebuild *bitmap.Bitmap
	// lostFound is /lost+found as found before the scan (e2fsck's
	// ctx->lost_and_found), when repairing with dir_index.
	lostFound uint32
}

// pass1RepairSetup prepares a writable pass 1: the queue of directories
// to rebuild, and /lost+found (which is never queued).
func (c *Checker) pass1RepairSetup() {
	if !c.repairing() {
		return
	}
	if c.rehash == nil {
		c.rehash = map[uint32]bool{}
	}
	c.p1.rebuild = newRebuildMap(uint64(c.fs.InodesCount) + 1)
	for _, ino := range c.opt.Rebuild {
		if ino <= c.fs.InodesCount {
			c.p1.rebuild.Set(uint64(ino))
		}
	}
	if !c.sb.HasCompat(ondisk.CompatDirIndex) {
		return
	}
	// e2fsck_get_lost_and_found(ctx, 0): the library's lookup verifies
	// the root inode's and its blocks' checksums unless the root is to be
	// rebuilt (only with -D this early), and ext2fs_check_directory then
	// verifies the found inode's. A failure leaves no /lost+found, so a
	// large one is queued like any directory.
	var found uint32
	c.iterateDirOpt(ondisk.RootIno, !c.opt.OptimizeDirs, func(ino uint32, name []byte) bool {
		if string(name) == "lost+found" {
			found = ino
			return false
		}
		return true
	})
	if found != 0 && found <= c.fs.InodesCount {
		buf := make([]byte, c.fs.InodeSize)
		if c.fs.ReadInode(found, buf, make([]byte, c.fs.BlockSize)) == nil {
			if n := ondisk.Inode(buf); n.IsDir() && !c.inodeCsumFails(found, n) {
				c.p1.lostFound = found
			}
		}
	}
}

// p1Now is ctx->now as e2fsck stores it in i_dtime.
func (c *Checker) p1Now() uint32 { return uint32(c.opt.Now.Unix()) }

// putInode writes the inode being checked (e2fsck_write_inode).
func (c *Checker) putInode(ino uint32, n ondisk.Inode) {
	c.p1.wrote = true
	c.writeInode(ino, n)
}

// clearInode is e2fsck_clear_inode: the inode loses its links and flags,
// gets a deletion time, leaves the in-use maps (pass 2 then finds the
// entries naming it pointing to an unused inode) and is written. A
// reserved inode also loses its block map; the bad-blocks inode is zeroed.
func (c *Checker) clearInode(ino uint32, n ondisk.Inode, restart bool) {
	c.wipeInode(ino, n, c.p1Now())
	if restart {
		c.p1.restart = true
	}
	c.putInode(ino, n)
}

// setFeature turns on a feature in the in-memory superblock (written at
// the end of the run).
func (c *Checker) setIncompat(m uint32) { c.sb.SetFeatureIncompat(c.sb.FeatureIncompat() | m) }
func (c *Checker) setRoCompat(m uint32) { c.sb.SetFeatureRoCompat(c.sb.FeatureRoCompat() | m) }

// setInodeSize is ext2fs_inode_size_set: a size of 2 GiB or more turns on
// large_file (regular files) or large_dir (directories).
func (c *Checker) setInodeSize(n ondisk.Inode, size uint64) {
	if size >= 0x80000000 {
		switch {
		case n.IsReg():
			c.setRoCompat(ondisk.RoCompatLargeFile)
		case n.IsDir():
			c.setIncompat(ondisk.IncompatLargeDir)
		default:
			return // EXT2_ET_FILE_TOO_BIG: nothing changes
		}
	}
	n.SetSize(size)
}

// zeroInode is the "not clear" fix of the journal, quota and orphan-file
// inodes: the whole inode is zeroed and written.
func (c *Checker) zeroInode(ino uint32, n ondisk.Inode) {
	clear(n)
	c.linkInfo.Set(ino, 0)
	c.putInode(ino, n)
}

// dropEAInodeRefs takes back the references counted for EA inodes named
// by attributes that a fix removed.
func (c *Checker) dropEAInodeRefs(refs []uint32) {
	if len(refs) == 0 {
		return
	}
	c.shared.mu.Lock()
	for _, r := range refs {
		if c.shared.eaInodeRefs[r] > 1 {
			c.shared.eaInodeRefs[r]--
		} else {
			delete(c.shared.eaInodeRefs, r)
		}
	}
	c.shared.mu.Unlock()
}

// subIBlocks lowers the 32-bit i_blocks by n sectors, as the library's
// extent code does when it frees a tree block.
func subIBlocks(n ondisk.Inode, sectors uint32) {
	n.SetBlocksLo(n.BlocksLo() - sectors)
}

// ErrRestart is returned by Run when pass 1 cleared an inode after some
// of its blocks were claimed: e2fsck prints "Restarting e2fsck from the
// beginning..." and checks the filesystem again from the start. Call
// FlushForRestart, then open the filesystem afresh.
var ErrRestart = errors.New("check: restart from the beginning")

// FlushForRestart writes what e2fsck's closing of the filesystem writes
// before a restart: the bitmaps when the run changed them on disk (an
// orphan release, an early allocation: the library's dirty bitmaps), then
// the superblock (its write time set) and the group descriptors when a
// fix changed them in memory. The check after the restart reads them.
func (c *Checker) FlushForRestart() error {
	if !c.repairing() {
		return nil
	}
	c.repair.mu.Lock()
	blocks, inodes := len(c.repair.blockEdits) != 0, len(c.repair.inodeEdits) != 0
	c.repair.mu.Unlock()
	if blocks || inodes {
		d := c.loadBitmaps()
		c.applyOrphanEdits(d)
		c.writeDirtyBitmaps(d, blocks, inodes)
	}
	if !bytes.Equal(c.fs.SB, c.repair.origSB) || !c.repair.origGDT.matches(c.fs.GDT()) || c.superDirtyQuietly() {
		c.sb.SetWtime(uint32(c.opt.Now.Unix()))
		// Dropping a bad journal cleared EXT2_FLAG_MASTER_SB_ONLY.
		dropped := c.journalDropped
		c.writeSuperAndGDT(c.relocatedMeta() || dropped)
	}
	return c.WriteError()
}

// superDirtyQuietly reports a superblock changed by a fix that marks it
// dirty without counting as a change (a generated UUID, a time set back):
// the in-memory copy differs from the primary on the device. e2fsck's
// close before a restart writes it, and the check that follows reads it.
func (c *Checker) superDirtyQuietly() bool {
	buf := make([]byte, ondisk.SuperblockSize)
	if _, err := c.fs.Dev.ReadAt(buf, 1024); err != nil {
		return false
	}
	return len(c.fs.SB) >= ondisk.SuperblockSize && !bytes.Equal(buf, c.fs.SB[:ondisk.SuperblockSize])
}
