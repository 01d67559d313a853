package check

import (
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
)

// Checked inode reads after pass 1.
//
// Pass 1 scans the inode table with checksum errors reported as problems,
// but the later passes read single inodes through the library
// (ext2fs_read_inode), which fails with EXT2_ET_INODE_CSUM_INVALID when
// the inode does not match its checksum. Under -n nothing is rewritten,
// so an inode whose "passes checks, but checksum does not match" fix was
// declined still fails: e2fsck then stops with a com_err line where it
// wraps the read (e2fsck_read_inode), or treats the failure as the
// library call's error where it calls the library directly. The
// library's inode cache never records an inode that failed its
// checksum, so every such read sees the inode as it is in the table (or
// in the overlay, where a repair rewrote it with a fresh checksum).
//
// Not modelled: the failed read still copies the inode into the cache
// slot it would have taken, whose old inode number stays. Until the next
// cache miss, a read of that number returns the failed inode's bytes
// (pass 2 then checks, say, the root directory's block as the inline
// directory whose checksum failed). Following it needs e2fsck's whole
// sequence of library inode reads (four slots, round robin).

// inodeCsumFails reports whether n, inode ino as read from the table,
// fails its checksum the way the library's checked read does.
func (c *Checker) inodeCsumFails(ino uint32, n ondisk.Inode) bool {
	return c.fs.MetadataCsum && !n.ChecksumValid(c.fs.CsumSeed, ino)
}

// readInodeChecked is e2fsck_read_inode (fn "ext2fs_read_inode") or
// e2fsck_read_inode_full (fn "ext2fs_read_inode_full") called from proc:
// on a checksum failure it stops the run with e2fsck's line and returns
// false.
func (w *dirWorker) readInodeChecked(ino uint32, fn, proc string) (ondisk.Inode, bool) {
	n := w.readInode(ino)
	if w.c.inodeCsumFails(ino, n) {
		w.c.fatalError(fn + ": " + string(ext2fs.ErrInodeCsumInvalid) + " while reading inode " + utoa(ino) + " in " + proc + "\n")
		return n, false
	}
	return n, true
}

// dirCsumFails reports whether directory ino's inode fails its checksum,
// remembering the last directory asked about (its blocks mostly come one
// after another in pass 2).
func (w *dirWorker) dirCsumFails(ino uint32) bool {
	if w.csumIno != ino || w.c.repairing() {
		w.csumIno, w.csumBad = ino, w.c.inodeCsumFails(ino, w.readInode(ino))
	}
	return w.csumBad
}
