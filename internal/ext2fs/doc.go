// Package ext2fs is the library mechanics the checker stands on, as
// e2fsck/ stands on lib/ext2fs: the operations e2fsck calls into
// libext2fs for, modelled with the library's results and quirks, so that
// a repair made through them leaves the same bytes on disk as e2fsck's.
//
// It holds mechanics only, never e2fsck policy: what to ask, in which
// order, and what counts as a fix stay in internal/check. Where an
// operation needs the caller's state (the overlay and undo write path,
// the allocator of the passes, the bitmaps a repair marks), it takes a
// small interface the caller implements, as e2fsck hands the library its
// set_alloc_block_callback.
//
// It imports ondisk (and ondisk/jbd2, for the superblock of a journal it
// creates), fs, blockdev, bitmap, csum and the leaf packages, and never
// internal/check.
package ext2fs
