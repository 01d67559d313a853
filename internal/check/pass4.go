package check

import (
	"context"
	"encoding/binary"

	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// linkMax is EXT2_LINK_MAX: directories above it need dir_nlink.
const linkMax = 65000

// pass4 compares each inode's link count with the references counted in
// pass 2, and offers to reconnect inodes nothing refers to.
func (c *Checker) pass4(ctx context.Context) error {
	f := c.fs
	sb := c.sb
	w := &dirWorker{c: c, buf: make([]byte, f.BlockSize), ibuf: make([]byte, f.InodeSize), scratch: make([]byte, f.BlockSize), s: c.newScratch()}
	dirNlink := sb.HasRoCompat(ondisk.RoCompatDirNlink)
	ipg, groups := uint64(f.InodesPerGroup), uint64(f.Groups)
	c.progress(4, 0, groups)
	next := ipg // last inode of the group being checked
	for i := uint32(1); i <= f.InodesCount && i != 0; i++ {
		if uint64(i) > next && ipg > 0 {
			c.progress(4, next/ipg, groups)
			next += ipg
		}
		if i&0xFFFF == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if (i == sb.PrjQuotaInum() && i != 0) || (i == sb.OrphanFileInum() && i != 0) || i == ondisk.BadBlocksIno || (i > ondisk.RootIno && i < f.FirstIno) {
			continue
		}
		if !c.inodeUsed.Test(uint64(i)) || (c.inodeBB != nil && c.inodeBB.Test(uint64(i))) {
			continue
		}
		linkCount := uint32(c.linkInfo.Get(i))
		counted := uint32(c.refCount.Get(i))
		if counted == 0 {
			if c.inodeBad.Test(uint64(i)) && w.processBadInode(0, i) {
				if c.abort {
					return nil
				}
				continue
			}
			n := w.readInode(i)
			if n.Flags()&ondisk.FlagEAInode != 0 && c.eaInodeRefs[i] != 0 {
				counted = 1
				refs := uint64(n.Ctime())<<32 | uint64(n.Version())
				if refs != c.eaInodeRefs[i] && n.Ctime() != n.Atime() {
					c.fix(problem.Problem{Code: problem.PR_4_EA_INODE_REF_COUNT, Ino: i, Num: refs, Num2: c.eaInodeRefs[i], Inode: c.inodeInfo(n)})
				}
			}
		}
		if counted == 0 {
			if c.disconnectInode(w, i) {
				continue
			}
		}
		isDir := c.inodeDir.Test(uint64(i))
		if isDir && counted > linkMax {
			if !dirNlink && c.fix(problem.Problem{Code: problem.PR_4_DIR_NLINK_FEATURE, Ino: i}) {
				dirNlink = true
			}
			counted = 1
		}
		if counted != linkCount {
			n := w.readInode(i)
			if linkCount != uint32(n.LinksCount()) && !isDir && n.LinksCount() <= linkMax {
				c.fix(problem.Problem{Code: problem.PR_4_INCONSISTENT_COUNT, Ino: i, Num: uint64(linkCount), Inode: c.inodeInfo(n)})
			}
			c.fix(problem.Problem{Code: problem.PR_4_BAD_REF_COUNT, Ino: i, Num: uint64(counted), Inode: c.inodeInfo(n)})
		}
	}
	return nil
}

// disconnectInode handles an in-use inode no directory refers to. It
// returns true when the link-count check should be skipped.
func (c *Checker) disconnectInode(w *dirWorker, i uint32) bool {
	f := c.fs
	n := w.readInode(i)
	p := problem.Problem{Ino: i, Inode: c.inodeInfo(n)}
	var eamagic uint32
	extra := 0
	if f.InodeSize > ondisk.GoodOldInodeSize {
		extra = int(n.ExtraIsize())
		if off := ondisk.GoodOldInodeSize + extra; off+4 <= f.InodeSize {
			eamagic = binary.LittleEndian.Uint32(n[off:])
		}
	}
	if n.BlocksLo() == 0 && eamagic != ondisk.XattrMagic && (n.IsReg() || n.IsDir()) {
		q := p
		q.Code = problem.PR_4_ZERO_LEN_INODE
		if c.fix(q) {
			return false
		}
	}
	q := p
	q.Code = problem.PR_4_UNATTACHED_INODE
	if c.fix(q) {
		return false
	}
	return true
}
