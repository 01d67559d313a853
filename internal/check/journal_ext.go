package check

import (
	"fmt"
	"io"

	"gofsck/internal/blockdev"
	"gofsck/internal/ext2fs"
	"gofsck/internal/journal"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// External journals: a journal kept on its own device (a filesystem made
// with mke2fs -O journal_dev), named by s_journal_uuid and s_journal_dev.
// e2fsck_get_journal opens the device the user gave with -j, or the one
// blkid finds by UUID or device number (the command does that lookup and
// hands the opened device over in Options.JournalDev). The device starts
// with an ext2 superblock (journal_dev feature, the journal's UUID), the
// journal superblock follows in the next block and log block numbers count
// from the start of the device.
//
// e2fsck opens the journal device read-write even under -n; its writes are
// the external superblock checksum fix, the journal superblock after a
// recovery or a reset, and a cleared s_errno. gofsck makes them through
// JournalDev, which a repair run wraps in an Overlay written with the
// filesystem's fixes; a read-only run writes nothing.

// JournalDevice is an opened external journal device.
type JournalDevice interface {
	io.ReaderAt
	io.WriterAt
}

// getExternalJournal is the external branch of e2fsck_get_journal: it
// opens the journal device and checks its ext2 superblock
// (PR_0_EXT_JOURNAL_BAD_SUPER, PR_0_JOURNAL_BAD_UUID,
// PR_0_EXT_JOURNAL_SUPER_CSUM_INVALID).
func (c *Checker) getExternalJournal() (*jnl, error) {
	var dev io.ReaderAt
	closeDev := func() {}
	if c.opt.JournalDev != nil {
		dev = c.opt.JournalDev
	} else {
		path := c.opt.ExternalJournal
		if path == "" {
			// Neither -j nor a device found by UUID or device number.
			c.fix(problem.Problem{Code: problem.PR_0_CANT_FIND_JOURNAL})
			if c.sink.Aborted() {
				return nil, errStop
			}
			return nil, &libError{string(ext2fs.ErrLoadExtJournal)}
		}
		f, err := blockdev.Open(path, true, false)
		if err != nil {
			return nil, &libError{ioErrorText(err)}
		}
		dev = f
		closeDev = func() { f.Close() }
	}
	ok := false
	defer func() {
		if !ok {
			closeDev()
		}
	}()
	bs := uint64(c.fs.BlockSize)
	start := uint64(0) // ext2fs_journal_sb_start(blocksize) - 1
	if bs == 1024 {
		start = 1
	}
	buf := make([]byte, bs)
	if err := readFull(dev, buf, int64(start*bs)); err != nil {
		text := ioErrorText(err)
		c.libError(true, text, fmt.Sprintf("while reading block %d", start))
		return nil, &libError{text}
	}
	rawOff := uint64(0)
	if start == 0 {
		rawOff = ondisk.SuperblockOffset
	}
	if uint64(len(buf)) < rawOff+ondisk.SuperblockSize {
		return nil, &libError{string(ext2fs.ErrShortRead)}
	}
	jsuper := ondisk.Superblock(buf[rawOff : rawOff+ondisk.SuperblockSize])
	if jsuper.Magic() != ondisk.Magic || !jsuper.HasIncompat(ondisk.IncompatJournalDev) {
		c.fix(problem.Problem{Code: problem.PR_0_EXT_JOURNAL_BAD_SUPER})
		return nil, c.stopOr(string(ext2fs.ErrLoadExtJournal))
	}
	if jsuper.UUID() != c.sb.JournalUUID() {
		c.fix(problem.Problem{Code: problem.PR_0_JOURNAL_BAD_UUID})
		return nil, c.stopOr(string(ext2fs.ErrLoadExtJournal))
	}
	if jsuper.HasRoCompat(ondisk.RoCompatMetadataCsum) && jsuper.ComputeChecksum() != jsuper.Checksum() {
		if c.fix(problem.Problem{Code: problem.PR_0_EXT_JOURNAL_SUPER_CSUM_INVALID}) && c.repairing() {
			// The checksum is set in the block as read and the block
			// written back (brelse of the dirty buffer).
			jsuper.SetChecksum()
			c.writeJournalDev(int64(start*bs), buf)
		}
		if c.sink.Aborted() {
			return nil, errStop
		}
	}
	maxlen := jsuper.BlocksCount()
	if maxlen >= 1<<32 {
		maxlen = 1<<32 - 1
	}
	ok = true
	return &jnl{dev: dev, sbBlock: start + 1, totalLen: maxlen, external: true, close: closeDev}, nil
}

// writeJournalDev writes data at byte offset off of the external journal
// device. Nothing is written by a read-only run or when the device was
// opened by the check itself (no JournalDev: tests and library callers).
func (c *Checker) writeJournalDev(off int64, data []byte) {
	if !c.repairing() || c.opt.JournalDev == nil {
		return
	}
	if _, err := c.opt.JournalDev.WriteAt(data, off); err != nil {
		c.repair.writeFailed(err)
	}
}

// writeJournalBlock writes the block of the journal superblock (or any
// journal block) where it lives: the filesystem device for an internal
// journal, the journal device for an external one.
func (c *Checker) writeJournalBlock(j *jnl, off int64, data []byte) {
	if j.external {
		c.writeJournalDev(off, data)
		return
	}
	c.writeAt(off, data)
}

// openRecoveryJournal opens the located journal j for a replay: log blocks
// map through the journal inode's blocks (internal journal) or are the
// device's own blocks (external journal).
func (c *Checker) openRecoveryJournal(j *jnl) (*journal.Journal, error) {
	f := c.fs
	if j.external {
		return journal.OpenAt(j.dev, uint32(f.BlockSize), j.totalLen, nil, j.sbBlock)
	}
	// A journal cannot hold more blocks than the filesystem: a hostile
	// i_size does not make the map bigger than that.
	m := make([]uint64, min(j.totalLen, f.BlocksCount))
	w := jwalk{c: c, last: -1, lookup: -1, need: int64(len(m)), all: m}
	if j.inode.Flags()&ondisk.FlagExtents != 0 {
		w.extents(j.ino, j.inode)
	} else {
		w.blockMap(j.inode)
	}
	lmap := func(l uint64) (uint64, bool) {
		if l >= uint64(len(m)) || m[l] == 0 {
			return 0, false
		}
		return m[l], true
	}
	return journal.Open(f.Dev, uint32(f.BlockSize), j.totalLen, lmap)
}

// JournalHint is what blkid finds for the journal's UUID: whether a block
// device carries it, and that device's number (st_rdev).
type JournalHint struct {
	Found bool
	Rdev  uint64
}

// fixExtJournalHint is e2fsck_fix_ext3_journal_hint: when the device that
// holds the external journal (found by UUID) is not the one s_journal_dev
// names, the hint is corrected (PR_0_EXTERNAL_JOURNAL_HINT).
func (c *Checker) fixExtJournalHint() {
	sb := c.sb
	h := c.opt.JournalHint
	if !sb.HasCompat(ondisk.CompatHasJournal) || sb.JournalUUID() == [16]byte{} || !h.Found {
		return
	}
	if h.Rdev == uint64(sb.JournalDev()) {
		return
	}
	if c.fix(problem.Problem{Code: problem.PR_0_EXTERNAL_JOURNAL_HINT, Num: h.Rdev}) && c.repairing() {
		sb.SetJournalDev(uint32(h.Rdev))
	}
}
