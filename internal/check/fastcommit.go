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
// are applied after the normal log (fastcommit_replay.go); a record that
// fails there fails the recovery as in e2fsck (fcReplayFailed), and what
// that emulation does not cover stops the recovery before anything is
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

// fcFailure is a failed fast-commit replay as jbd2_journal_recover
// returns it to e2fsck: a negative errno, which e2fsck prints (EUCLEAN as
// "Journal corrupted", others as "<strerror> while recovering journal").
// What the replay wrote before it failed stays written; the bitmaps and
// counts it held in memory are dropped, and the journal is emptied with
// its old sequence.
type fcFailure struct {
	errno int
	text  string // strerror
}

func (e *fcFailure) Error() string { return e.text }

// The errnos of a failed replay.
var (
	errFCNoMem    = &fcFailure{12, "Cannot allocate memory"}
	errFCFault    = &fcFailure{14, "Bad address"}
	errFCInval    = &fcFailure{22, "Invalid argument"}
	errFCCanceled = &fcFailure{125, "Operation canceled"}
)

// errnoEUCLEAN is EFSCORRUPTED.
const errnoEUCLEAN = 117

// The lines of e2fsck/journal.c (1.47.0) whose errcode_to_errno calls
// print the library errors of the replay.
const (
	lineReadExtents   = 589
	lineHandleUnlink  = 654
	lineLinkReadInode = 673
	lineLinkLink      = 706
	lineHandleInode   = 802
)

// libError is errcode_to_errno(err) in function fn at line: the error is
// printed on stderr, and the replay fails with -EFAULT, or with the errno
// itself when err is one.
func (r *fcReplay) libError(fn string, line int, err error) error {
	if _, ok := isFCUnsupported(err); ok {
		return err
	}
	r.c.diag("Error \"%s\" encountered in function %s at line %d\n", err.Error(), fn, line)
	var f *fcFailure
	if errors.As(err, &f) {
		return f
	}
	return errFCFault
}

// fcReads checks that a handler's read of n bytes from a record's value
// (the rest of the block) stays in the block: e2fsck would read heap
// bytes past its buffer, which is not deterministic.
func fcReads(v []byte, n int) error {
	if n > len(v) {
		return fcUnsupported("record read past the block")
	}
	return nil
}

// fcReplayFailed ends a recovery whose fast-commit replay failed with an
// *fcFailure as e2fsck's recover_ext3_journal does: the journal is
// emptied (s_start 0) keeping its s_sequence, and the error is the
// recovery's. ok is false for other errors.
func (c *Checker) fcReplayFailed(j *jnl, jn *journal.Journal, err error, res *journal.ReplayResult) (r RecoverResult, ok bool) {
	var f *fcFailure
	if !errors.As(err, &f) {
		return r, false
	}
	jsb := *jn.Superblock()
	binary.BigEndian.PutUint32(jsb[jsbStart:], 0)
	c.writeJournalSuper(j, &jsb)
	if f.errno == errnoEUCLEAN {
		r.Verdict = RecoverCorrupted
	} else {
		r = RecoverResult{Verdict: RecoverFailed, Msg: f.text}
	}
	if res != nil {
		for _, b := range res.Bad {
			r.BadBlocks = append(r.BadBlocks, b.Home)
		}
	}
	return r, true
}
