package check

import (
	"encoding/binary"
	"fmt"
	"slices"

	"gofsck/internal/csum"
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Fixes of assorted problems whose "yes" path is made where the problem
// is reported:
//
//   - PR_6_ORPHAN_PRESENT_NO_FILE (checkOrphanFileEnd): the orphan_present
//     feature is cleared from the superblock, as e2fsck's main does.
//   - PR_6_ORPHAN_FILE_WITHOUT_JOURNAL (checkOrphanFileEnd): the orphan
//     file is truncated and its features cleared (truncateOrphanFile).
//   - PR_6_ORPHAN_FILE_CORRUPTED (checkOrphanFileEnd): the orphan file
//     is truncated and created anew (recreateOrphanFile).
//   - PR_3_LPF_INLINE_DATA, PR_3_LPF_ENCRYPTED (getLostAndFound): the old
//     /lost+found is unlinked, a new one created, and the check restarts
//     when pass 3 stops, as e2fsck's E2F_FLAG_RESTART.
func init() {
	canRepair(problem.PR_6_ORPHAN_PRESENT_NO_FILE, problem.PR_6_ORPHAN_FILE_WITHOUT_JOURNAL,
		problem.PR_6_ORPHAN_FILE_CORRUPTED, problem.PR_3_LPF_INLINE_DATA, problem.PR_3_LPF_ENCRYPTED)
}

// truncateOrphanFile is ext2fs_truncate_orphan_file after pass 5: every
// block of the orphan file is freed from the bitmap pass 5 left, the
// inode's first 128 bytes are zeroed (the inode stays marked in use, as
// in e2fsck), and orphan_file and orphan_present are cleared. An inode
// that cannot be read is PR_6_ORPHAN_FILE_TRUNC_FAILED, nothing changed.
func (c *Checker) truncateOrphanFile() bool {
	f := c.fs
	sb := c.sb
	ino := sb.OrphanFileInum()
	buf := make([]byte, f.InodeSize)
	if ino == 0 || ino > f.InodesCount || f.ReadInode(ino, buf, make([]byte, f.BlockSize)) != nil {
		c.fix(problem.Problem{Code: problem.PR_6_ORPHAN_FILE_TRUNC_FAILED})
		return false
	}
	n := ondisk.Inode(buf)
	c.punchAll(n, c.lateFreeBlock)
	clear(n[:ondisk.GoodOldInodeSize])
	c.writeInode(ino, n)
	sb.SetFeatureCompat(sb.FeatureCompat() &^ ondisk.CompatOrphanFile)
	sb.SetFeatureRoCompat(sb.FeatureRoCompat() &^ ondisk.RoCompatOrphanPresent)
	return true
}

// recreateOrphanFile is PR_6_ORPHAN_FILE_CORRUPTED's "yes" in e2fsck's
// main: unless the bitmaps are invalid, the file is truncated and
// ext2fs_create_orphan_file builds a new one of
// ext2fs_default_orphan_file_blocks blocks.
func (c *Checker) recreateOrphanFile() {
	if c.invalidBitmaps {
		c.fix(problem.Problem{Code: problem.PR_6_ORPHAN_FILE_BITMAP_INVALID})
		return
	}
	if !c.truncateOrphanFile() {
		return
	}
	f := c.fs
	num := uint64(512)
	switch {
	case f.BlocksCount < 128*1024:
		num = 32
	case f.BlocksCount < 2*1024*1024:
		num = f.BlocksCount / 4096
	}
	c.log(fmt.Sprintf("Creating orphan file (%d blocks): ", num))
	if !c.createOrphanFile(c.sb.OrphanFileInum(), num) {
		return
	}
	c.log(" Done.\n")
}

// createOrphanFile is ext2fs_create_orphan_file on the truncated inode
// ino: num blocks, each allocated after pass 5 with the previous one as
// goal and written empty (the block tail's magic, and with
// metadata_csum its checksum over generation 0), mapped as
// ext2fs_block_iterate3 with BLOCK_FLAG_APPEND maps them (a block-mapped
// file's indirect block is allocated before the block it maps); then the
// inode as ext2fs_write_new_inode writes it. An extent-mapped file's
// blocks are mapped one by one by ext2fs_extent_set_bmap
// (ext2fs.ExtentHandle.SetBmap), which grows the tree when the inode's four
// extents do not hold them. Maps the library would grow beyond a single
// indirect block, and bigalloc, stop the run as unsupported.
func (c *Checker) createOrphanFile(ino uint32, num uint64) bool {
	f := c.fs
	extents := c.sb.HasIncompat(ondisk.IncompatExtents)
	per := uint64(f.BlockSize / 4)
	if f.ClusterBits != 0 || (!extents && num > 12+per) {
		c.unsupported(problem.PR_6_ORPHAN_FILE_CORRUPTED)
		return false
	}
	bs := f.BlockSize
	empty := make([]byte, bs)
	binary.LittleEndian.PutUint32(empty[bs-orphanTailSize:], orphanBlockMagic)
	slots := (bs - orphanTailSize) / 4
	var (
		last   uint64
		allocs uint64
		ind    []byte
		indBlk uint64
		x      *ext2fs.ExtentHandle
	)
	n := c.newInodeBytes(0o100600)
	if extents {
		// The library writes the inode with only the extents flag and
		// opens a handle on it: an empty leaf root. Tree blocks come
		// from the bitmap pass 5 left, as the data blocks do.
		var err error
		if x, err = c.openExtHandle(ino, n); err != nil {
			c.unsupported(problem.PR_6_ORPHAN_FILE_CORRUPTED)
			return false
		}
		x.SetAllocator(ext2fs.AllocFuncs{Alloc: c.lateAllocBlock, Free: c.lateFreeBlock})
	}
	alloc := func() (uint64, bool) {
		b, ok := c.lateAllocBlock(last)
		if !ok {
			return 0, false
		}
		last = b
		allocs++
		return b, true
	}
	for lblk := uint64(0); lblk < num; lblk++ {
		if !extents && lblk == 12 {
			b, ok := alloc()
			if !ok {
				return c.orphanCreateFailed()
			}
			indBlk, ind = b, make([]byte, bs)
			c.writeBlock(b, ind)
		}
		b, ok := alloc()
		if !ok {
			return c.orphanCreateFailed()
		}
		blk := slices.Clone(empty)
		if f.MetadataCsum {
			sum := csum.Crc32cUint32(f.CsumSeed, ino)
			sum = csum.Crc32cUint32(sum, 0)
			var le [8]byte
			binary.LittleEndian.PutUint64(le[:], b)
			sum = csum.Crc32c(sum, le[:])
			sum = csum.Crc32c(sum, blk[:4*slots])
			binary.LittleEndian.PutUint32(blk[bs-4:], sum)
		}
		c.writeBlock(b, blk)
		switch {
		case extents:
			if err := x.SetBmap(lblk, b, false); err != nil {
				// No block for a new tree node fails the creation as
				// a data block does; other errors cannot happen on
				// the tree built here.
				if err != ext2fs.ErrBlockAllocFail {
					c.unsupported(problem.PR_6_ORPHAN_FILE_CORRUPTED)
					return false
				}
				return c.orphanCreateFailed()
			}
		case lblk < 12:
			binary.LittleEndian.PutUint32(n[40+4*lblk:], uint32(b))
		default:
			binary.LittleEndian.PutUint32(ind[4*(lblk-12):], uint32(b))
		}
	}
	if ind != nil {
		binary.LittleEndian.PutUint32(n[40+4*12:], uint32(indBlk))
		c.writeBlock(indBlk, ind)
	}
	n.SetLinksCount(1)
	n.SetSize(num * uint64(bs))
	n.SetBlocks(allocs * uint64(bs/512))
	c.writeInode(ino, n)
	sb := c.sb
	sb.SetFeatureCompat(sb.FeatureCompat() | ondisk.CompatOrphanFile)
	return true
}

// orphanCreateFailed is the library running out of space in
// ext2fs_create_orphan_file: the error line, then
// PR_6_ORPHAN_FILE_CREATE_FAILED. The blocks taken so far stay taken,
// as in e2fsck.
func (c *Checker) orphanCreateFailed() bool {
	c.log(string(ext2fs.ErrBlockAllocFail) + ": while trying to create orphan file\n")
	c.fix(problem.Problem{Code: problem.PR_6_ORPHAN_FILE_CREATE_FAILED})
	return false
}

// requestRestart is e2fsck's E2F_FLAG_RESTART set in pass 3: the pass
// stops before its next directory (or after making /lost+found and
// rebuilding directories) and the check starts again (ErrRestart).
func (c *Checker) requestRestart() {
	if c.restartLater == nil {
		c.restartLater = new(bool)
	}
	*c.restartLater = true
}

// restartRequested reports a restart asked for in a repair run.
func (c *Checker) restartRequested() bool {
	return c.restartLater != nil && *c.restartLater && c.repairing()
}

// pass3Restart ends pass 3 for a restart. e2fsck's close of the
// filesystem before it starts again writes the bitmaps its allocations
// in pass 3 changed (the new /lost+found's block and inode): the fixes'
// bitmap edits are applied to the on-disk bitmaps and written, so the
// check that follows sees them as e2fsck's does.
func (c *Checker) pass3Restart() error {
	c.repair.mu.Lock()
	edits := len(c.repair.blockEdits) + len(c.repair.inodeEdits)
	c.repair.mu.Unlock()
	if edits > 0 {
		d := c.loadBitmaps()
		c.applyBitmapEdits(d)
		c.writeBitmaps(d)
	}
	if !c.journalBeforeRestart() {
		return nil
	}
	return ErrRestart
}
