package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"gofsck/internal/blockdev"
	"gofsck/internal/getopt"
	"gofsck/internal/undo"
)

// undoProg names "gofsck undo" in its messages, where e2undo says "e2undo".
const undoProg = "gofsck undo"

// runUndo is "gofsck undo [-f] [-h] [-n] [-o offset] [-v] UNDO_FILE DEVICE":
// e2undo(8) for the undo files gofsck and e2fsprogs write, with e2undo's
// options, messages and exit status (0 done, 1 refused or failed). Unlike
// e2undo it leaves the device exactly as it was before the run that wrote
// the undo file, also when that run was interrupted (e2undo then marks the
// file system not clean); and with -f it skips blocks whose saved copy is
// corrupt rather than writing them. -z (an undo file for the undo) is not
// supported.
func runUndo(args []string, stdout, stderr io.Writer) int {
	usage := func() int {
		fmt.Fprintf(stderr, "Usage: %s [-f] [-h] [-n] [-o offset] [-v] <transaction file> <filesystem>\n", undoProg)
		return 1
	}
	opts, operands, err := getopt.Parse(undoProg, args, "fhno:v")
	if err != nil {
		fmt.Fprintln(stderr, err)
		return usage()
	}
	var aopt undo.Options
	var dump, verbose bool
	for _, o := range opts {
		switch o.Name {
		case 'f':
			aopt.Force = true
		case 'h':
			dump = true
		case 'n':
			aopt.DryRun = true
		case 'o':
			v, err := strconv.ParseUint(o.Arg, 0, 64)
			if err != nil {
				fmt.Fprintf(stderr, "%s: illegal offset - %s\n", undoProg, o.Arg)
				return 1
			}
			aopt.Offset, aopt.HasOffset = v, true
		case 'v':
			verbose = true
		}
	}
	if len(operands) != 2 {
		return usage()
	}
	undoFile, device := operands[0], operands[1]

	h, err := undo.ReadHeader(undoFile)
	if err != nil {
		var pe *os.PathError
		switch {
		case errors.As(err, &pe):
			fmt.Fprintf(stderr, "%s: %s while opening undo file `%s'\n", undoProg, errnoText(pe.Err), undoFile)
		case errors.Is(err, undo.ErrNotUndoFile):
			fmt.Fprintf(stderr, "%s: Not an undo file.\n", undoFile)
		case errors.Is(err, io.ErrUnexpectedEOF):
			fmt.Fprintf(stderr, "%s: Attempt to read block from filesystem resulted in short read while reading undo file\n", undoProg)
		default:
			fmt.Fprintf(stderr, "%s: %v while reading undo file\n", undoProg, err)
		}
		return 1
	}
	if dump {
		dumpUndoHeader(stdout, h)
		return 1 // as e2undo -h
	}
	if err := h.Validate(aopt.Force); err != nil {
		fmt.Fprintln(stderr, undoFile+": "+headerProblem(err))
		return 1
	}
	if mounted, err := mountedDevice(device); err != nil {
		fmt.Fprintf(stderr, "%s: %s Error while determining whether %s is mounted.\n", undoProg, errorText(err), device)
		return 1
	} else if mounted {
		fmt.Fprintf(stderr, "%s: should only be run on unmounted filesystems\n", undoProg)
		return 1
	}
	dev, err := blockdev.Open(device, aopt.DryRun, true)
	if err != nil {
		var oe *blockdev.OpenError
		cause := err
		if errors.As(err, &oe) {
			cause = oe.Err
		}
		var pe *os.PathError
		if errors.As(cause, &pe) {
			cause = pe.Err
		}
		fmt.Fprintf(stderr, "%s: %s while opening `%s'\n", undoProg, errnoText(cause), device)
		return 1
	}
	defer dev.Close()

	if verbose {
		aopt.Replayed = func(k undo.Key) {
			fmt.Fprintf(stdout, "Replayed block of size %d from %d to %d\n", k.Size, k.FileBlock, k.FSBlock)
		}
	}
	aopt.BadKey = func(e *undo.KeyError) {
		if errors.Is(e, undo.ErrKeyMagic) || errors.Is(e, undo.ErrKeyChecksum) {
			return // -f: e2undo does not mention them either
		}
		fmt.Fprintln(stderr, keyProblem(undoFile, e))
	}
	res, err := undo.ApplyWith(undoFile, dev, aopt)
	var mis *undo.MismatchError
	var ke *undo.KeyError
	switch {
	case err == nil:
	case errors.As(err, &mis) && !mis.ChecksumOnly:
		fmt.Fprint(stdout, "The file system superblock doesn't match the undo file.\n")
		printMismatch(stdout, mis)
		return 1
	case errors.Is(err, undo.ErrSuperblockChecksum):
		fmt.Fprint(stderr, "Undo file superblock checksum doesn't match.\n")
		return 1
	case errors.As(err, &ke):
		fmt.Fprintln(stderr, keyProblem(undoFile, ke))
		return 1
	case errors.Is(err, undo.ErrReplay):
		fmt.Fprintf(stderr, "%s: %v\n", undoProg, err)
		fmt.Fprint(stderr, "IO error during replay; run e2fsck NOW!\n")
		return 1
	default:
		fmt.Fprintf(stderr, "%s: %v\n", undoProg, err)
		return 1
	}
	if res.Mismatch != nil && !aopt.Force {
		// Only an unfinished file gets here: its writer was stopped between
		// recording a superblock change and making it.
		fmt.Fprintf(stderr, "%s: the superblock differs from the undo file's copy, but the UUID matches and the undo file is incomplete: applied\n", undoProg)
	}
	code := 0
	if res.Corrupt > 0 {
		fmt.Fprint(stderr, "Undo file corruption; run e2fsck NOW!\n")
		code = 1
	}
	if res.Incomplete {
		fmt.Fprint(stderr, "Incomplete undo record; run e2fsck.\n")
	}
	return code
}

// headerProblem is e2undo's message for a header Validate refuses.
func headerProblem(err error) string {
	switch {
	case errors.Is(err, undo.ErrHeaderChecksum):
		return "Header checksum doesn't match."
	case errors.Is(err, undo.ErrBlockSizeTooLarge):
		return "Undo block size too large."
	case errors.Is(err, undo.ErrBlockSizeTooSmall):
		return "Undo block size too small."
	case errors.Is(err, undo.ErrUnknownFeature):
		return "Unknown undo file feature set."
	}
	return "Corrupt undo file header."
}

// keyProblem is e2undo's message for a bad key block or key.
func keyProblem(undoFile string, e *undo.KeyError) string {
	switch {
	case errors.Is(e, undo.ErrKeyMagic):
		return fmt.Sprintf("%s: wrong key magic at %d", undoFile, e.FileBlock)
	case errors.Is(e, undo.ErrKeyChecksum):
		return fmt.Sprintf("%s: key block checksum error at %d.", undoFile, e.FileBlock)
	case errors.Is(e, undo.ErrBlockTooLong) && e.Key != nil:
		return fmt.Sprintf("%s: %s: block %d is too long.", undoProg, undoFile, e.Key.FSBlock)
	case errors.Is(e, undo.ErrBlockChecksum) && e.Key != nil:
		return fmt.Sprintf("checksum error in filesystem block %d (undo blk %d)", e.Key.FSBlock, e.Key.FileBlock)
	}
	return fmt.Sprintf("%s: %s: %v", undoProg, undoFile, e)
}

// printMismatch prints e2undo's lines saying which superblock fields differ.
func printMismatch(w io.Writer, m *undo.MismatchError) {
	if m.UUID {
		fmt.Fprint(w, "UUID does not match.\n")
	}
	if m.MountTime {
		fmt.Fprint(w, "Last mount time does not match.\n")
	}
	if m.WriteTime {
		fmt.Fprint(w, "Last write time does not match.\n")
	}
	if m.KBytesWritten {
		fmt.Fprint(w, "Lifetime write counter does not match.\n")
	}
}

// dumpUndoHeader prints the header as e2undo -h does.
func dumpUndoHeader(w io.Writer, h *undo.Header) {
	fmt.Fprintf(w, "nr keys:\t%d\n", h.NumKeys())
	fmt.Fprintf(w, "super block:\t%d\n", h.SuperOffset())
	fmt.Fprintf(w, "key block:\t%d\n", h.KeyOffset())
	fmt.Fprintf(w, "block size:\t%d\n", h.BlockSize())
	fmt.Fprintf(w, "fs block size:\t%d\n", h.FSBlockSize())
	fmt.Fprintf(w, "super crc:\t0x%x\n", h.SuperCRC())
	fmt.Fprintf(w, "state:\t\t0x%x\n", h.State())
	fmt.Fprintf(w, "compat:\t\t0x%x\n", h.Compat())
	fmt.Fprintf(w, "incompat:\t0x%x\n", h.Incompat())
	fmt.Fprintf(w, "rocompat:\t0x%x\n", h.ROCompat())
	if h.Compat()&undo.CompatFSOffset != 0 {
		fmt.Fprintf(w, "fs offset:\t%d\n", h.FSOffset())
	}
	fmt.Fprintf(w, "header crc:\t0x%x\n", h.HeaderCRC())
}
