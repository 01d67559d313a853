package check

import (
	"errors"
	"math/rand/v2"

	"gofsck/internal/ext2fs"
	"gofsck/internal/journal"
	"gofsck/internal/journal/fcreplay"
	"gofsck/internal/ondisk"
	"gofsck/internal/ondisk/jbd2"
	"gofsck/internal/problem"
)

// Journal recovery (e2fsck's e2fsck_run_ext3_journal and
// recover_ext3_journal) and the journal superblock writes of a writable
// journal check.

// Recovery verdicts, as e2fsck's caller tells them apart.
const (
	RecoverOK        = iota
	RecoverBadCRC    // EFSBADCRC: "Journal checksum error found in <dev>"
	RecoverCorrupted // EFSCORRUPTED: "Journal corrupted in <dev>"
	RecoverFailed    // any other error: "<prog>: <Msg> while recovering journal of <dev>"
)

// einval is -EINVAL as e2fsck stores it in s_errno after a failed commit.
const einval = 22

// RecoverResult is the outcome of RecoverJournal.
type RecoverResult struct {
	// Verdict is one of the Recover* constants; Msg is the library error
	// text for RecoverFailed.
	Verdict int
	Msg     string
	// Unsupported says why gofsck cannot replay this journal (fast
	// commits it cannot apply); nothing was written then.
	Unsupported string
	// BadBlocks are the home blocks of logged blocks skipped for a bad
	// checksum ("JBD2: Invalid checksum recovering data block N in log",
	// printed during the replay).
	BadBlocks []uint64
	// FailedCommit is the transaction to report with PR_0_JNL_TXN_CORRUPT
	// (ReportFailedCommit) when HasFailedCommit.
	FailedCommit    uint32
	HasFailedCommit bool
}

// RecoverJournal replays every committed transaction of the journal into
// the filesystem's device (the command's Overlay), reports a failed commit
// (PR_0_JNL_TXN_CORRUPT) and rewrites the journal superblock empty
// (s_start = 0) with e2fsck's s_sequence. The caller then reopens the
// filesystem and calls FinishRecovery on the new Checker.
func (c *Checker) RecoverJournal() RecoverResult {
	if !c.repairing() {
		return RecoverResult{Verdict: RecoverFailed, Msg: string(ext2fs.ErrRoFilsys)}
	}
	j, err := c.getJournal()
	if err != nil {
		return RecoverResult{Verdict: RecoverFailed, Msg: err.Error()}
	}
	defer j.close()
	jn, err := c.openRecoveryJournal(j)
	if err != nil {
		return recoverError(err)
	}
	fcRes, fcTags := c.fastCommits(j, jn)
	if fcRes != nil {
		return *fcRes
	}
	res, err := jn.Replay(replayWriter{c})
	if err != nil {
		return recoverError(err)
	}
	if fcTags > 0 && res.Scan != nil && res.Scan.Err == nil {
		if err := c.replayFastCommits(jn, fcTags); err != nil {
			if why, ok := fcreplay.IsUnsupported(err); ok {
				return RecoverResult{Unsupported: why}
			}
			if r, ok := c.fcReplayFailed(j, jn, err, res); ok {
				return r
			}
			return RecoverResult{Verdict: RecoverFailed, Msg: err.Error()}
		}
	}
	if werr := c.WriteError(); werr != nil {
		return RecoverResult{Verdict: RecoverFailed, Msg: werr.Error()}
	}
	out := RecoverResult{Verdict: RecoverOK}
	for _, b := range res.Bad {
		out.BadBlocks = append(out.BadBlocks, b.Home)
	}
	jsb := *jn.Superblock()
	if res.Scan != nil && res.Scan.HasFailedCommit && res.Err == nil {
		out.FailedCommit, out.HasFailedCommit = res.Scan.FailedCommit, true
		jsb.SetErrno(-einval)
	}
	jsb.SetSequence(res.Sequence)
	jsb.SetStart(0)
	c.writeJournalSuper(j, &jsb)
	if res.Err != nil {
		r := recoverError(res.Err)
		r.BadBlocks = out.BadBlocks
		return r
	}
	return out
}

// ReportFailedCommit reports the transaction whose commit block was bad,
// at which the replay stopped (PR_0_JNL_TXN_CORRUPT).
func (c *Checker) ReportFailedCommit(r RecoverResult) {
	if r.HasFailedCommit {
		c.fix(problem.Problem{Code: problem.PR_0_JNL_TXN_CORRUPT, Ino: r.FailedCommit})
	}
}

// recoverError classifies a recovery failure as e2fsck's caller does.
func recoverError(err error) RecoverResult {
	if msg := fcErrnoText(err); msg != "" {
		return RecoverResult{Verdict: RecoverFailed, Msg: msg}
	}
	switch {
	case errors.Is(err, journal.ErrChecksum):
		return RecoverResult{Verdict: RecoverBadCRC}
	case isRevokeCount(err):
		// scan_revoke_records returns -EINVAL for a bad r_count.
		return RecoverResult{Verdict: RecoverFailed, Msg: "Invalid argument"}
	case errors.Is(err, jbd2.ErrCorrupt):
		return RecoverResult{Verdict: RecoverCorrupted}
	}
	return RecoverResult{Verdict: RecoverFailed, Msg: err.Error()}
}

// isRevokeCount reports whether err is a revoke block's bad r_count.
func isRevokeCount(err error) bool {
	var fe *jbd2.FormatError
	return errors.As(err, &fe) && fe.Struct == "revoke" && fe.Field == "r_count"
}

// replayWriter writes replayed blocks through the Checker (the Overlay).
type replayWriter struct{ c *Checker }

func (w replayWriter) WriteBlock(blk uint64, data []byte) error {
	f := w.c.fs
	if blk >= f.BlocksCount {
		return nil
	}
	w.c.writeAt(int64(blk)<<f.BlockBits, data)
	return w.c.WriteError()
}

// writeJournalSuper writes the journal superblock back with its checksum
// recomputed (e2fsck_journal_release): the first SuperblockSize bytes of
// the block are replaced, the rest of the block kept.
func (c *Checker) writeJournalSuper(j *jnl, jsb *jbd2.Superblock) {
	if jsb.Format().HasCsumV2or3() {
		jsb.UpdateChecksum()
	}
	c.writeJournalBlock(j, int64(j.sbBlock)<<c.fs.BlockBits, jsb[:])
}

// FinishRecovery is the end of e2fsck_run_ext3_journal on the reopened
// filesystem: the error state of the filesystem before the recovery is
// kept, needs_recovery is cleared (and the filesystem marked not valid
// when the recovery failed). The caller then runs CheckJournal again and
// restarts the check. kbytes is what the recovery wrote, in KiB, counted
// when s_kbytes_written was maintained (oldKbytes != 0).
func (c *Checker) FinishRecovery(failed bool, errorState uint16, oldKbytes, kbytes uint64) {
	sb := c.sb
	if oldKbytes != 0 {
		sb.SetKbytesWritten(sb.KbytesWritten() + kbytes)
	}
	sb.SetState(sb.State() | errorState)
	sb.SetFeatureIncompat(sb.FeatureIncompat() &^ ondisk.IncompatRecover)
	if failed {
		sb.SetState(sb.State() &^ ondisk.StateValid)
	}
}

// WriteMasterSuper writes the primary superblock only (ext2fs_close with
// EXT2_FLAG_MASTER_SB_ONLY), with s_wtime set to now.
func (c *Checker) WriteMasterSuper() error {
	sb := c.sb
	sb.SetWtime(uint32(c.opt.Now.Unix()))
	sb.SetBlockGroupNr(0)
	sb.SetChecksum()
	c.writeAt(ondisk.SuperblockOffset, sb[:ondisk.SuperblockSize])
	return c.WriteError()
}

// resetJournal is the reset of e2fsck_journal_release: the journal is
// marked empty (s_start = 0) without a replay (PR_0_JOURNAL_RESET_JOURNAL).
func (c *Checker) resetJournal(j *jnl, jsb *jbd2.Superblock) {
	cp := *jsb
	cp.SetStart(0)
	c.writeJournalSuper(j, &cp)
}

// clearJournalErrno moves the journal's s_errno to the filesystem's error
// flag, as e2fsck_check_ext3_journal does when no recovery is pending.
func (c *Checker) clearJournalErrno(j *jnl, jsb *jbd2.Superblock) {
	c.sb.SetState(c.sb.State() | ondisk.StateError)
	cp := *jsb
	cp.SetErrno(0)
	c.writeJournalSuper(j, &cp)
}

// forgetJournal is the PR_0_JOURNAL_HAS_JOURNAL fix: the superblock's
// journal fields are cleared and needs_recovery with them
// (e2fsck_clear_recover; force marks the filesystem not valid).
func (c *Checker) forgetJournal(force bool) {
	if !c.repairing() {
		return
	}
	sb := c.sb
	sb.SetJournalInum(0)
	sb.SetJournalDev(0)
	sb.SetJournalUUID([16]byte{})
	c.clearRecover(force)
}

// clearRecover is e2fsck_clear_recover.
func (c *Checker) clearRecover(failed bool) {
	sb := c.sb
	sb.SetFeatureIncompat(sb.FeatureIncompat() &^ ondisk.IncompatRecover)
	if failed {
		sb.SetState(sb.State() &^ ondisk.StateValid)
	}
}

// resetJournalSuper is e2fsck_journal_reset_super: the journal superblock
// block is rewritten as a fresh V2 superblock (a valid V1 signature is
// kept) with s_blocksize, s_maxlen and s_first = 1, no features, and a
// random s_sequence so that no old transaction looks valid; the header's
// h_sequence and nothing else survive.
func (c *Checker) resetJournalSuper(j *jnl) {
	if j == nil {
		return
	}
	f := c.fs
	buf := make([]byte, f.BlockSize)
	if err := readFull(j.dev, buf, int64(j.sbBlock)<<f.BlockBits); err != nil {
		clear(buf)
	}
	jbd2.ResetSuperblock(buf, uint32(f.BlockSize), uint32(j.totalLen), rand.Uint32())
	c.writeJournalBlock(j, int64(j.sbBlock)<<f.BlockBits, buf)
}

// backupJournalBlocks is the first part of e2fsck_move_ext3_journal: when
// s_jnl_blocks holds no backup of the journal inode, or a stale one, the
// inode's i_block, i_size_high and i_size are copied there
// (PR_0_BACKUP_JNL). e2fsck then writes every superblock copy. The second
// part is moveVisibleJournal.
func (c *Checker) backupJournalBlocks() {
	f := c.fs
	sb := c.sb
	ino := sb.JournalInum()
	if ino == 0 || !sb.HasCompat(ondisk.CompatHasJournal) || ino > f.InodesCount {
		return
	}
	if sb.JournalUUID() != [16]byte{} {
		return
	}
	// e2fsck reads the inode through its inode shortcut, which still
	// holds the inode rebuilt from s_jnl_blocks when the journal check
	// had to use the backup: the backup then matches itself.
	j, err := c.getJournal()
	if err != nil || j.backup {
		return
	}
	j.close()
	n := j.inode
	stale := sb.JnlBackupType() == 0
	if sb.JnlBackupType() == jnlBackupBlocks {
		for i := 0; i < 15; i++ {
			if sb.JnlBlock(i) != n.Block(i) {
				stale = true
				break
			}
		}
	}
	if !stale || !c.fix(problem.Problem{Code: problem.PR_0_BACKUP_JNL}) {
		return
	}
	sb.SetJnlBlocks(n.IBlock(), n.Size())
	sb.SetJnlBackupType(jnlBackupBlocks)
	c.writeAllSupers()
}

// visibleJournalNames are the names a journal made on a mounted ext3
// filesystem by old tune2fs was given in the root directory, in the order
// e2fsck looks them up.
var visibleJournalNames = [...]string{".journal", "journal", ".journal.dat", "journal.dat"}

// moveVisibleJournal is the rest of e2fsck_move_ext3_journal: a journal
// kept in an ordinary inode with one link, named by one of
// visibleJournalNames in the root directory, moves to the reserved
// journal inode (PR_0_MOVE_JOURNAL, a message, no question). As with
// e2fsck 1.47.0:
//   - the journal inode is read with its checksum verified (a failure
//     leaves it where it is);
//   - the name is unlinked (ext2fs_unlink: merged into the entry before
//     it, or emptied when first in its block);
//   - the first 128 bytes of the inode (struct ext2_inode) are written
//     over inode 8, whose extra fields stay;
//   - the old inode keeps its bytes with no links and i_dtime = now, and is
//     freed in the inode bitmap, its group's free count and the
//     superblock's, without touching the group's other fields;
//   - every superblock copy is written.
//
// Nothing moves on a mounted filesystem (Options.Mounted).
func (c *Checker) moveVisibleJournal() {
	f := c.fs
	sb := c.sb
	ino := sb.JournalInum()
	if c.opt.Mounted || ino == 0 || ino == ondisk.JournalIno || ino > f.InodesCount || !sb.HasCompat(ondisk.CompatHasJournal) {
		return
	}
	n := c.readFullInode(ino)
	if c.inodeCsumFails(ino, n) || n.LinksCount() != 1 {
		return
	}
	name := ""
	for _, nm := range visibleJournalNames {
		if e, found := c.lookupName(ondisk.RootIno, nm); found && e == ino {
			name = nm
			break
		}
	}
	if name == "" {
		return
	}
	c.fix(problem.Problem{Code: problem.PR_0_MOVE_JOURNAL, Str: name})
	if !c.unlinkName(ondisk.RootIno, name, ino) {
		c.fix(problem.Problem{Code: problem.PR_0_ERR_MOVE_JOURNAL, Err: "Ext2 directory corrupted"})
		sb.SetState(sb.State() &^ ondisk.StateValid)
		return
	}
	const baseSize = 128 // struct ext2_inode
	hidden := c.readFullInode(ondisk.JournalIno)
	copy(hidden[:baseSize], n[:baseSize])
	c.writeInode(ondisk.JournalIno, hidden)
	sb.SetJournalInum(ondisk.JournalIno)
	c.writeAllSupers()
	n.SetLinksCount(0)
	n.SetDtime(uint32(c.opt.Now.Unix()))
	c.writeInode(ino, n)
	c.markInodeOnDisk(ino, false)
	if g := (ino - 1) / f.InodesPerGroup; g < f.Groups {
		gd := f.Group(g)
		gd.SetFreeInodes(gd.FreeInodes() + 1)
		if f.GdtCsum {
			gd.UpdateChecksum(sb, g)
		}
	}
	sb.SetFreeInodesCount(sb.FreeInodesCount() + 1)
	c.journalMoveFreed = 1
}

// writeAllSupers makes Finish write every superblock and descriptor copy,
// as e2fsck does once a fix clears EXT2_FLAG_MASTER_SB_ONLY (the same
// writes as after a check from a backup superblock).
func (c *Checker) writeAllSupers() {
	c.fs.Backup = true
}

// restoreJournalInode writes the journal inode rebuilt from s_jnl_blocks
// over the first 128 bytes of inode ino, keeping the rest of the on-disk
// inode, with its checksum recomputed (e2fsck_get_journal in a writable
// run after it had to use the backup).
func (c *Checker) restoreJournalInode(ino uint32, backup ondisk.Inode) {
	f := c.fs
	n := make(ondisk.Inode, f.InodeSize)
	if f.ReadInode(ino, n, make([]byte, f.BlockSize)) != nil {
		clear(n)
	}
	copy(n[:ondisk.GoodOldInodeSize], backup[:ondisk.GoodOldInodeSize])
	c.writeInode(ino, n)
}

// clearV2Journal is the writable part of clear_v2_journal_fields: the
// journal superblock block is written back zeroed past the V1 superblock
// (buf is the block as read) and the run counts as having fixed a
// problem.
func (c *Checker) clearV2Journal(j *jnl, buf []byte) {
	if !c.repairing() || j == nil {
		return
	}
	clear(buf[jbd2.V1SuperblockSize:])
	if !j.external {
		// e2fsck writes the journal's buffer straight to the device,
		// which does not mark the filesystem changed: alone, this fix
		// leaves the exit status 0 and no "MODIFIED" line.
		c.repair.uncounted.Add(1)
	}
	c.writeJournalBlock(j, int64(j.sbBlock)<<c.fs.BlockBits, buf)
	c.sink.MarkFixed()
}
