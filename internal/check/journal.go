package check

import (
	"errors"
	"io"
	"syscall"

	"gofsck/internal/ext2fs"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/ondisk/jbd2"
	"gofsck/internal/problem"
)

// jnlBackupBlocks is EXT3_JNL_BACKUP_BLOCKS: s_jnl_blocks holds a copy of
// the journal inode's i_block, i_size_high and i_size.
const jnlBackupBlocks = 1

// minJournalBlocks is JBD2_MIN_JOURNAL_BLOCKS.
const minJournalBlocks = 1024

// maxExtentLevels bounds the extent-tree walk of the journal inode; a
// deeper tree is corrupt (the kernel allows 5 levels).
const maxExtentLevels = 32

// badInodeError is one of the e2fsck_get_journal failures that
// e2fsck_check_ext3_journal turns into PR_0_JOURNAL_BAD_INODE
// (EXT2_ET_BAD_INODE_NUM, _NO_JOURNAL, _JOURNAL_TOO_SMALL).
type badInodeError struct{ why string }

func (e *badInodeError) Error() string { return "journal: " + e.why }

// libError is any other failure: its text is what e2fsck prints before
// " while checking journal for <dev>".
type libError struct{ msg string }

func (e *libError) Error() string { return e.msg }

// errStop means a fatal problem was reported (the sink is aborted): e2fsck
// exits inside fix_problem.
var errStop = errors.New("journal: fatal problem")

// jnl is a located journal (e2fsck_get_journal's result): where its
// superblock is and how long the journal is.
type jnl struct {
	dev      io.ReaderAt
	sbBlock  uint64 // physical block of the journal superblock
	totalLen uint64 // journal->j_total_len
	external bool
	close    func()
	// ino, inode and backup are the journal inode as found (internal
	// journals), for mapping the log during a recovery.
	ino    uint32
	inode  ondisk.Inode
	backup bool
}

// CheckJournal validates the journal the superblock points to, as
// e2fsck_check_ext3_journal does before the superblock checks, and reports
// what it finds to the Sink. It returns the library error text when the
// check cannot go on ("" otherwise); the caller prints it as
// "<prog>: <text> while checking journal for <dev>" and aborts. When a
// fatal problem was reported (PR_0_CANT_FIND_JOURNAL,
// PR_0_EXT_JOURNAL_BAD_SUPER, PR_0_JOURNAL_BAD_UUID,
// PR_0_JOURNAL_UNSUPP_MULTIFS, or an Abort question answered yes) it
// returns "" with the Sink aborted: e2fsck exits there without a message.
//
// Only the read-only behaviour exists: every fix is declined by the Sink
// under -n, and an accepted fix is not applied to the disk (the in-memory
// decisions that follow an accepted fix are). Not emulated:
//   - the mount check (the caller checks an image, never a mounted device);
//   - finding an external journal by UUID or device number (blkid) is the
//     command's work (Options.JournalDev); without a device,
//     PR_0_CANT_FIND_JOURNAL is reported;
//   - with s_errno set and no recovery pending, e2fsck under -n tries to
//     write the journal superblock back and reports the failed write
//     ("Error writing block N (Bad file descriptor).  Ignore error? no")
//     at a moment that depends on its I/O cache; gofsck only marks the
//     filesystem as having errors, as e2fsck does in memory.
func (c *Checker) CheckJournal() string {
	sb := c.sb
	hasJournal := sb.HasCompat(ondisk.CompatHasJournal)
	recover := sb.HasIncompat(ondisk.IncompatRecover)
	uuid := sb.JournalUUID()
	if !hasJournal && !recover && sb.JournalInum() == 0 && sb.JournalDev() == 0 && uuid == [16]byte{} {
		return ""
	}
	p := problem.Problem{Num: uint64(sb.JournalInum())}

	j, err := c.getJournal()
	if err != nil {
		var bad *badInodeError
		switch {
		case errors.Is(err, errStop):
			return ""
		case errors.As(err, &bad):
			return c.fixBadInode(p)
		}
		return err.Error()
	}
	defer j.close()

	jsb, err := c.loadJournal(j)
	if err != nil {
		var le *libError
		switch {
		case errors.Is(err, errStop):
			return ""
		case errors.As(err, &le):
			return le.msg
		}
		// A rejected superblock: loadErr says which.
		return c.journalLoadFailed(p, err, j)
	}
	// Make the flags consistent with the journal found.
	for !c.sb.HasCompat(ondisk.CompatHasJournal) {
		recover := c.sb.HasIncompat(ondisk.IncompatRecover)
		if !c.fix(withCode(p, problem.PR_0_JOURNAL_HAS_JOURNAL)) {
			// Read-only: has_journal is not set again.
			break
		}
		if c.sink.Aborted() {
			return ""
		}
		if recover && !c.fix(withCode(p, problem.PR_0_JOURNAL_RECOVER_SET)) {
			continue
		}
		// The journal is forgotten; a full check follows if recovery was
		// pending or the journal lived in a reserved inode.
		force := recover || c.sb.JournalInum() < c.fs.FirstIno
		if force {
			c.invalidSuper = true
		}
		c.forgetJournal(force)
		return ""
	}
	if c.sink.Aborted() {
		return ""
	}
	if !c.sb.HasIncompat(ondisk.IncompatRecover) && jsb.Start() != 0 {
		c.fix(withCode(p, problem.PR_0_JOURNAL_RECOVERY_CLEAR))
		run := problem.PR_0_JOURNAL_RUN
		if c.fs.Backup {
			run = problem.PR_0_JOURNAL_RUN_DEFAULT
		}
		if c.fix(withCode(p, run)) {
			// e2fsck sets needs_recovery and forces a full check; the
			// replay itself needs a writable run (the command runs it
			// when it finds needs_recovery set).
			c.invalidSuper = true
			if c.repairing() {
				c.sb.SetFeatureIncompat(c.sb.FeatureIncompat() | ondisk.IncompatRecover)
			}
		} else if c.fix(withCode(p, problem.PR_0_JOURNAL_RESET_JOURNAL)) {
			c.invalidSuper = true
			if c.repairing() {
				c.sb.SetState(c.sb.State() &^ ondisk.StateValid)
				c.resetJournal(j, jsb)
			}
		}
		if c.sink.Aborted() {
			return ""
		}
	}
	if !c.sb.HasIncompat(ondisk.IncompatRecover) && jsb.Errno() != 0 {
		// e2fsck sets EXT2_ERROR_FS in the superblock: the filesystem is
		// checked as one with errors.
		c.invalidSuper = true
		if c.repairing() {
			c.clearJournalErrno(j, jsb)
		}
	}
	return ""
}

// withCode returns p with its code set.
func withCode(p problem.Problem, code problem.Code) problem.Problem {
	p.Code = code
	return p
}

// libError reports a com_err line through the Sink's LibOutput: e2fsck's
// journal code reports a few findings with com_err on stderr rather than
// as problems ("e2fsck: The journal superblock is corrupt <dev>: journal
// too short"); a Sink without LibOutput loses these lines, and the
// problems and the verdict are unaffected.
func (c *Checker) libError(byDevice bool, code, what string) {
	c.out().LibError(byDevice, code, what)
}

// fixBadInode is e2fsck_journal_fix_bad_inode: the journal inode is
// unusable (or the superblock has no JBD2 magic). It returns the error
// text when the fix is declined.
func (c *Checker) fixBadInode(p problem.Problem) string {
	sb := c.sb
	switch {
	case sb.HasCompat(ondisk.CompatHasJournal) || sb.JournalInum() != 0:
		p.Ino = sb.JournalInum()
		if c.fix(withCode(p, problem.PR_0_JOURNAL_BAD_INODE)) {
			// The journal is dropped and re-created at the end of a
			// writable run; a full check follows.
			c.invalidSuper = true
			c.dropJournal()
			return ""
		}
		if c.sink.Aborted() {
			return ""
		}
		return string(ext2fs.ErrCorruptJournalSB)
	case sb.HasIncompat(ondisk.IncompatRecover):
		if c.fix(withCode(p, problem.PR_0_JOURNAL_RECOVER_SET)) {
			c.invalidSuper = true
			if c.repairing() {
				c.clearRecover(true)
			}
			return ""
		}
		if c.sink.Aborted() {
			return ""
		}
		return string(ext2fs.ErrUnsuppFeature)
	}
	return ""
}

// fixCorruptSuper is e2fsck_journal_fix_corrupt_super.
func (c *Checker) fixCorruptSuper(p problem.Problem, j *jnl) string {
	if c.sb.HasCompat(ondisk.CompatHasJournal) {
		if c.fix(withCode(p, problem.PR_0_JOURNAL_BAD_SUPER)) {
			// A fresh journal superblock is written and
			// needs_recovery cleared (full check if it was set).
			recover := c.sb.HasIncompat(ondisk.IncompatRecover)
			if recover {
				c.invalidSuper = true
			}
			if c.repairing() {
				c.resetJournalSuper(j)
				c.clearRecover(recover)
			}
			return ""
		}
		if c.sink.Aborted() {
			return ""
		}
		return string(ext2fs.ErrCorruptJournalSB)
	}
	if c.fixBadInode(p) != "" {
		return string(ext2fs.ErrCorruptJournalSB)
	}
	return ""
}

// journalLoadFailed handles a journal superblock that e2fsck_journal_load
// rejected: unsupported features or versions are asked about first
// (answering yes aborts), then the superblock is treated as corrupt.
func (c *Checker) journalLoadFailed(p problem.Problem, err error, j *jnl) string {
	var ve *jbd2.ValidationError
	if errors.As(err, &ve) {
		var code problem.Code
		switch ve.Rule {
		case jbd2.RuleIncompat:
			code = problem.PR_0_JOURNAL_UNSUPP_INCOMPAT
		case jbd2.RuleRoCompat:
			code = problem.PR_0_JOURNAL_UNSUPP_ROCOMPAT
		case jbd2.RuleVersion:
			code = problem.PR_0_JOURNAL_UNSUPP_VERSION
		}
		if code != 0 {
			c.fix(withCode(p, code))
			if c.sink.Aborted() {
				return ""
			}
		}
	}
	return c.fixCorruptSuper(p, j)
}

// getJournal is e2fsck_get_journal: it finds the journal inode (or its
// superblock backup) or the external journal device and returns where the
// journal superblock is. Errors are *badInodeError, *libError or errStop.
func (c *Checker) getJournal() (*jnl, error) {
	sb := c.sb
	if sb.JournalUUID() != [16]byte{} {
		return c.getExternalJournal()
	}
	ino := sb.JournalInum()
	if ino == 0 || uint64(ino) > uint64(c.fs.Groups)*uint64(c.fs.InodesPerGroup) {
		return nil, &badInodeError{"bad journal inode number"}
	}
	inode, rerr := c.readJournalInode(ino)
	backup := false
	var why error = rerr
	for {
		if why == nil {
			why = c.journalInodeUsable(ino, inode, backup)
		}
		if why == nil {
			break
		}
		if sb.JnlBackupType() != jnlBackupBlocks || backup {
			return nil, why
		}
		inode = c.backupJournalInode()
		backup = true
		why = nil
	}
	if backup && c.repairing() {
		// A writable e2fsck writes the inode rebuilt from the backup
		// (ext2fs_write_inode: its first 128 bytes over the inode).
		c.restoreJournalInode(ino, inode)
	}
	size := inode.Size()
	j := &jnl{dev: c.fs.Dev, totalLen: uint64(uint32(size >> c.fs.BlockBits)), close: func() {}, ino: ino, inode: inode, backup: backup}
	// jbd2_journal_bmap(journal, 0): a hole maps to block 0.
	if pblk, ok := c.journalBmap(ino, inode, backup, 0); ok {
		j.sbBlock = pblk
	}
	return j, nil
}

// readJournalInode is ext2fs_read_inode for the journal inode. The error is
// a *badInodeError or *libError as e2fsck would classify it.
func (c *Checker) readJournalInode(ino uint32) (ondisk.Inode, error) {
	f := c.fs
	if ino > f.InodesCount {
		return nil, &badInodeError{"inode number beyond s_inodes_count"}
	}
	g := (ino - 1) / f.InodesPerGroup
	table := f.Group(g).InodeTable()
	switch {
	case table == 0:
		return nil, &libError{string(ext2fs.ErrMissingInodeTable)}
	case table < f.FirstDataBlock || table+uint64(f.InodeBlocksPerGroup)-1 >= f.BlocksCount:
		return nil, &libError{string(ext2fs.ErrGdescBadInodeTable)}
	}
	buf := make(ondisk.Inode, f.InodeSize)
	scratch := make([]byte, f.BlockSize)
	if err := f.ReadInode(ino, buf, scratch); err != nil {
		return nil, &libError{ioErrorText(err)}
	}
	if f.MetadataCsum && !buf.ChecksumValid(f.CsumSeed, ino) {
		return nil, &libError{string(ext2fs.ErrInodeCsumInvalid)}
	}
	return buf, nil
}

// backupJournalInode builds the inode e2fsck rebuilds from s_jnl_blocks: a
// regular file with one link, i_block from the backup, no flags (so the
// backup of an extent-mapped journal is read as a block map, as e2fsck
// does).
func (c *Checker) backupJournalInode() ondisk.Inode {
	n := make(ondisk.Inode, ondisk.GoodOldInodeSize)
	n.SetMode(ondisk.SIFREG | 0o600)
	n.SetLinksCount(1)
	for i := 0; i < 15; i++ {
		n.SetBlock(i, c.sb.JnlBlock(i))
	}
	// s_jnl_blocks[15] and [16] are i_size_high and i_size.
	n.SetSize(uint64(c.sb.JnlBlock(15))<<32 | uint64(c.sb.JnlBlock(16)))
	return n
}

// journalInodeUsable applies e2fsck_get_journal's tests to the journal
// inode: links, regular, not encrypted, at least 1024 blocks, and every
// block up to i_size mapped inside the filesystem.
func (c *Checker) journalInodeUsable(ino uint32, n ondisk.Inode, backup bool) error {
	if n.LinksCount() == 0 || !n.IsReg() || n.Flags()&ondisk.FlagEncrypt != 0 {
		return &badInodeError{"journal inode is not a regular file in use"}
	}
	size := n.Size()
	if size>>c.fs.BlockBits < minJournalBlocks {
		return &badInodeError{"journal too small"}
	}
	last := c.journalLastBlock(ino, n, backup)
	// e2fsck compares with (int) EXT2_I_SIZE: a size of 2 GiB or more
	// truncates to a negative number and passes.
	if (last+1)*int64(c.fs.BlockSize) < int64(int32(uint32(size))) {
		return &badInodeError{"journal has holes or blocks outside the filesystem"}
	}
	return nil
}

// journalLastBlock emulates ext2fs_block_iterate3(BLOCK_FLAG_HOLE) with
// e2fsck's process_journal_block: the walk stops at the first block (data
// or mapping) that is 0 or outside [s_first_data_block, blocks_count); the
// result is the last logical block reached (-1 for none). It stops early
// once i_size is covered, which cannot change e2fsck's verdict.
func (c *Checker) journalLastBlock(ino uint32, n ondisk.Inode, backup bool) int64 {
	need := int64((n.Size() + uint64(c.fs.BlockSize) - 1) >> c.fs.BlockBits)
	w := jwalk{c: c, last: -1, need: need, lookup: -1}
	if n.Flags()&ondisk.FlagInlineData != 0 {
		return -1
	}
	if n.Flags()&ondisk.FlagExtents != 0 {
		w.extents(ino, n)
	} else {
		w.blockMap(n)
	}
	return w.last
}

// jwalk is the state of one journal block walk.
type jwalk struct {
	c    *Checker
	last int64 // last logical block accepted
	need int64 // blocks covering i_size
	done bool  // aborted or enough blocks seen
	// lookup, when >= 0, asks for the physical block of that logical
	// block instead (bmap); found/pblk receive the answer.
	lookup int64
	found  bool
	pblk   uint64
	// all, when not nil, receives the physical block of every logical
	// block the walk accepts (the whole map at once, for a recovery).
	all []uint64
}

// visit is process_journal_block for one block; cnt < 0 for mapping blocks.
func (w *jwalk) visit(blk uint64, cnt int64) {
	f := w.c.fs
	if blk == 0 || blk < f.FirstDataBlock || blk >= f.BlocksCount {
		w.done = true
		return
	}
	if cnt >= 0 {
		w.last = cnt
		if cnt < int64(len(w.all)) {
			w.all[cnt] = blk
		}
		if w.lookup >= 0 && cnt == w.lookup {
			w.found, w.pblk = true, blk
			w.done = true
			return
		}
		if w.lookup < 0 && cnt+1 >= w.need {
			w.done = true
		}
	}
}

// blockMap walks a block-mapped i_block (read as one whatever its flags
// say; see extents).
func (w *jwalk) blockMap(n ondisk.Inode) { w.extents(0, asBlockMap(n)) }

// extents walks inode ino's blocks with the library's iterator
// (ext2fs_block_iterate3) and BLOCK_FLAG_HOLE: in a block map a zero
// pointer is visited (and ends the walk), a mapping block that cannot be
// read ends it too; in an extent tree each index entry comes before its
// subtree, a child that cannot be read, has a bad header, a bad checksum
// (metadata_csum), no entries, or repeats an ancestor ends the walk, and
// the holes between extents are not visited (the block after the last
// extent is, unmapped, and ends it). A root that does not verify (an
// all-zero i_block too) or is deeper than maxExtentLevels maps nothing.
func (w *jwalk) extents(ino uint32, n ondisk.Inode) {
	if n.Flags()&ondisk.FlagExtents != 0 {
		if root := ondisk.ExtentHeader(n.IBlock()); root.Verify() != nil || root.Depth() > maxExtentLevels {
			return
		}
	}
	ext2fs.BlockIterate(w.c.libfs(), ino, n, ext2fs.BlockFlagHole|ext2fs.BlockFlagStopOnError, func(blk *uint64, cnt int64, _ uint64, _ int) int {
		w.visit(*blk, cnt)
		if w.done {
			return ext2fs.BlockAbort
		}
		return 0
	})
}

// journalBmap maps logical journal block lblk to its physical block, as
// jbd2_journal_bmap (ext2fs_bmap2) does for blocks the walk accepted.
func (c *Checker) journalBmap(ino uint32, n ondisk.Inode, backup bool, lblk int64) (uint64, bool) {
	w := jwalk{c: c, last: -1, lookup: lblk}
	if n.Flags()&ondisk.FlagExtents != 0 {
		w.extents(ino, n)
	} else {
		w.blockMap(n)
	}
	return w.pblk, w.found
}

// stopOr returns errStop when the sink aborted (a fatal problem), else the
// library error text.
func (c *Checker) stopOr(msg string) error {
	if c.sink.Aborted() {
		return errStop
	}
	return &libError{msg}
}

// loadJournal is e2fsck_journal_load. It returns the journal superblock
// (also one without JBD2 magic when fix_bad_inode let the check go on), a
// *libError or errStop, or the *jbd2.ValidationError of a rejected
// superblock.
func (c *Checker) loadJournal(j *jnl) (*jbd2.Superblock, error) {
	bs := uint64(c.fs.BlockSize)
	buf := make([]byte, bs)
	if j.sbBlock > (1<<62)/bs {
		return nil, &libError{string(ext2fs.ErrShortRead)}
	}
	if err := readFull(j.dev, buf, int64(j.sbBlock*bs)); err != nil {
		text := ioErrorText(err)
		c.libError(true, text, "reading journal superblock")
		return nil, &libError{text}
	}
	var jsb jbd2.Superblock
	copy(jsb[:], buf)
	if jsb.Header().Magic() != jbd2.Magic {
		// "If we don't even have JBD2_MAGIC, we probably have a wrong
		// inode": e2fsck_journal_load returns fix_bad_inode's verdict.
		msg := c.fixBadInode(problem.Problem{})
		switch {
		case c.sink.Aborted():
			return nil, errStop
		case msg == string(ext2fs.ErrUnsuppFeature):
			// EXT2_ET_UNSUPP_FEATURE: asked as an unknown incompat
			// feature, then treated as a corrupt superblock.
			return nil, &jbd2.ValidationError{Rule: jbd2.RuleIncompat, Field: "h_magic"}
		case msg != "":
			return nil, &jbd2.ValidationError{Rule: jbd2.RuleMagic, Field: "h_magic"}
		}
		// Accepted, or nothing to fix: e2fsck goes on with the flag
		// checks on this block as it is.
		return &jsb, nil
	}
	internal := c.sb.JournalUUID() == [16]byte{}
	if jsb.StrayV2Fields(internal) {
		if c.fix(problem.Problem{Code: problem.PR_0_CLEAR_V2_JOURNAL}) {
			clear(jsb[0x24:])
			c.clearV2Journal(j, buf)
		}
	}
	if jsb.Version() == 2 && jsb.NrUsers() > 1 {
		c.fix(problem.Problem{Code: problem.PR_0_JOURNAL_UNSUPP_MULTIFS})
		return nil, c.stopOr(string(ext2fs.ErrJournalUnsuppVersion))
	}
	err := jsb.Validate(uint32(bs), j.totalLen)
	var ve *jbd2.ValidationError
	if errors.As(err, &ve) && ve.Rule == jbd2.RuleFastCommit && jsb.FCBlocks() > jsb.MaxLen() {
		// e2fsck computes s_maxlen - fc_blocks in unsigned arithmetic: a
		// fast-commit area larger than the journal wraps and passes.
		err = nil
	}
	if err != nil {
		if errors.As(err, &ve) {
			switch ve.Rule {
			case jbd2.RuleBlockSize:
				c.libError(false, string(ext2fs.ErrCorruptJournalSB), "no valid journal superblock found")
			case jbd2.RuleMaxLen:
				c.libError(false, string(ext2fs.ErrCorruptJournalSB), "journal too short")
			case jbd2.RuleFastCommit:
				c.libError(false, string(ext2fs.ErrCorruptJournalSB), "incorrect fast commit blocks")
			}
		}
		return nil, err
	}
	return &jsb, nil
}

// readFull reads len(p) bytes at off.
func readFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// ioErrorText turns an I/O error into the text libext2fs would print:
// strerror for system errors, the short-read message for short reads.
func ioErrorText(err error) string {
	var errno syscall.Errno
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, fs.ErrShortRead):
		return string(ext2fs.ErrShortRead)
	case errors.As(err, &errno):
		s := errno.Error()
		if s != "" && s[0] >= 'a' && s[0] <= 'z' {
			s = string(s[0]-'a'+'A') + s[1:]
		}
		return s
	}
	return err.Error()
}
