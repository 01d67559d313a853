package check

import (
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Recreating the resize inode. check_resize_inode clears an invalid resize
// inode (PR_0_RESIZE_INODE_INVALID, "Recreate") and asks for it to be
// rebuilt, as it does silently when inode 7 cannot be read; once pass 1
// has mapped the blocks in use, e2fsck runs the library's
// ext2fs_create_resize_inode (a double-indirect block listing the
// reserved GDT blocks, each listing its copies in the backup groups) and
// stamps the inode's mtime.

// clearResizeInode is the "yes" of PR_0_RESIZE_INODE_INVALID: the base
// inode (the first 128 bytes, what e2fsck's struct ext2_inode covers) is
// zeroed, the rest kept, and the re-creation is due at pass 1's end.
func (c *Checker) clearResizeInode(n ondisk.Inode) {
	w := make(ondisk.Inode, len(n))
	copy(w, n)
	clear(w[:min(len(w), ondisk.GoodOldInodeSize)])
	c.writeInode(ondisk.ResizeIno, w)
	c.repair.reloc.resize = true
}

// recreateResizeInode is the end of pass 1 when the resize inode is due:
// ext2fs_create_resize_inode, PR_1_RESIZE_INODE_CREATE when it fails
// (declining aborts the run), then the inode's mtime set to now.
func (c *Checker) recreateResizeInode() {
	r := &c.repair.reloc
	if !r.resize {
		return
	}
	r.resize = false
	if msg := c.createResizeInode(); msg != "" {
		if c.abort {
			return
		}
		if !c.fix(problem.Problem{Code: problem.PR_1_RESIZE_INODE_CREATE, Err: msg}) {
			c.abort = true
			return
		}
	}
	n, ok := c.readResizeInode()
	if !ok {
		// e2fsck stops with a fatal read error here.
		c.unsupported(problem.PR_1_RESIZE_INODE_CREATE)
		return
	}
	n.SetMtime(uint32(c.opt.Now.Unix()))
	c.writeInode(ondisk.ResizeIno, n)
}

// readResizeInode reads inode 7 as ext2fs_read_inode does (a checksum
// that does not verify is an error).
func (c *Checker) readResizeInode() (ondisk.Inode, bool) {
	f := c.fs
	buf := make([]byte, f.InodeSize)
	if f.ReadInode(ondisk.ResizeIno, buf, make([]byte, f.BlockSize)) != nil {
		return nil, false
	}
	n := ondisk.Inode(buf)
	if f.MetadataCsum && !n.ChecksumValid(f.CsumSeed, ondisk.ResizeIno) {
		return nil, false
	}
	return n, true
}

// createResizeInode is ext2fs_create_resize_inode (ext2fs.CreateResizeInode)
// through the repair path. It returns the error message of a failure (""
// on success); a failure gofsck cannot follow stops the run (c.abort,
// with the problem marked unsupported).
//
// The double-indirect block comes from e2fsck's allocator: fs->block_map
// is marked only if something loaded it before (else pass 5 finds the
// block, as after a revision 0 superblock gained resize_inode).
func (c *Checker) createResizeInode() string {
	cur, ok := c.readResizeInode()
	if !ok {
		c.unsupported(problem.PR_1_RESIZE_INODE_CREATE)
		return "unreadable"
	}
	alloc := c.newBlock
	if c.libBlockMapUnloaded() {
		alloc = c.unloadedAllocBlock
	}
	fsys := &ext2fs.Filsys{FS: c.fs, IO: repairIO{c}, Alloc: ext2fs.AllocFuncs{Alloc: alloc, Free: c.releaseBlock}}
	if err := ext2fs.CreateResizeInode(fsys, cur, uint32(c.opt.Now.Unix())); err != nil {
		return err.Error()
	}
	return ""
}
