package check

import (
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
)

// encryptionXattr is e2fsck's read_encryption_xattr: the fscrypt context
// ("c" in the encryption index) as the library's ext2fs_xattrs_read and
// ext2fs_xattr_get find it. The library reads every attribute of the
// inode or none: found is false (no policy, "encrypt flag but no
// encryption extended attribute") when the file system has neither the
// ext_attr nor the inline_data feature, when the inode as read from disk
// fails its checksum (pass 1 checks each inode before fixing its
// checksum; an inode a fix already wrote has a good one, and a 128-byte
// inode comes from pass 1's own copy, unchecked), and when an attribute
// the library validates is bad (xattrsReadable: layout, entry hashes, the
// EA block's header and checksum).
func (c *Checker) encryptionXattr(n ondisk.Inode, failedCsum bool) ([]byte, bool) {
	if !c.sb.HasCompat(ondisk.CompatExtAttr) && !c.sb.HasIncompat(ondisk.IncompatInlineData) {
		return nil, false
	}
	if failedCsum && !c.p1.wrote && len(n) > ondisk.GoodOldInodeSize {
		return nil, false
	}
	if !c.xattrsReadable(n) {
		return nil, false
	}
	ctx, found := ext2fs.FindInodeXattr(n, ondisk.XattrIndexEncrypt, "c")
	if !found {
		ctx, found = ext2fs.FindBlockXattr(c.fs, n, ondisk.XattrIndexEncrypt, "c")
	}
	return ctx, found
}
