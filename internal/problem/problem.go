// Package problem holds e2fsck's problem catalogue (stable codes, message
// templates, prompts, flags and latches) and the engine that prints a finding,
// decides its answer for -n / -y / -p / interactive runs, and keeps the
// status that becomes the exit code.
//
// Checkers never print: they build a Problem value and hand it to a Fixer,
// which returns whether the fix was accepted.
//
// The catalogue (codes.go, table.go) has one Code constant per entry of
// e2fsck's problem table, named and numbered as in e2fsck, and a Def per
// code with the message template, prompt, flags, latch and chained code
// (Lookup, Defs). The templates print character for character what e2fsck
// prints.
//
// Reporter is the engine, e2fsck's fix_problem. The checker uses it so:
//
//   - Pass headers: r.Header(PR_1_PASS_HEADER) at the start of each pass
//     (nothing is printed when preening). PR_1B_PASS_HEADER prints the
//     "Running additional passes..." line too; PR_3A_PASS_HEADER is
//     reported when the first directory is optimised.
//   - Findings: if r.Fix(problem.Problem{Code: ..., Ino: ...}) { repair }.
//     After each call that can stop the run (or at least after each work
//     unit) check r.Stopped(): a FATAL problem or an Abort answered yes
//     sets Aborted, a problem preen may not fix sets Halted.
//   - Latches: members are reported with Fix like any problem; the first
//     member asks the latch question (PR_1_INODE_BLOCK_LATCH, ...) and
//     later members reuse its answer. The checker calls r.EndLatch(l) where
//     e2fsck calls end_problem_latch: LatchBlock and LatchTooBig after each
//     inode of pass 1, LatchDBlock after each inode's pass-1B block list,
//     LatchBBitmap / LatchIBitmap after the pass-5 difference lists (the
//     returned fix says whether to copy the computed bitmap),
//     LatchOptimizeDir / LatchOptimizeExt after each progress line of
//     3A / 1E. SetLatchState pre-latches LatchReloc when -b was given; a
//     yes to PR_1_SUPPRESS_MESSAGES silences LatchBlock until its end.
//   - At the end, r.Status().ExitCode(RunEnd{...}) is the exit status.
//
// e2fsck.conf's [problems] stanza reaches the Reporter as Options.Settings
// (config.go): each Reporter applies them over its own copy of the
// catalogue, so that Fix and Answer see the configured message, flags
// and max_count; the shared catalogue (Lookup, Defs) stays e2fsck's.
package problem

// Code is e2fsck's numeric problem code: 0xPPNNNN where PP is the pass
// (0x00 pre-pass, 0x01 pass 1, 0x011 1B, 0x012 1C, 0x013 1D, 0x014 1E,
// 0x02 pass 2, 0x03 pass 3, 0x031 3A, 0x04 pass 4, 0x05 pass 5, 0x06 end).
// The numbers equal e2fsck's so that problem logs and config overrides mean
// the same thing in both programs.
type Code uint32

// InodeInfo is the part of an inode that messages can print (%I... fields).
type InodeInfo struct {
	Mode       uint16
	Links      uint16
	UID, GID   uint32
	Size       uint64
	Blocks     uint64 // i_blocks as %Ib prints it: lo, plus hi<<32 with huge_file
	Mtime      int64
	Faddr      uint32
	FileACL    uint64
	SizeHigh   uint32
	ExtraIsize uint16
	Flags      uint32
}

// DirentInfo is the directory entry a message talks about (%D... fields).
type DirentInfo struct {
	Ino uint32
	// RecLen is the decoded record length (ext2fs_get_rec_len); %Dn
	// prints at most RecLen bytes of the name. 0 means unknown.
	RecLen   uint32
	NameLen  uint8
	FileType uint8
	Name     []byte
}

// Problem is one finding with its context, the equivalent of e2fsck's
// problem_context. Only the fields that the code's message names (the
// %-sequences noted beside them) are printed.
type Problem struct {
	Code     Code
	Ino      uint32 // %i
	Ino2     uint32 // %j
	Dir      uint32 // %d
	Blk      uint64 // %b
	Blk2     uint64 // %c
	BlkCount int64  // %B (negative values name indirect blocks) and %r
	Group    uint32 // %g
	Num      uint64 // %N
	Num2     uint64 // %n
	Csum1    uint32 // %x
	Csum2    uint32 // %y
	Str      string // %s
	Err      string // %m
	Inode    *InodeInfo
	Dirent   *DirentInfo
}

// Namer turns inode numbers into path names for messages (%p, %P, %q, %Q).
// Path(dir, ino) has the contract of e2fsprogs' ext2fs_get_pathname: it
// is the path of ino found as an entry of directory dir, or the path of dir
// itself when ino is 0 or equal to dir. It returns "???" when no name can
// be found at all, and e2fsck's partial forms otherwise ("/lost+found/???"
// for a name missing from its directory, "<12>/<13>" when dir is not a
// directory, "..." past 32 levels). The Reporter never calls it with dir 0:
// it prints the reserved inodes below 11 by their special names
// ("<The NULL inode>", "/", ...) itself, and "..." for other inodes.
// Non-printable bytes in the result are escaped by the Reporter.
type Namer interface {
	Path(dir, ino uint32) string
}

// Fixer is what the passes report to: it prints the problem as e2fsck
// would, decides the answer, and returns true when the fix should be applied.
type Fixer interface {
	Fix(p Problem) bool
}
