package check

import (
	"bytes"
	"errors"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// errOrphanWalk stops a walk over the orphan file's blocks: either the
// callback asked to stop or the block map could not be followed (e2fsck's
// block iterator failing).
var (
	errOrphanStop = errors.New("check: orphan file walk stopped")
	errOrphanMap  = errors.New("check: orphan file block map unreadable")
)

// checkOrphanFileEnd validates the orphan file at the end of the run, as
// e2fsck's main does after the passes (PR_6_ORPHAN_*): without a journal
// the file is useless; otherwise every block must be in its empty state
// (check_init_orphan_file), and orphan_present must not be set on a clean
// file or without the orphan_file feature.
func (c *Checker) checkOrphanFileEnd() {
	sb := c.sb
	if !sb.HasCompat(ondisk.CompatOrphanFile) {
		if sb.HasRoCompat(ondisk.RoCompatOrphanPresent) &&
			c.fix(problem.Problem{Code: problem.PR_6_ORPHAN_PRESENT_NO_FILE}) && c.repairing() {
			sb.SetFeatureRoCompat(sb.FeatureRoCompat() &^ ondisk.RoCompatOrphanPresent)
		}
		return
	}
	if !sb.HasCompat(ondisk.CompatHasJournal) && c.fix(problem.Problem{Code: problem.PR_6_ORPHAN_FILE_WITHOUT_JOURNAL}) {
		if c.repairing() {
			c.truncateOrphanFile()
		}
		return
	}
	switch c.checkInitOrphanFile() {
	case orphanCleared:
		if c.repairing() {
			sb.SetFeatureRoCompat(sb.FeatureRoCompat() &^ ondisk.RoCompatOrphanPresent)
		}
	case orphanClean:
		if !sb.HasRoCompat(ondisk.RoCompatOrphanPresent) {
			break
		}
		if c.fix(problem.Problem{Code: problem.PR_6_ORPHAN_PRESENT_CLEAN_FILE}) {
			if c.repairing() {
				sb.SetFeatureRoCompat(sb.FeatureRoCompat() &^ ondisk.RoCompatOrphanPresent)
			}
		} else {
			// The catalogue carries 1.47.4's PR_NO_OK on this code;
			// e2fsck 1.47.0 has no such flag, so a declined answer
			// leaves the filesystem with errors (exit 4).
			c.sink.MarkInvalid()
		}
	case orphanCorrupt:
		if c.fix(problem.Problem{Code: problem.PR_6_ORPHAN_FILE_CORRUPTED}) && c.repairing() {
			c.recreateOrphanFile()
		}
	}
}

// orphanState is the result of check_init_orphan_file.
type orphanState int

const (
	orphanClean   orphanState = iota // every block is in its empty state
	orphanCorrupt                    // some block is dirty or the file is malformed
	orphanFatal                      // the inode could not be read: the run stops
	orphanCleared                    // dirty blocks were cleared (a writable run)
)

// checkInitOrphanFile compares every block of the orphan file with the
// empty orphan block. A read-only check offers to clear a dirty block,
// is refused, and then reports the file as corrupt, as e2fsck -n does.
func (c *Checker) checkInitOrphanFile() orphanState {
	f := c.fs
	ino := c.sb.OrphanFileInum()
	buf := make([]byte, f.InodeSize)
	scratch := make([]byte, f.BlockSize)
	if ino == 0 || ino > f.InodesCount {
		// e2fsck_read_inode fails and calls fatal_error from main,
		// outside e2fsck_run: the line, then the exit.
		c.fatalError("ext2fs_read_inode: " + string(ext2fs.ErrBadInodeNum) + " while reading inode " + utoa(ino) + " in orphan inode\n")
		c.endFatal = true
		return orphanFatal
	}
	if f.ReadInode(ino, buf, scratch) != nil {
		c.abort = true
		return orphanFatal
	}
	n := ondisk.Inode(buf)
	bs := uint64(f.BlockSize)
	if n.Size()&(bs-1) != 0 {
		c.fix(problem.Problem{Code: problem.PR_6_ORPHAN_FILE_WRONG_SIZE, Ino: ino})
		return orphanCorrupt
	}
	blocks := int64(n.Size() / bs)

	empty := ondisk.OrphanBlock(make([]byte, f.BlockSize))
	empty.SetMagic(ondisk.OrphanBlockMagic)
	gen := n.Generation()
	disk := make([]byte, f.BlockSize)
	state := orphanClean
	err := c.orphanBlocks(ino, n, true, func(lblk int64, blk uint64) error {
		if blk == 0 {
			if lblk == blocks {
				return errOrphanStop
			}
			c.fix(problem.Problem{Code: problem.PR_6_ORPHAN_FILE_HOLE, Ino: ino, Blk: uint64(lblk)})
			state = orphanCorrupt
			return errOrphanStop
		}
		if f.MetadataCsum {
			empty.SetChecksum(f.CsumSeed, ino, gen, blk)
		}
		if state != orphanCleared {
			if f.ReadBlock(blk, disk) != nil {
				clear(disk)
			}
			if bytes.Equal(disk, empty) {
				return nil
			}
			if !c.fix(problem.Problem{Code: problem.PR_6_ORPHAN_BLOCK_DIRTY, Ino: ino, Blk: uint64(lblk)}) {
				state = orphanCorrupt
				return errOrphanStop
			}
			if !c.repairing() {
				return nil
			}
			// From here on every block is rewritten (pd->clear).
			state = orphanCleared
		}
		c.writeBlock(blk, empty)
		return nil
	})
	if errors.Is(err, errOrphanMap) {
		return orphanCorrupt
	}
	return state
}

// orphanBlocks calls fn for each data block of inode n in logical
// order, as ext2fs_block_iterate3 with BLOCK_FLAG_DATA_ONLY does; with
// holes, unmapped slots of a block-mapped file are reported with block 0
// (BLOCK_FLAG_HOLE; an extent tree's holes are not reported, but the
// block after its last extent is, as BLOCK_FLAG_APPEND). fn stops the walk
// by returning an error, which is returned. errOrphanMap means the block
// map could not be followed (the library's iterator failed, or i_block
// holds no extent root).
func (c *Checker) orphanBlocks(ino uint32, n ondisk.Inode, holes bool, fn func(lblk int64, blk uint64) error) error {
	if n.Flags()&ondisk.FlagExtents != 0 && ondisk.ExtentHeader(n.IBlock()).Verify() != nil {
		return errOrphanMap
	}
	flags := ext2fs.BlockFlagDataOnly | ext2fs.BlockFlagStopOnError
	if holes {
		flags |= ext2fs.BlockFlagHole
	}
	var fnErr error
	if _, err := ext2fs.BlockIterate(c.libfs(), ino, n, flags, func(blk *uint64, lblk int64, _ uint64, _ int) int {
		if fnErr = fn(lblk, *blk); fnErr != nil {
			return ext2fs.BlockAbort
		}
		return 0
	}); err != nil {
		return errOrphanMap
	}
	return fnErr
}
