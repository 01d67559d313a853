package main

import (
	"fmt"
	"io"
	"os"

	"gofsck/internal/blockdev"
	"gofsck/internal/check"
	"gofsck/internal/iotrace"
	"gofsck/internal/problem"
)

// repairRun is the write side of a run with -y, -p or interactive answers.
// The check decides its fixes against an in-memory Overlay of the device;
// the fixes reach the disk only here, serially and in ascending block
// order, after the run has decided what to keep:
//
//   - a completed run finishes the superblock and descriptors as e2fsck
//     does (check.Finish) and writes everything;
//   - a run that met a fix gofsck does not implement writes nothing;
//   - a cancelled run writes nothing;
//   - an aborted run writes the fixes made so far, as e2fsck's are already
//     on disk when it aborts, but not the end-of-run superblock.
//
// With -n, ov is nil and every method does nothing.
type repairRun struct {
	o              *options
	ov             *blockdev.Overlay
	undo           *undoSession // -z: the run's undo file
	chk            *check.Checker
	rep            *problem.Reporter
	name           string
	stdout, stderr io.Writer
}

// active reports whether this run may write.
func (r *repairRun) active() bool { return r.ov != nil }

// unsupported reports whether the run stopped at a fix gofsck does not
// implement; it then drops every pending write and prints why.
func (r *repairRun) unsupported() bool {
	code := r.rep.Status().Unsupported
	if !r.active() || code == 0 {
		return false
	}
	r.ov.Discard()
	r.o.extJournal.discard()
	name := code.String()
	fmt.Fprintf(r.stderr, "\n%s: %s: the fix for problem %s (0x%06x) is not implemented yet.\n"+
		"Nothing was written to %s. Run e2fsck to repair it, or %s -n to check it read-only.\n",
		r.o.prog, r.name, name, uint32(code), r.o.device, r.o.prog)
	return true
}

// discard drops the pending writes (a cancelled run).
func (r *repairRun) discard() {
	if r.active() {
		r.ov.Discard()
		r.o.extJournal.discard()
	}
}

// modified reports whether the run has changed the filesystem so far
// (e2fsck's ext2fs_test_changed), i.e. whether fixes are pending.
func (r *repairRun) modified() bool { return r.active() && r.chk.Changed() }

// flush writes the pending fixes to the device and makes them durable.
// It returns false (after printing why) when the device refused them.
func (r *repairRun) flush() bool {
	// From here on the writes must finish: running out of memory ends the
	// run only before them.
	r.o.memWatch.disarm()
	if err := r.o.extJournal.flush(); err != nil {
		fatal(r.o, r.stderr, "%v while writing to the journal device %s", err, r.o.extJournal.path)
		return false
	}
	if !r.active() || !r.ov.Dirty() {
		return true
	}
	// With -z the undo file (undosession.go) holds the old contents of
	// every block before it is overwritten, durable before the overwrite.
	w, err := r.undo.writer(r.ov.Base)
	if err != nil {
		fatal(r.o, r.stderr, "%v while trying to create undo file %s", err, r.o.undoFile)
		return false
	}
	if err := r.ov.Flush(w); err != nil {
		fatal(r.o, r.stderr, "%v while writing to %s", err, r.o.device)
		return false
	}
	if err := syncDevice(r.ov.Base); err != nil {
		fatal(r.o, r.stderr, "%v while syncing %s", err, r.o.device)
		return false
	}
	return true
}

// finish ends a completed run: the end-of-run superblock and descriptor
// updates, then the flush. changed is whether the passes fixed anything
// (the "FILE SYSTEM WAS MODIFIED" line and exit bit), measured before the
// end-of-run superblock update, which every writable run makes.
func (r *repairRun) finish(valid bool) (changed, ok bool) {
	if !r.active() {
		return false, true
	}
	changed = r.chk.Changed()
	if err := r.chk.Finish(valid); err != nil {
		fatal(r.o, r.stderr, "%v while writing to %s", err, r.o.device)
		return changed, false
	}
	return changed, r.flush()
}

// halt ends a preen run that met a problem it may not fix (the Reporter
// printed "UNEXPECTED INCONSISTENCY"): like e2fsck's preenhalt, the fixes
// made so far are kept and the superblock is marked as having errors, so
// that the next boot's fsck checks it. Exit 4.
func (r *repairRun) halt() int {
	r.o.report.setPreenHalt(r.rep.HaltCode())
	if r.active() {
		if err := r.chk.Halt(); err != nil {
			fatal(r.o, r.stderr, "%v while writing to %s", err, r.o.device)
		} else {
			r.flush()
		}
	}
	return problem.ExitUncorrected
}

// printModified prints e2fsck's line for a run that changed the
// filesystem (not when preening).
func (r *repairRun) printModified() {
	if !r.o.preen {
		fmt.Fprintf(r.stdout, "\n%s: ***** FILE SYSTEM WAS MODIFIED *****\n", r.name)
	}
}

// printReboot prints, after a run that changed the mounted root, e2fsck's
// request to reboot (when preening too): the kernel still has the old
// metadata in memory.
func (r *repairRun) printReboot() {
	if r.o.mount&blockdev.IsRoot != 0 {
		fmt.Fprintf(r.stdout, "%s: ***** REBOOT SYSTEM *****\n", r.name)
	}
}

// syncDevice fsyncs the device under any wrappers.
func syncDevice(d blockdev.Device) error {
	switch v := d.(type) {
	case interface{ Sync() error }:
		return v.Sync()
	case *iotrace.Recorder:
		return syncDevice(v.TracedDevice.Device)
	case *blockdev.Faulty:
		return syncDevice(v.Device)
	}
	return nil
}

// traced returns the I/O recorder under the device's wrappers, if any.
func traced(d blockdev.Device) (*iotrace.Recorder, bool) {
	if ov, ok := d.(*blockdev.Overlay); ok {
		d = ov.Base
	}
	rec, ok := d.(*iotrace.Recorder)
	return rec, ok
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
