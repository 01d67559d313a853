package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// ttyReader reads interactive answers from a terminal as e2fsck's ask_yn
// does: while it waits for a key the terminal is out of canonical mode and
// does not echo, so one key answers (no Enter) and the transcript shows
// only the word the answer prints; the settings are put back after each
// read. On anything but a terminal it reads plainly.
type ttyReader struct{ f *os.File }

func (r ttyReader) Read(p []byte) (int, error) {
	fd := int(r.f.Fd())
	if old, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
		raw := *old
		raw.Lflag &^= unix.ICANON | unix.ECHO
		raw.Cc[unix.VMIN] = 1
		raw.Cc[unix.VTIME] = 0
		if unix.IoctlSetTermios(fd, unix.TCSETS, &raw) == nil {
			defer unix.IoctlSetTermios(fd, unix.TCSETS, old)
		}
	}
	return r.f.Read(p)
}
