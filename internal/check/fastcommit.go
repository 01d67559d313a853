package check

import (
	"encoding/binary"
	"errors"

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
// filesystem checked fully, and gofsck does the same. Fast commits found
// are applied after the normal log (fastcommit_replay.go); what that
// emulation does not cover stops the recovery before anything is
// written, as for any fix gofsck does not make.

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
		binary.BigEndian.PutUint32(jsb[jsbStart:], 0)
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

// deviceNamer is implemented by Sinks that know the device's name as
// given (the library's fs->device_name, in its bitmap warnings).
type deviceNamer interface {
	DeviceName() string
}

// fcDevice is fs->device_name.
func (c *Checker) fcDevice() string {
	if d, ok := c.sink.(deviceNamer); ok {
		return d.DeviceName()
	}
	return ""
}
