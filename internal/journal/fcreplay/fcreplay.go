// Package fcreplay applies the fast commits of an ext4 journal as
// e2fsck's recovery does (e2fsck/journal.c's ext4_fc_replay over
// libext2fs), after the normal log has been replayed: the tags are
// decoded, and the inode, add-range, del-range, link, unlink and create
// records applied with the library's semantics, quirks included.
//
// The checker that runs the replay supplies what is its own through
// Host: its write path (overlay and undo file), its bitmaps, and the
// library operations that still live in the checker (directory block
// walks, linear-directory links, extent-tree loading and rewriting,
// inline-data attributes). Everything else, the record decoding, the
// extent-list editing, htree and inline-directory links and unlinks, the
// summary counts, is here.
//
// Applying fast commits (e2fsck 1.47.0's ext4_fc_replay, after the normal
// log's PASS_REPLAY), with the library's semantics:
//
//   - at the first record the bitmaps are read (through the descriptors
//     as e2fsck holds them in memory, that is as opened before the
//     replay), the superblock is marked with errors and "fast commit
//     replay" and flushed (primary descriptors written whole, the primary
//     superblock patched where it differs from the one last written);
//   - INODE records overwrite the inode (all but i_block, kept unless the
//     tree header is missing), then i_blocks is recounted as
//     ext2fs_count_blocks counts it;
//   - ADD_RANGE and DEL_RANGE edit the inode's extent list (read with
//     load_extents, which frees the tree's index blocks), marking and
//     unmarking the bitmap; the list is written back (rewrite_extent_tree,
//     the library's extent handle allocating from the bitmap) when the
//     records move on to another inode, at a link and at the tail;
//   - CREAT and LINK unlink the name (forced) and link it (ext2fs_link on
//     a linear directory, or dx_link into the leaf the name hashes to, or
//     into an inline directory's areas: inline.go); UNLINK
//     unlinks it;
//   - at the end the group and superblock counts are recomputed from the
//     bitmaps, the bitmaps written, the descriptors checksummed and the
//     superblock state restored and flushed.
//
// With bigalloc the bitmap is one of clusters (ranges widened to whole
// clusters, i_blocks scaled by the cluster ratio) while the summary counts
// are 1.47.0's block-wise ones; with meta_bg every flush writes the
// meta_bg descriptor blocks and their backups.
//
// A record e2fsck cannot apply fails the replay as it does
// (a *Failure): an inode number out of range, an
// i_extra_isize out of bounds, an extent read of an inode without extents,
// a missing name to unlink, a link into a non-directory or a damaged
// htree, a short dentry record, an unknown mode. The handlers read their
// structures whatever the record's length says, as e2fsck's memcpy does.
//
// What stays unsupported, stopping the recovery before anything reaches
// the disk: what e2fsck does not do deterministically (a record header or
// structure read past the block, from heap bytes; a 7-byte dentry record,
// on which it crashes) and what is not emulated (dx_link into a
// casefolded htree or a full htree leaf, which dx_grow_tree splits after
// ext2fs_fallocate added a block; blocks the replay cannot read, which
// e2fsck's I/O handler would report; extent blocks with bad checksums,
// which the library ignores during the replay, or cycles; errors while
// rewriting an extent tree; inline directories whose system.data the
// library would read or write in ways not emulated; extent lists too
// large to mark in reasonable time).

package fcreplay

import (
	"errors"
	"fmt"
	"time"

	"gofsck/internal/bitmap"
	"gofsck/internal/fs"
	"gofsck/internal/journal"
	"gofsck/internal/ondisk"
)

// Host is what the replay needs from the checker that runs it. Writes go
// through the checker's write path; reads of inodes and blocks go
// through Params.FS, whose device is under the same overlay.
type Host interface {
	// WriteAt writes raw bytes at a byte offset of the filesystem (the
	// superblock and descriptor flushes).
	WriteAt(off int64, data []byte)
	// WriteInode writes inode ino, its checksum recomputed.
	WriteInode(ino uint32, n ondisk.Inode)
	// WriteDirBlock is ext2fs_write_dir_block4: the block's checksum
	// set for directory dir, then written.
	WriteDirBlock(blk uint64, buf []byte, dir uint32)
	// WriteError is the first write error so far, or nil.
	WriteError() error
	// Diag prints one line of the library's on stderr.
	Diag(line string)

	// LoadBitmaps reads the on-disk bitmaps (fs->block_map, by
	// cluster, and fs->inode_map), which the replay then edits in place;
	// the host's block allocation (RewriteExtents) works on the same
	// block map from then on.
	LoadBitmaps() (blocks, inodes *bitmap.Bitmap)
	// StoreBitmaps writes the bitmaps back and checksums the group
	// descriptors over the inode map (ext2fs_set_gdt_csum).
	StoreBitmaps()

	// DirBlocks returns directory n's data blocks in the library's
	// order, logical and physical numbers, at most 1<<20 of them.
	DirBlocks(n ondisk.Inode) (lblks []int64, pblks []uint64)
	// Link is ext2fs_link without EXT2FS_LINK_EXPAND into the linear
	// directory dir: nil, ext2fs.ErrDirNoSpace, ext2fs.ErrDirCorrupted
	// or an *UnsupportedError.
	Link(dir uint32, name string, ino uint32, ft uint8) error
	// LoadExtents is e2fsck's load_extents: ino's leaf extents, the
	// tree's index blocks freed (their count returned), or the
	// library's error.
	LoadExtents(ino uint32, n ondisk.Inode) (segs []Seg, freed uint64, err error)
	// RewriteExtents is rewrite_extent_replay: n's tree rebuilt from
	// segs with the library's extent handle, freed index blocks
	// accounted.
	RewriteExtents(ino uint32, n ondisk.Inode, segs []Seg, freed uint64) error
	// InlineData is ext2fs_inline_data_ea_get: the value of inline
	// directory dir's system.data (nil when empty), or an
	// *UnsupportedError.
	InlineData(dir uint32) ([]byte, error)
	// SetInlineData is ext2fs_inline_data_ea_set.
	SetInlineData(dir uint32, value []byte) error
}

// Params are the replay's inputs besides the Host.
type Params struct {
	FS *fs.FS
	// Super is the superblock as the checker holds it in memory; the
	// replay edits it (state, counts, s_wtime) and flushes it.
	Super ondisk.Superblock
	// OrigSuper is fs->orig_super: the primary superblock as last
	// written, against which flushes write only what changed.
	OrigSuper []byte
	// Now is the time stored in s_wtime.
	Now time.Time
	// Device is fs->device_name, in the library's bitmap warnings.
	Device string
	// Journal is the journal recovered, and Tags the count of fast
	// commit records its scan found.
	Journal *journal.Journal
	Tags    int
}

// Seg is one extent of an inode's extent list (struct ext2fs_extent).
type Seg struct {
	Lblk, Pblk uint64
	Len        uint64
	Uninit     bool
}

// EXT4_FC_REPLAY, the superblock state bit set while fast commits are
// applied.
const stateFCReplay = 0x0020

// maxExtentDepth bounds the extent trees countBlocks walks.
const maxExtentDepth = 32

// UnsupportedError says why a fast-commit replay is not emulated: the
// recovery stops before anything reaches the disk.
type UnsupportedError struct{ Why string }

func (e *UnsupportedError) Error() string { return "fast commit replay: " + e.Why }

// Unsupported returns an *UnsupportedError of the formatted reason.
func Unsupported(format string, a ...any) error {
	return &UnsupportedError{fmt.Sprintf(format, a...)}
}

// IsUnsupported reports whether err is an *UnsupportedError, and why.
func IsUnsupported(err error) (string, bool) {
	var e *UnsupportedError
	if errors.As(err, &e) {
		return e.Why, true
	}
	return "", false
}

// Failure is a failed fast-commit replay as jbd2_journal_recover
// returns it to e2fsck: a negative errno, which e2fsck prints (EUCLEAN as
// "Journal corrupted", others as "<strerror> while recovering journal").
// What the replay wrote before it failed stays written; the bitmaps and
// counts it held in memory are dropped, and the journal is emptied with
// its old sequence.
type Failure struct {
	Errno int
	Text  string // strerror
}

func (e *Failure) Error() string { return e.Text }

// Corrupted reports whether the errno is EUCLEAN (EFSCORRUPTED).
func (e *Failure) Corrupted() bool { return e.Errno == errnoEUCLEAN }

// The errnos of a failed replay.
var (
	errFCNoMem    = &Failure{12, "Cannot allocate memory"}
	errFCFault    = &Failure{14, "Bad address"}
	errFCInval    = &Failure{22, "Invalid argument"}
	errFCCanceled = &Failure{125, "Operation canceled"}
)

// errnoEUCLEAN is EFSCORRUPTED.
const errnoEUCLEAN = 117

// The lines of e2fsck/journal.c (1.47.0) whose errcode_to_errno calls
// print the library errors of the replay.
const (
	lineReadExtents   = 589
	lineHandleUnlink  = 654
	lineLinkReadInode = 673
	lineLinkLink      = 706
	lineHandleInode   = 802
)

// diag prints a library message through the host.
func (r *fcReplay) diag(format string, a ...any) { r.h.Diag(fmt.Sprintf(format, a...)) }

// libError is errcode_to_errno(err) in function fn at line: the error is
// printed on stderr, and the replay fails with -EFAULT, or with the errno
// itself when err is one.
func (r *fcReplay) libError(fn string, line int, err error) error {
	if _, ok := IsUnsupported(err); ok {
		return err
	}
	r.diag("Error \"%s\" encountered in function %s at line %d\n", err.Error(), fn, line)
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	return errFCFault
}

// fcReads checks that a handler's read of n bytes from a record's value
// (the rest of the block) stays in the block: e2fsck would read heap
// bytes past its buffer, which is not deterministic.
func fcReads(v []byte, n int) error {
	if n > len(v) {
		return errPastBlock()
	}
	return nil
}

// errPastBlock is the reason of fcReads.
func errPastBlock() error { return Unsupported("record read past the block") }
