package check

import (
	"bytes"
	"errors"

	"gofsck/internal/bitmap"
	"gofsck/internal/ext2fs"
	"gofsck/internal/journal"
	"gofsck/internal/journal/fcreplay"
	"gofsck/internal/ondisk"
)

// Fast commits in a journal recovery (e2fsck's ext4_fc_replay_scan and
// ext4_fc_replay, called after each pass of the normal log).
//
// The fast-commit area is scanned as e2fsck scans it. When it holds no
// fast commit for the transaction after the last full commit (the usual
// case after a clean full commit), the recovery is the normal log's alone.
// When the scan fails (a bad tail before any good one, an unknown record,
// a head for another transaction), e2fsck's recovery fails before anything
// is replayed: the journal is emptied with its old sequence and the
// filesystem checked fully, and gofsck does the same. Fast commits found
// are applied after the normal log (package fcreplay, through fcHost); a
// record that fails there fails the recovery as in e2fsck
// (fcReplayFailed), and what that emulation does not cover stops the
// recovery before anything is written, as for any fix gofsck does not
// make.

// fastCommits decides what the fast-commit area means for the recovery
// of jn: a nil result when the normal replay goes ahead (followed by the
// fast commits' tags records, applied by replayFastCommits, when tags is
// not 0), else the recovery's result (a failed scan). It is called before
// anything is written.
func (c *Checker) fastCommits(j *jnl, jn *journal.Journal) (res *RecoverResult, tags int) {
	// e2fsck wraps the log of any fast-commit journal at s_maxlen.
	jn.WrapLikeE2fsck()
	if !c.sb.HasCompat(ondisk.CompatFastCommit) || !jn.Format().HasFastCommit() {
		// No replay callback: the area is not looked at.
		return nil, 0
	}
	scan, err := jn.Scan()
	if err != nil || scan.Err != nil || scan.Stop == journal.StopEmpty {
		// The normal replay reports these.
		return nil, 0
	}
	fc, err := jn.ScanFastCommits(scan.EndTid)
	if err != nil {
		r := recoverError(err)
		return &r, 0
	}
	switch {
	case fc.Err != nil:
		// jbd2_journal_recover fails at PASS_SCAN: nothing is replayed,
		// the journal is emptied keeping s_sequence.
		jsb := *jn.Superblock()
		jsb.SetStart(0)
		c.writeJournalSuper(j, &jsb)
		r := recoverError(fc.Err)
		return &r, 0
	}
	return nil, fc.Tags
}

// fcErrnoText is the message of a fast-commit scan failure reported by
// errno, or "".
func fcErrnoText(err error) string {
	var fe *journal.FCErrno
	if errors.As(err, &fe) {
		return fe.Text
	}
	return ""
}

// fcDevice is fs->device_name.
func (c *Checker) fcDevice() string {
	return c.out().DeviceName()
}

// fcReplayFailed ends a recovery whose fast-commit replay failed with an
// *fcreplay.Failure as e2fsck's recover_ext3_journal does: the journal is
// emptied (s_start 0) keeping its s_sequence, and the error is the
// recovery's. ok is false for other errors.
func (c *Checker) fcReplayFailed(j *jnl, jn *journal.Journal, err error, res *journal.ReplayResult) (r RecoverResult, ok bool) {
	var f *fcreplay.Failure
	if !errors.As(err, &f) {
		return r, false
	}
	jsb := *jn.Superblock()
	jsb.SetStart(0)
	c.writeJournalSuper(j, &jsb)
	if f.Corrupted() {
		r.Verdict = RecoverCorrupted
	} else {
		r = RecoverResult{Verdict: RecoverFailed, Msg: f.Text}
	}
	if res != nil {
		for _, b := range res.Bad {
			r.BadBlocks = append(r.BadBlocks, b.Home)
		}
	}
	return r, true
}

// replayFastCommits applies the fast commits counted by the scan (tags
// records) with package fcreplay. It returns an *fcreplay.UnsupportedError
// when the emulation does not cover them, an *fcreplay.Failure when
// e2fsck's replay fails; other errors are device errors.
func (c *Checker) replayFastCommits(jn *journal.Journal, tags int) error {
	return fcreplay.Replay(fcreplay.Params{
		FS:        c.fs,
		Super:     c.sb,
		OrigSuper: c.repair.origSB,
		Now:       c.opt.Now,
		Device:    c.fcDevice(),
		Journal:   jn,
		Tags:      tags,
	}, &fcHost{c: c})
}

// fcHost is the checker's side of the fast-commit replay: its write path,
// the on-disk bitmaps (which its allocation helpers are pointed at), and
// the library operations that still live in the checker.
type fcHost struct {
	c *Checker
	d *diskBitmaps // from LoadBitmaps
}

var _ fcreplay.Host = (*fcHost)(nil)

func (h *fcHost) WriteAt(off int64, data []byte)        { h.c.writeAt(off, data) }
func (h *fcHost) WriteInode(ino uint32, n ondisk.Inode) { h.c.writeInode(ino, n) }
func (h *fcHost) WriteError() error                     { return h.c.WriteError() }
func (h *fcHost) Diag(line string)                      { h.c.diag("%s", line) }

func (h *fcHost) WriteDirBlock(blk uint64, buf []byte, dir uint32) {
	h.c.writeDirBlock(blk, buf, dir)
}

// LoadBitmaps reads the on-disk bitmaps. The library's allocator and free
// path work on fs->block_map: the Checker's allocation helpers are
// pointed at it (this Checker is dropped after the recovery).
func (h *fcHost) LoadBitmaps() (blocks, inodes *bitmap.Bitmap) {
	c := h.c
	h.d = c.loadBitmaps()
	c.blockFound = h.d.blocks
	c.blockMeta = bitmap.New(h.d.blocks.Len())
	return h.d.blocks, h.d.inodes
}

// StoreBitmaps writes the bitmaps and checksums the descriptors over
// fs->inode_map.
func (h *fcHost) StoreBitmaps() {
	h.c.writeBitmaps(h.d)
	h.c.setGDTCsumFrom(h.d.inodes)
}

func (h *fcHost) DirBlocks(n ondisk.Inode) ([]int64, []uint64) {
	return h.c.dirDataBlocks(n, 1<<20)
}

// Link is linkName without expansion, its errors as the library's.
func (h *fcHost) Link(dir uint32, name string, ino uint32, ft uint8) error {
	switch err := h.c.linkName(dir, name, ino, ft, false); {
	case err == nil:
		return nil
	case errors.Is(err, ext2fs.ErrDirNoSpace):
		return err
	case errors.Is(err, errDirCorrupted):
		return ext2fs.ErrDirCorrupted
	default:
		return fcreplay.Unsupported("linking %q into %d: %v", name, dir, err)
	}
}

func (h *fcHost) LoadExtents(ino uint32, n ondisk.Inode) ([]fcreplay.Seg, uint64, error) {
	segs, freed, err := h.c.loadExtentList(ino, n, nil)
	out := make([]fcreplay.Seg, len(segs))
	for i, s := range segs {
		out[i] = fcreplay.Seg{Lblk: s.lblk, Pblk: s.pblk, Len: s.len, Uninit: s.uninit}
	}
	return out, freed, err
}

func (h *fcHost) RewriteExtents(ino uint32, n ondisk.Inode, segs []fcreplay.Seg, freed uint64) error {
	list := make([]extSeg, len(segs))
	for i, s := range segs {
		list[i] = extSeg{lblk: s.Lblk, pblk: s.Pblk, len: s.Len, uninit: s.Uninit}
	}
	return h.c.rewriteExtents(ino, n, list, freed)
}

// InlineData is ext2fs_inline_data_ea_get: the value of system.data (nil
// when empty or missing); attributes the library's reader would treat in
// ways not emulated (see ext2fs.ReadXattrs) are unsupported.
func (h *fcHost) InlineData(dir uint32) ([]byte, error) {
	c := h.c
	n := c.readFullInode(dir)
	size, ok := c.libInlineDataSize(n)
	if !ok {
		return nil, fcreplay.Unsupported("inline directory %d with unreadable attributes", dir)
	}
	if size == ondisk.IBlockSize {
		return nil, nil
	}
	attrs, ibody, err := ext2fs.ReadXattrs(c.fs, n)
	if err != nil {
		return nil, fcreplay.Unsupported("inline directory %d: %v", dir, err)
	}
	i := ext2fs.FindSystemData(attrs)
	if i < 0 || i >= ibody || attrs[i].Inum != 0 {
		return nil, fcreplay.Unsupported("inline directory %d with system.data outside the inode", dir)
	}
	return bytes.Clone(attrs[i].Value), nil
}

func (h *fcHost) SetInlineData(dir uint32, value []byte) error {
	return ext2fs.InlineDataEASet(h.c.inlineFS(), dir, value)
}
