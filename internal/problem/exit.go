package problem

// The exit status bits of e2fsck (and of fsck in general).
const (
	ExitOK          = 0   // no errors
	ExitNonDestruct = 1   // errors corrected
	ExitReboot      = 2   // errors corrected, the system should be rebooted
	ExitUncorrected = 4   // errors left uncorrected
	ExitError       = 8   // operational error
	ExitUsage       = 16  // usage or syntax error
	ExitCancelled   = 32  // cancelled by the user
	ExitLibrary     = 128 // shared-library error
)

// RunEnd is what the checker knows at the end of a run, beyond the
// Reporter's Status, to compute the exit status.
type RunEnd struct {
	// Modified: something was written to the file system (e2fsck's
	// ext2fs_test_changed).
	Modified bool
	// ReadOnly: the run could not write (-n).
	ReadOnly bool
	// SuperWasValid: the superblock had EXT2_VALID_FS set when the check
	// started. A writable run that ends valid sets it, which counts as a
	// correction when it was clear.
	SuperWasValid bool
	// MountedRoot: the file system is the mounted root.
	MountedRoot bool
	// SuperHadErrors: the superblock has EXT2_ERROR_FS (matters only for a
	// cancelled run).
	SuperHadErrors bool
	// AllowCancellation is the e2fsck.conf option of that name: a
	// cancelled run on a valid, clean file system exits 0.
	AllowCancellation bool
}

// ExitCode returns e2fsck's exit status for a run that ended with status
// s, following unix.c: a preen halt exits 4; an abort exits 8 plus 1 (or
// 2) when the file system was modified, and 4 instead of 1 when it is
// still invalid; a completed run exits 1 when it fixed something (or made
// a not-valid superblock valid), 2 more for a modified mounted root, 4
// (clearing 1) when errors remain, 32 (clearing 1) when cancelled.
func (s Status) ExitCode(end RunEnd) int {
	if s.Halted {
		return ExitUncorrected
	}
	code := ExitOK
	if s.Aborted {
		code = ExitError
		if end.Modified {
			code |= ExitNonDestruct
			if end.MountedRoot {
				code |= ExitReboot
			}
		}
		if s.Invalid {
			code |= ExitUncorrected
			code &^= ExitNonDestruct
		}
		return code
	}
	if s.Cancelled {
		code |= ExitCancelled
	}
	if !end.ReadOnly && !s.Cancelled && !s.Invalid && !end.SuperWasValid {
		code |= ExitNonDestruct
	}
	if end.Modified {
		if s.Fixed {
			code |= ExitNonDestruct
		}
		if end.MountedRoot {
			code |= ExitReboot
		}
	}
	if s.Invalid || (s.Cancelled && end.SuperHadErrors) {
		code |= ExitUncorrected
		code &^= ExitNonDestruct
	}
	if s.Cancelled {
		code &^= ExitNonDestruct
		if end.AllowCancellation && !s.Invalid && end.SuperWasValid && !end.SuperHadErrors {
			code = ExitOK
		}
	}
	return code
}
