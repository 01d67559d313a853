package main

import (
	"io"

	"gofsck/internal/blockdev"
	"gofsck/internal/undo"
)

// undoSession is the undo file of a writable run (-z): one file for the
// whole run, as e2fsck's undo I/O manager sits under everything it
// writes. It is created at the run's first write, whether that is the
// flush of the fixes (commit.go) or the multi-mount protection's first
// write of the MMP block (mmp.go), or at the end of a run that wrote
// nothing, and closed when the run is over, after the MMP block's last
// write. Every write through it saves the old
// contents of the blocks it touches first, so `gofsck undo` puts back the
// device as the run found it, byte for byte, MMP block included.
type undoSession struct {
	path string
	dev  blockdev.Device // the device under the Overlay
	bs   int             // the filesystem's block size
	w    *undo.Writer
}

// newUndoSession returns the undo session of a run on dev (nil without
// -z or when the run does not write).
func newUndoSession(path string, ov *blockdev.Overlay, blockSize int) *undoSession {
	if path == "" || ov == nil {
		return nil
	}
	return &undoSession{path: path, dev: ov.Base, bs: blockSize}
}

// writer returns where the run's writes go: the device itself without an
// undo file, else the undo writer, created on first use.
func (u *undoSession) writer(dev blockdev.Device) (io.WriterAt, error) {
	if u == nil {
		return dev, nil
	}
	if u.w == nil {
		w, err := undo.Create(u.path, u.dev, u.bs, nil)
		if err != nil {
			return nil, err
		}
		u.w = w
	}
	return u.w, nil
}

// active reports whether writes go through an undo file.
func (u *undoSession) active() bool { return u != nil }

// close finishes the undo file. A writable run that wrote nothing still
// leaves one, empty, as e2fsck's undo I/O manager does: the e2undo
// command the run printed at its start then works (and restores
// nothing).
func (u *undoSession) close() error {
	if u == nil {
		return nil
	}
	if u.w == nil {
		if _, err := u.writer(nil); err != nil {
			return err
		}
	}
	w := u.w
	u.w = nil
	return w.Close()
}
