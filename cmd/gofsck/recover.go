package main

import (
	"fmt"
	"io"

	"gofsck/internal/blockdev"
	"gofsck/internal/check"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Journal recovery: e2fsck's e2fsck_run_ext3_journal and the restart that
// follows it in unix.c. The replay goes into the Overlay like every other
// write, so an interrupted or refused run still writes nothing.

// restartDev is the device of a filesystem reopened after a recovery. Its
// Stats count from the reopening, as e2fsck's new I/O channel does: what
// the recovery wrote is not a change made by the check that follows (no
// "FILE SYSTEM WAS MODIFIED" for it) nor counted again in
// s_kbytes_written.
type restartDev struct {
	*blockdev.Overlay
	base blockdev.Stats
}

func newRestartDev(ov *blockdev.Overlay) *restartDev {
	return &restartDev{Overlay: ov, base: ov.Stats()}
}

// Stats returns the counters since the reopening.
func (d *restartDev) Stats() blockdev.Stats {
	s := d.Overlay.Stats()
	s.ReadBytes -= d.base.ReadBytes
	s.ReadOps -= d.base.ReadOps
	s.WriteBytes -= d.base.WriteBytes
	s.WriteOps -= d.base.WriteOps
	return s
}

// recoverJournal replays the journal of f (needs_recovery is set and the
// run may write) and returns the filesystem reopened after the recovery,
// on which the check restarts. newChecker builds a Checker reporting to
// the run's Reporter; flush writes what the run has made so far. When ok
// is false the run ends with exit code.
func recoverJournal(o *options, ov *blockdev.Overlay, f *fs.FS, chk *check.Checker, rep *problem.Reporter,
	newChecker func(*fs.FS) *check.Checker, restarted bool, name string, stdout, stderr io.Writer,
	flush func() bool) (nf *fs.FS, code int, ok bool) {
	if restarted {
		// The flag is still set after a recovery: e2fsck gives up.
		fmt.Fprintf(stderr, "%s: unable to set superblock flags on %s\n\n", o.prog, name)
		rep.Abort()
		st := rep.Status()
		st.Aborted = true
		return nil, st.ExitCode(problem.RunEnd{}), false
	}
	fmt.Fprintf(stdout, "%s: recovering journal\n", name)
	before := f.Dev.Stats()
	res := chk.RecoverJournal()
	if res.Unsupported != "" {
		ov.Discard()
		o.extJournal.discard()
		fatal(o, stderr, "%s needs journal recovery (%s), which this version of gofsck cannot do yet; nothing was written (run e2fsck)", name, res.Unsupported)
		return nil, problem.ExitError, false
	}
	for _, b := range res.BadBlocks {
		fmt.Fprintf(stdout, "JBD2: Invalid checksum recovering data block %d in log\n", b)
	}
	chk.ReportFailedCommit(res)
	switch res.Verdict {
	case check.RecoverBadCRC:
		fmt.Fprintf(stdout, "Journal checksum error found in %s\n", name)
	case check.RecoverCorrupted:
		fmt.Fprintf(stdout, "Journal corrupted in %s\n", name)
	case check.RecoverFailed:
		fatal(o, stderr, "%s while recovering journal of %s", res.Msg, name)
	}
	written := f.Dev.Stats().WriteBytes - before.WriteBytes
	oldKbytes := f.SB.KbytesWritten()
	errorState := f.SB.State() & ondisk.StateError

	// Reload the filesystem: the recovery changed it under us.
	dev := newRestartDev(ov)
	rf, err := fs.Open(dev, fs.Options{Superblock: o.superblk, BlockSize: o.blockSize})
	if err != nil {
		// e2fsck's recovery is on disk already; its fatal_error finds the
		// half-opened filesystem not valid.
		fatal(o, stderr, "%s while trying to re-open %s", describe(err), name)
		if !flush() {
			return nil, problem.ExitError, false
		}
		fmt.Fprintf(stdout, "\n%s: ********** WARNING: Filesystem still has errors **********\n\n", name)
		return nil, problem.ExitError | problem.ExitUncorrected, false
	}
	rchk := newChecker(rf)
	rchk.FinishRecovery(res.Verdict != check.RecoverOK, errorState, oldKbytes, written>>10)
	// One last sanity check, which also turns the journal's s_errno into
	// the filesystem's error flag.
	if jerr := rchk.CheckJournal(); jerr != "" && res.Verdict == check.RecoverOK {
		fatal(o, stderr, "%s while recovering journal of %s", jerr, name)
	}
	if rep.Aborted() {
		st := rep.Status()
		st.Aborted = true
		return nil, st.ExitCode(problem.RunEnd{}), false
	}
	if err := rchk.WriteMasterSuper(); err != nil {
		fatal(o, stderr, "%v while writing to %s", err, o.device)
		return nil, problem.ExitError, false
	}
	// Restart: open the recovered filesystem afresh.
	undoHint(o, stdout)
	dev = newRestartDev(ov)
	nf, err = fs.Open(dev, fs.Options{Superblock: o.superblk, BlockSize: o.blockSize})
	if err != nil {
		fatal(o, stderr, "%s while trying to open %s", describe(err), o.device)
		return nil, problem.ExitError, false
	}
	return nf, 0, true
}

// skipFixes is what a writable run does before it skips a clean
// filesystem: the superblock's free counts are set from the descriptors,
// what the run changed is written as e2fsck's closing flush writes it
// (bitmaps edited by the orphan release, superblock and descriptors), and
// the writes pending in the overlay (a journal recovery's) go to the
// device.
// It returns false when writing failed.
func skipFixes(o *options, rc *repairRun, chk *check.Checker, stderr io.Writer) bool {
	if !rc.active() {
		return true
	}
	chk.FixSkipCounts()
	if err := chk.FinishSkip(); err != nil {
		fatal(o, stderr, "%v while writing to %s", err, o.device)
		return false
	}
	return rc.flush()
}
