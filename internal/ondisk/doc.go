// Package ondisk decodes and checksums the ext2/ext3/ext4 on-disk structures:
// superblock, group descriptors, inodes, extent nodes, directory entries and
// htree nodes, and extended-attribute areas. It does no I/O.
//
// Every structure is a view over a byte slice with one accessor per logical
// field, reading little-endian at named offsets that carry the kernel's field
// names. Views never panic: constructors check the slice length once, and
// every length, offset or count taken from the data is range-checked before it
// is used to slice. Decoding allocates nothing.
package ondisk

import (
	"errors"
	"fmt"
)

// ErrCorrupt marks data that is not a valid structure (as opposed to an I/O
// error). Test with errors.Is(err, ondisk.ErrCorrupt).
var ErrCorrupt = errors.New("ondisk: corrupt structure")

// ErrChecksum marks a structure whose contents decode but whose checksum does
// not match.
var ErrChecksum = errors.New("ondisk: checksum mismatch")

// FormatError says which field of which structure is wrong. It wraps
// ErrCorrupt.
type FormatError struct {
	Struct string // "superblock", "extent header", ...
	Field  string // kernel field name
	Off    int    // byte offset in the structure
	Val    uint64 // offending value
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("ondisk: bad %s %s (offset %d): %d", e.Struct, e.Field, e.Off, e.Val)
}

// Unwrap lets errors.Is(err, ErrCorrupt) match.
func (e *FormatError) Unwrap() error { return ErrCorrupt }

// inRange reports whether [off, off+n) lies within size, without overflow.
func inRange(off, n, size int) bool {
	return off >= 0 && n >= 0 && off <= size && n <= size-off
}
