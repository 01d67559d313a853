package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"gofsck/internal/blockdev"
	"gofsck/internal/problem"
)

// mountedDevice reports whether path is mounted, as the library's
// ext2fs_check_if_mounted tells it (blockdev.CheckIfMounted).
func mountedDevice(path string) (bool, error) {
	flags, err := blockdev.CheckIfMounted(path)
	return flags&blockdev.Mounted != 0, err
}

// mountVerdict is check_mount's verdict on a device in use.
type mountVerdict int

const (
	mountGoOn  mountVerdict = iota // check the device
	mountAbort                     // "Cannot continue, aborting.": exit 8
	mountNo                        // "check aborted.": exit 0
)

// checkMount decides, as e2fsck's check_mount does after the version
// banner, whether a mounted or busy device may be checked, and records
// how it is in use in o.mount:
//   - not in use, or the read-only root (unless -cc writes to it): go on
//     without a word;
//   - -n, or -f on a read-only mount (unless -cc): "Warning!  DEV is
//     mounted." (or "is in use.") and go on;
//   - otherwise "DEV is mounted." (or "is in use."), and unless the run
//     is interactive and the device not busy, "Cannot continue,
//     aborting." with exit 8; an interactive run is warned and asked
//     whether to go on (no: "check aborted.", exit 0).
//
// When the library cannot tell (no mount table), e2fsck prints why and
// goes on as if the device were not in use.
func checkMount(o *options, stdout, stderr io.Writer) (mountVerdict, problem.Answers) {
	flags, err := blockdev.CheckIfMounted(o.device)
	if err != nil {
		fmt.Fprintf(stderr, "ext2fs_check_if_mount: %s while determining whether %s is mounted.\n", errorText(err), o.device)
		return mountGoOn, problem.Answers{}
	}
	o.mount = flags
	writeCheck := o.bb.cflag >= 2
	if flags&(blockdev.Mounted|blockdev.Busy) == 0 ||
		flags&blockdev.IsRoot != 0 && flags&blockdev.ReadOnly != 0 && !writeCheck {
		return mountGoOn, problem.Answers{}
	}
	inUse := "mounted"
	if flags&blockdev.Mounted == 0 {
		inUse = "in use"
	}
	readOnly := o.modeCount > 0 && o.mode == problem.ModeNo // -n (o.mode is not set yet without a mode option)
	if (readOnly || o.force && flags&blockdev.ReadOnly != 0) && !writeCheck {
		fmt.Fprintf(stdout, "Warning!  %s is %s.\n", o.device, inUse)
		return mountGoOn, problem.Answers{}
	}
	fmt.Fprintf(stdout, "%s is %s.\n", o.device, inUse)
	if !interactiveTerminal() || flags&blockdev.Busy != 0 {
		// fatal_error's message ends in two newlines of its own.
		fatalError(stderr, "Cannot continue, aborting.\n\n")
		return mountAbort, problem.Answers{}
	}
	io.WriteString(stdout, "\a\a\a\a\n")
	io.WriteString(stdout, "\n\nWARNING!!!  The filesystem is mounted.   If you continue you ***WILL***\ncause ***SEVERE*** filesystem damage.\n\n")
	io.WriteString(stdout, "\a\a\a\n")
	ask := problem.NewReporter(stdout, problem.Options{Mode: problem.ModeInteractive, In: o.tty, AnswerMode: answerMode(os.Stdin)})
	if !ask.AskYN("Do you really want to continue", false) {
		io.WriteString(stdout, "check aborted.\n")
		return mountNo, problem.Answers{}
	}
	return mountGoOn, ask.Answers()
}

// interactiveTerminal is e2fsck's ctx->interactive: stdin and stdout are
// terminals.
func interactiveTerminal() bool { return isTerminal(os.Stdin) && isTerminal(os.Stdout) }

// exclusiveOpen reports whether a writable run opens its devices with
// O_EXCL: always, except on the read-only root and, with -f, on any
// read-only mount, which the kernel holds open.
func exclusiveOpen(o *options) bool {
	if o.mount&blockdev.IsRoot != 0 && o.mount&blockdev.ReadOnly != 0 {
		return false
	}
	return !(o.mount&blockdev.ReadOnly != 0 && o.force)
}

// errorText is the com_err text of a library error: an errno's message
// capitalised as strerror words it, or the error itself.
func errorText(err error) string {
	s := err.Error()
	var en syscall.Errno
	if errors.As(err, &en) && s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}
