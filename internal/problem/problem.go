// Package problem holds e2fsck's problem catalogue (stable codes, message
// templates, prompts, flags and latches) and the engine that prints a finding,
// decides its answer for -n / -y / -p / interactive runs, and keeps the
// status that becomes the exit code.
//
// Checkers never print: they build a Problem value and hand it to a Fixer,
// which returns whether the fix was accepted.
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
	Blocks     uint64 // i_blocks as stored (lo + hi)
	Mtime      int64
	Faddr      uint32
	FileACL    uint64
	SizeHigh   uint32
	ExtraIsize uint16
	Flags      uint32
}

// DirentInfo is the directory entry a message talks about (%D... fields).
type DirentInfo struct {
	Ino      uint32
	RecLen   uint32
	NameLen  uint8
	FileType uint8
	Name     []byte
}

// Problem is one finding with its context, the equivalent of e2fsck's
// problem_context. Zero fields are simply not printed.
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
// Path(dir, ino) is the path of ino found through directory dir; dir 0 means
// "look ino up by itself". It returns "???" when no name can be found.
type Namer interface {
	Path(dir, ino uint32) string
}

// Fixer is what the passes report to: it prints the problem as e2fsck
// would, decides the answer, and returns true when the fix should be applied.
type Fixer interface {
	Fix(p Problem) bool
}
