package main

import (
	"context"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"gofsck/internal/blockdev"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// ttyReader reads interactive answers from a terminal as e2fsck's
// read_a_char does. The terminal's mode is set around each question by
// answerMode, not here: a read starts only after the prompt is printed,
// and a key typed in between would be echoed. On anything but a terminal
// it reads plainly.
//
// An interrupt (Ctrl-C makes the terminal send SIGINT, which cancels ctx)
// ends the wait as e2fsck's read_a_char does: the key read is 3, and the
// question is cancelled.
type ttyReader struct {
	ctx context.Context
	f   *os.File
}

// answerMode returns problem.Options.AnswerMode for the terminal f: as
// e2fsck's ask_yn, before the prompt is printed the terminal leaves
// canonical mode and stops echoing, so one key answers (no Enter) and the
// transcript shows only the word the answer prints; the settings are put
// back once the answer is read. On anything but a terminal it does
// nothing.
func answerMode(f *os.File) func() (restore func()) {
	return func() func() {
		fd := int(f.Fd())
		old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err != nil {
			return func() {}
		}
		raw := *old
		raw.Lflag &^= unix.ICANON | unix.ECHO
		raw.Cc[unix.VMIN] = 1
		raw.Cc[unix.VTIME] = 0
		if unix.IoctlSetTermios(fd, unix.TCSETS, &raw) != nil {
			return func() {}
		}
		return func() { unix.IoctlSetTermios(fd, unix.TCSETS, old) }
	}
}

func (r ttyReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	fd := int(r.f.Fd())
	for {
		if r.ctx.Err() != nil {
			p[0] = 3
			return 1, nil
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 100)
		if err == unix.EINTR || (err == nil && n == 0) {
			continue
		}
		if err != nil {
			break // not pollable: read plainly
		}
		break
	}
	return r.f.Read(p)
}

// cancelledAtPrompt ends a run interrupted at a question as e2fsck does
// after its signal handler cancelled the run: "canceled", the fixes made
// so far kept (e2fsck's are on disk by then; the end-of-run superblock is
// not written), "MODIFIED" when there were any, "still has errors" when
// an answer left errors, and exit 32 (with 4 then), or 0 with
// e2fsck.conf's allow_cancellation when the superblock's state (as it is
// now) says valid and error-free.
func (r *repairRun) cancelledAtPrompt(state uint16) int {
	fmt.Fprintf(r.stdout, "%s: e2fsck canceled.\n", r.name)
	modified := r.modified()
	if !r.flush() {
		return problem.ExitError
	}
	if modified {
		r.printModified()
		r.printReboot()
	}
	code := problem.ExitCancelled
	if modified && r.o.mount&blockdev.IsRoot != 0 {
		code |= problem.ExitReboot // e2fsck's cancel clears only bit 1
	}
	if r.rep.Status().Invalid {
		fmt.Fprintf(r.stdout, "\n%s: ********** WARNING: Filesystem still has errors **********\n\n", r.name)
		code |= problem.ExitUncorrected
	} else if r.o.conf.allowCancellation && state&ondisk.StateValid != 0 && state&ondisk.StateError == 0 {
		// e2fsck.conf's allow_cancellation: a valid filesystem is clean.
		code = problem.ExitOK
	}
	return code
}
