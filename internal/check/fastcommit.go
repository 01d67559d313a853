package check

import (
	"encoding/binary"
	"errors"
	"fmt"

	"gofsck/internal/journal"
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
// filesystem checked fully, and gofsck does the same. Applying fast
// commits (inode, extent range, directory entry records) is not
// implemented: such a recovery stops before anything is written, as for
// any fix gofsck does not make.

// fastCommits decides what the fast-commit area means for the recovery
// of jn: nil when the normal replay goes ahead alone, else the recovery's
// result (a failed scan, or a replay gofsck cannot make). It is called
// before anything is written.
func (c *Checker) fastCommits(j *jnl, jn *journal.Journal) *RecoverResult {
	// e2fsck wraps the log of any fast-commit journal at s_maxlen.
	jn.WrapLikeE2fsck()
	if !c.sb.HasCompat(ondisk.CompatFastCommit) || !jn.Format().HasFastCommit() {
		// No replay callback: the area is not looked at.
		return nil
	}
	scan, err := jn.Scan()
	if err != nil || scan.Err != nil || scan.Stop == journal.StopEmpty {
		// The normal replay reports these.
		return nil
	}
	fc, err := jn.ScanFastCommits(scan.EndTid)
	if err != nil {
		r := recoverError(err)
		return &r
	}
	switch {
	case fc.Err != nil:
		// jbd2_journal_recover fails at PASS_SCAN: nothing is replayed,
		// the journal is emptied keeping s_sequence.
		jsb := *jn.Superblock()
		binary.BigEndian.PutUint32(jsb[jsbStart:], 0)
		c.writeJournalSuper(j, &jsb)
		r := recoverError(fc.Err)
		return &r
	case fc.Tags > 0:
		return &RecoverResult{Unsupported: fmt.Sprintf("replaying fast commits: %d records", fc.Tags)}
	}
	return nil
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
