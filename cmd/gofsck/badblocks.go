package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	"gofsck/internal/check"
	"gofsck/internal/problem"
)

// Bad-block list options: -l FILE adds the numbers in FILE to the
// bad-block inode, -L FILE replaces the list with them, -c runs the
// badblocks program (-cc: its non-destructive read-write test) and
// replaces the list with what it finds, or adds to it with -k. The update
// itself is check.UpdateBadBlocks, run where e2fsck runs
// read_bad_blocks_file: after the skip check (which these options turn
// off) and the resize-inode check, before pass 1.

// badBlocksOpts are the bad-block options of the command line.
type badBlocksOpts struct {
	file    string // -l/-L
	replace bool   // -L given (even if a later -l names the file)
	cflag   int    // -c count: 2 or more is the read-write test
	keep    bool   // -k
}

// option records one bad-block option; false when op is not one.
func (b *badBlocksOpts) option(name byte, arg string) bool {
	switch name {
	case 'c':
		b.cflag++
	case 'L':
		b.replace = true
		b.file = arg
	case 'l':
		b.file = arg
	case 'k':
		b.keep = true
	default:
		return false
	}
	return true
}

// active reports whether the run updates the bad-block list.
func (b *badBlocksOpts) active() bool { return b.file != "" || b.cflag > 0 }

// validate applies e2fsck's rules for the combinations: -n excludes -c
// and -l/-L (exit 8), and -c excludes -l/-L (exit 16).
func (b *badBlocksOpts) validate(o *options, stderr io.Writer) (int, bool) {
	if o.mode == problem.ModeNo && b.cflag > 0 {
		fmt.Fprintf(stderr, "%s: The -n and -c options are incompatible.\n", o.prog)
		return problem.ExitError, false
	}
	if o.mode == problem.ModeNo && b.file != "" {
		fmt.Fprintf(stderr, "%s: The -n and -l/-L options are incompatible.\n", o.prog)
		return problem.ExitError, false
	}
	if b.cflag > 0 && b.file != "" {
		fmt.Fprint(stderr, "The -c and the -l/-L options may not be both used at the same time.\n")
		return problem.ExitUsage, false
	}
	return 0, true
}

// updateBadBlocks runs the update before pass 1. It returns false with
// the exit code when the run must end: e2fsck's fatal_error (the changes
// made so far are written, as e2fsck's are on disk by then) or an update
// gofsck does not implement (nothing written).
func (r *repairRun) updateBadBlocks(blockSize int, lastBlock uint64) (int, bool) {
	b := &r.o.bb
	if !b.active() || !r.active() || r.rep.Stopped() {
		return 0, true
	}
	u := check.BadBlocksUpdate{Out: r.stdout, Device: r.name}
	if b.file != "" {
		u.Replace = b.replace
		u.Open = func() (io.ReadCloser, error) {
			fh, err := os.Open(b.file)
			if err != nil {
				return nil, fmt.Errorf("read_bad_blocks_file: %s while trying to open %s", errnoText(unwrapPath(err)), b.file)
			}
			return fh, nil
		}
	} else {
		u.Replace = !b.keep
		u.Open = func() (io.ReadCloser, error) {
			return startBadblocks(badblocksCommand(blockSize, r.o.preen, b.cflag > 1, r.o.device, lastBlock), r.stderr)
		}
	}
	err := r.chk.UpdateBadBlocks(u)
	if err == nil {
		return 0, true
	}
	if errors.Is(err, check.ErrBadBlocksUnsupported) {
		r.ov.Discard()
		fmt.Fprintf(r.stderr, "\n%s: %s: updating this bad-block inode (extent-mapped, inline or bigalloc, or a looping block map) is not implemented yet.\n"+
			"Nothing was written to %s. Run e2fsck to update it.\n", r.o.prog, r.name, r.o.device)
		return problem.ExitError, false
	}
	fmt.Fprintf(r.stderr, "%s\n", err)
	code := problem.ExitError
	if r.modified() {
		if !r.flush() {
			return problem.ExitError, false
		}
		r.printModified()
		code |= problem.ExitNonDestruct
	}
	return code, false
}

// readBadBlocksInode reports an error of e2fsck's reading of the
// bad-block list before pass 1 (ext2fs_read_bb_inode in main): a preening
// run halts, any other goes on.
func (r *repairRun) readBadBlocksInode() (int, bool) {
	if r.rep.Stopped() {
		// A halt before (the resize inode check): the passes end the run.
		return 0, true
	}
	msg := r.chk.BadBlocksInodeError()
	if msg == "" {
		return 0, true
	}
	fmt.Fprintf(r.stdout, "%s: %s while reading bad blocks inode\n", r.o.prog, msg)
	if r.o.preen {
		r.rep.PreenHalt()
		return r.halt(), false
	}
	fmt.Fprintln(r.stdout, "This doesn't bode well, but we'll try to go on...")
	return 0, true
}

// badblocksCommand is the command line e2fsck gives popen.
func badblocksCommand(blockSize int, preen, writeCheck bool, device string, last uint64) string {
	progress, rw := "-s ", ""
	if preen {
		progress = ""
	}
	if writeCheck {
		rw = "-n "
	}
	return fmt.Sprintf("badblocks -b %d -X %s%s%s %d", blockSize, progress, rw, device, last)
}

// badblocksRun is the running badblocks program; Close waits for it, as
// pclose does (its exit status is not looked at).
type badblocksRun struct {
	io.ReadCloser
	cmd *exec.Cmd
}

func (b *badblocksRun) Close() error {
	b.ReadCloser.Close()
	b.cmd.Wait()
	return nil
}

// startBadblocks runs line through the shell with /sbin first in PATH
// (as e2fsck sets it for -c); its standard output is the list.
func startBadblocks(line string, stderr io.Writer) (io.ReadCloser, error) {
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.Env = append(os.Environ(), "PATH=/sbin:"+os.Getenv("PATH"))
	cmd.Stdin = os.Stdin
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		return nil, fmt.Errorf("read_bad_blocks_file: %s while trying popen '%s'", errnoText(unwrapPath(err)), line)
	}
	return &badblocksRun{ReadCloser: out, cmd: cmd}, nil
}

// unwrapPath returns the errno inside a path error.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
