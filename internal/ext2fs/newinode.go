package ext2fs

import (
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// largeInodeExtra is the i_extra_isize of a new large inode: the fields
// of struct ext2_inode_large past the first 128 bytes, up to i_projid.
const largeInodeExtra = 32

// NewInode is the inode ext2fs_write_new_inode writes from base (its
// first 128 bytes; the rest is ignored), f.InodeSize bytes long: base's
// zero i_atime, i_ctime and i_mtime become now; in a large inode
// everything past the first 128 bytes is zero but i_extra_isize (32) and
// i_crtime (now, where the inode reaches it). The caller writes it (with
// its checksum).
func NewInode(f *fs.FS, base ondisk.Inode, now uint32) ondisk.Inode {
	n := make(ondisk.Inode, max(f.InodeSize, ondisk.GoodOldInodeSize))
	copy(n, base[:min(len(base), ondisk.GoodOldInodeSize)])
	if n.Atime() == 0 {
		n.SetAtime(now)
	}
	if n.Ctime() == 0 {
		n.SetCtime(now)
	}
	if n.Mtime() == 0 {
		n.SetMtime(now)
	}
	if len(n) > ondisk.GoodOldInodeSize {
		n.SetExtraIsize(largeInodeExtra)
		n.SetCrtime(now)
	}
	return n
}
