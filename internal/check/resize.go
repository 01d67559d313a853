package check

import (
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// CheckResizeInode validates the resize inode against the reserved GDT
// blocks (spec 2.8, e2fsck's check_resize_inode). It runs after the skip
// decision, before pass 1. Declined answers do not leave the filesystem
// invalid: e2fsck marks it valid again right after this check ("valid
// 'til proven otherwise"), so the sink is marked valid on return when it
// can be.
func (c *Checker) CheckResizeInode() {
	defer c.sink.MarkValid()
	f := c.fs
	sb := c.sb
	resize := sb.HasCompat(ondisk.CompatResizeInode)
	if resize && sb.HasIncompat(ondisk.IncompatMetaBG) &&
		c.fix(problem.Problem{Code: problem.PR_0_DISABLE_RESIZE_INODE}) && c.repairing() {
		sb.SetFeatureCompat(sb.FeatureCompat() &^ ondisk.CompatResizeInode)
		sb.SetReservedGdtBlocks(0)
		resize = false
	}
	if !resize && sb.ReservedGdtBlocks() != 0 &&
		c.fix(problem.Problem{Code: problem.PR_0_NONZERO_RESERVED_GDT_BLOCKS, Num: uint64(sb.ReservedGdtBlocks())}) && c.repairing() {
		sb.SetReservedGdtBlocks(0)
	}

	// An unreadable inode (bad table location, bad checksum) ends the
	// check silently, as ext2fs_read_inode failing does.
	buf := make([]byte, f.InodeSize)
	scratch := make([]byte, f.BlockSize)
	n := ondisk.Inode(buf)
	readErr := f.ReadInode(ondisk.ResizeIno, buf, scratch)
	if readErr != nil || f.MetadataCsum && !n.ChecksumValid(f.CsumSeed, ondisk.ResizeIno) {
		// The re-creation is due after pass 1 (resize_repair.go). A
		// read-only check gets there too: inode 7 still fails the same
		// way then, and the library's error stops the run.
		c.repair.reloc.resize = resize && (c.repairing() || readErr == nil)
		return
	}
	p := problem.Problem{Ino: ondisk.ResizeIno}
	if !resize {
		for i := 0; i < ondisk.NBlocks; i++ {
			if n.Block(i) != 0 {
				q := p
				q.Code = problem.PR_0_CLEAR_RESIZE_INODE
				if c.fix(q) && c.repairing() {
					c.writeInode(ondisk.ResizeIno, make(ondisk.Inode, f.InodeSize))
				}
				break
			}
		}
		return
	}
	if !c.resizeInodeValid(n, scratch) {
		q := p
		q.Code = problem.PR_0_RESIZE_INODE_INVALID
		if c.fix(q) && c.repairing() {
			c.clearResizeInode(n)
		}
		if c.repairing() {
			sb.SetState(sb.State() &^ ondisk.StateValid)
		}
	}
}

// resizeInodeValid checks that the resize inode maps exactly the reserved
// GDT blocks of every backup group through its double-indirect block. Like
// e2fsck it looks only at the first s_reserved_gdt_blocks/4 reserved
// blocks.
func (c *Checker) resizeInodeValid(n ondisk.Inode, scratch []byte) bool {
	f := c.fs
	sb := c.sb
	dind := uint64(n.Block(ondisk.DindBlock))
	for i := 0; i < ondisk.NBlocks; i++ {
		if i != ondisk.DindBlock && n.Block(i) != 0 {
			return false
		}
	}
	if dind == 0 || n.LinksCount() == 0 || n.Mode()&ondisk.SIFREG == 0 ||
		dind < f.FirstDataBlock || dind >= f.BlocksCount {
		return false
	}
	dindBuf := make(ondisk.MapBlock, f.BlockSize)
	if f.ReadBlock(dind, dindBuf) != nil {
		return false
	}
	ind := ondisk.MapBlock(scratch[:f.BlockSize])
	perBlock := uint32(dindBuf.Slots())
	gdtOff := f.DescBlocks
	// The expected numbers are blk_t (32 bits) in e2fsck.
	pblk := uint32(f.FirstDataBlock) + 1 + f.DescBlocks
	if f.BlockSize == 1024 && f.FirstDataBlock == 0 {
		pblk++ // 1 KiB blocks with bigalloc
	}
	for i := 0; i < int(sb.ReservedGdtBlocks())/4; i, gdtOff, pblk = i+1, gdtOff+1, pblk+1 {
		gdtOff %= perBlock
		if dindBuf.Ptr(int(gdtOff)) != pblk {
			return false
		}
		if f.ReadBlock(uint64(pblk), ind) != nil {
			return false
		}
		indOff := uint32(0)
		for g := uint32(1); g < f.Groups; g++ {
			if !f.GroupHasSuper(g) {
				continue
			}
			if indOff >= perBlock {
				return false
			}
			expect := pblk + g*f.BlocksPerGroup
			if ind.Ptr(int(indOff)) != expect {
				return false
			}
			indOff++
		}
	}
	return true
}
