package check

import (
	"context"
	"math/bits"

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
	c.hintPass5Bitmaps()
	next := ipg // last inode of the group being checked
	progressTo := func(ino uint64) {
		for ino > next && ipg > 0 {
			c.progress(4, next/ipg, groups)
			next += ipg
		}
	}
	// Only in-use inodes are checked (the map's absent pages are passed
	// over whole), so the pass costs what is used, not s_inodes_count.
	// Within a word of 64 inodes, those whose link count and reference
	// count are both 1 (nearly every file) have nothing to check: only
	// the others are visited one by one. A fix can change the counts of
	// later inodes (reconnecting to lost+found adds references), so the
	// word is read again after each inode visited.
	last := uint64(f.InodesCount)
	seen := 0
	for ino := c.inodeUsed.NextSet(1); ino <= last; {
		k := ino >> 6
		from := ino & 63 // the word's bits below from are done
		used := c.inodeUsed.Word(k)
		if seen += bits.OnesCount64(used >> from); seen >= 1<<16 {
			seen = 0
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		for {
			cand := c.inodeUsed.Word(k) &^ (c.linkInfo.onesWord(k) & c.refCount.onesWord(k)) >> from << from
			if cand == 0 {
				break
			}
			j := uint64(bits.TrailingZeros64(cand))
			from = j + 1
			if k<<6+j > last {
				break
			}
			progressTo(k<<6 + j)
			stop, err := c.pass4Inode(w, uint32(k<<6+j), &dirNlink)
			if stop || err != nil {
				return err
			}
			if from == 64 {
				break
			}
		}
		// The used inodes after the last one visited (a fix may have
		// cleared some) move the progress on as a visit would.
		if used = c.inodeUsed.Word(k); used != 0 {
			progressTo(min(k<<6+uint64(63-bits.LeadingZeros64(used)), last))
		}
		ino = c.inodeUsed.NextSet((k + 1) << 6)
	}
	return nil
}

// pass4Inode checks in-use inode i's link count against the references
// pass 2 counted (e2fsck's pass 4 loop body). stop ends the pass.
func (c *Checker) pass4Inode(w *dirWorker, i uint32, dirNlink *bool) (stop bool, err error) {
	f, sb := c.fs, c.sb
	if (i == sb.PrjQuotaInum() && i != 0) || (i == sb.OrphanFileInum() && i != 0) || i == ondisk.BadBlocksIno || (i > ondisk.RootIno && i < f.FirstIno) {
		return false, nil
	}
	if !c.inodeUsed.Test(uint64(i)) || (c.inodeBB != nil && c.inodeBB.Test(uint64(i))) {
		return false, nil
	}
	linkCount := uint32(c.linkInfo.Get(i))
	counted := uint32(c.refCount.Get(i))
	if counted == 0 {
		// check_ea_inode reads every inode nothing links to, with
		// the library's checksum check, before anything else.
		n, ok := w.readInodeChecked(i, "ext2fs_read_inode_full", "pass4: check_ea_inode")
		if !ok {
			return true, nil
		}
		if n.Flags()&ondisk.FlagEAInode != 0 && c.eaInodeRefs[i] != 0 {
			counted = 1
			refs := n.EARefCount()
			if refs != c.eaInodeRefs[i] && n.Ctime() != n.Atime() {
				if c.fix(problem.Problem{Code: problem.PR_4_EA_INODE_REF_COUNT, Ino: i, Num: refs, Num2: c.eaInodeRefs[i], Inode: c.inodeInfo(n)}) && c.repairing() {
					n.SetEARefCount(c.eaInodeRefs[i])
					c.writeInode(i, n)
				}
			}
		}
	}
	if counted == 0 {
		if c.inodeBad.Test(uint64(i)) && w.processBadInode(0, i) {
			if c.abort {
				return true, nil
			}
			return false, nil
		}
		if c.disconnectInode(w, i) {
			return false, nil
		}
		if c.abort || c.sink.Aborted() {
			return true, nil
		}
		linkCount = uint32(c.linkInfo.Get(i))
		counted = uint32(c.refCount.Get(i))
	}
	isDir := c.inodeDir.Test(uint64(i))
	if isDir && counted > linkMax {
		if !*dirNlink && c.fix(problem.Problem{Code: problem.PR_4_DIR_NLINK_FEATURE, Ino: i}) {
			if c.repairing() {
				sb.SetFeatureRoCompat(sb.FeatureRoCompat() | ondisk.RoCompatDirNlink)
			}
			*dirNlink = true
		}
		counted = 1
	}
	if counted != linkCount {
		n, ok := w.readInodeChecked(i, "ext2fs_read_inode_full", "pass4")
		if !ok {
			return true, nil
		}
		if linkCount != uint32(n.LinksCount()) && !isDir && n.LinksCount() <= linkMax {
			c.fix(problem.Problem{Code: problem.PR_4_INCONSISTENT_COUNT, Ino: i, Num: uint64(linkCount), Inode: c.inodeInfo(n)})
		}
		p := problem.Problem{Code: problem.PR_4_BAD_REF_COUNT, Ino: i, Num: uint64(counted), Inode: c.inodeInfo(n)}
		fixNlink := false
		if isDir && counted > 1 && n.Flags()&ondisk.FlagIndex != 0 && linkCount == 1 {
			// The count overflowed once and no longer does: fixed
			// without being an error, and only when writing.
			if c.repairing() {
				p.Code = problem.PR_4_DIR_OVERFLOW_REF_COUNT
				fixNlink = c.fix(p)
			}
		} else {
			fixNlink = c.fix(p)
		}
		if fixNlink && c.repairing() {
			n.SetLinksCount(uint16(counted))
			c.writeInode(i, n)
		}
	}
	return false, nil
}

// disconnectInode handles an in-use inode no directory refers to. It
// returns true when the link-count check should be skipped.
func (c *Checker) disconnectInode(w *dirWorker, i uint32) bool {
	n := w.readInode(i)
	p := problem.Problem{Ino: i, Inode: c.inodeInfo(n)}
	if n.BlocksLo() == 0 && !ondisk.HasIbodyXattrHeader(n.InlineEA()) && (n.IsReg() || n.IsDir()) {
		q := p
		q.Code = problem.PR_4_ZERO_LEN_INODE
		if c.fix(q) {
			if c.repairing() {
				isDir := n.IsDir()
				c.zapInode(i, append(ondisk.Inode(nil), n...))
				c.inodeAllocStats(i, -1, isDir)
				c.chargeQuota(i, n, 0, ^uint64(0)) // quota_data_inodes(-1)
			}
			return false
		}
	}
	q := p
	q.Code = problem.PR_4_UNATTACHED_INODE
	if c.fix(q) {
		if c.repairing() && c.reconnectFile(i) {
			c.unmarkValid()
		}
		return false
	}
	return true
}
