package check

import (
	"encoding/binary"
	"slices"
	"time"

	"gofsck/internal/bitmap"
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
	"gofsck/internal/quota"
)

// Rewriting a quota file (PR_6_UPDATE_QUOTAS answered yes) is e2fsprogs
// 1.47.0's quota_write_inode for one type, after pass 5:
//
//   - quota_inode_init_new: when the old file has a size, its blocks are
//     punched (ext2fs_punch over the whole file); the inode is then
//     rewritten from scratch by ext2fs_write_new_inode: a regular file,
//     mode 0600, one link, immutable, with extents when the filesystem has
//     them, times (and i_crtime, i_extra_isize 32) set to now, nothing else;
//   - the file is written through ext2fs_file_write (quota.Build gives the
//     contents and the order the blocks are first written): each new block
//     is allocated when first written, with the library's goal (the block
//     of the previous logical block for an extent file; i_block[n-1] or the
//     previous entry of the indirect block for a block-mapped one) and
//     mapped as ext2fs_extent_set_bmap or ext2fs_bmap2 does;
//   - i_size is the end of the last write and i_blocks counts every block
//     allocated (data, indirect and extent blocks).
//
// The old file's limits are carried over by compareQuota (scan with
// update_limits); the usage is the run's.

func init() {
	canRepair(problem.PR_6_UPDATE_QUOTAS)
}

// Inode flags of a new quota file.
const (
	flagImmutable = 0x10
	modeQuotaFile = ondisk.SIFREG | 0o600
	maxInitExtent = 32768 // EXT_INIT_MAX_LEN
)

// quotaPlan is a rewrite worked out: the inode written, the new file and
// the inode's old contents.
type quotaPlan struct {
	ino   uint32
	built *quota.Built
	old   ondisk.Inode
}

// quotaFileIno is quota_type2inum: the inode quota_write_inode writes,
// the reserved one for user and group quotas whatever the superblock
// says (it then points the superblock at it), the superblock's for
// project quotas.
func (c *Checker) quotaFileIno(t quota.Type) uint32 {
	switch t {
	case quota.User:
		return ondisk.UsrQuotaIno
	case quota.Group:
		return ondisk.GrpQuotaIno
	}
	return c.quotaInum(t)
}

// planQuotaFile lays out the new quota file of type t from the usage
// table.
func (c *Checker) planQuotaFile(t quota.Type, ino uint32, dict map[uint32]*quotaUsage) *quotaPlan {
	ids := make([]uint32, 0, len(dict))
	for id := range dict {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	dquots := make([]quota.Dquot, 0, len(ids))
	for _, id := range ids {
		u := dict[id]
		dquots = append(dquots, quota.Dquot{
			ID: id, CurSpace: u.space, CurInodes: u.inodes,
			BSoftLimit: u.bsoft, BHardLimit: u.bhard,
			ISoftLimit: u.isoft, IHardLimit: u.ihard,
		})
	}
	// update_grace_times reads the clock, not e2fsck's ctx->now.
	return &quotaPlan{ino: ino, built: quota.Build(t, dquots, time.Now().Unix()), old: c.readFullInode(ino)}
}

// quotaRewritable reports whether writeQuotaFile can write the file the
// way the library would: a dry run of the allocation that fails when the
// filesystem runs out of space (e2fsck then writes a damaged file with
// library errors) or the extent tree would need a second index level.
func (c *Checker) quotaRewritable(t quota.Type, dict map[uint32]*quotaUsage) (*quotaPlan, bool) {
	ino := c.quotaFileIno(t)
	if ino == 0 || ino > c.fs.InodesCount || c.repair.final == nil {
		return nil, false
	}
	p := c.planQuotaFile(t, ino, dict)
	return p, c.quotaFits(p, c.repair.final.blocks)
}

// writeQuotaFile writes the quota file of type t that quotaRewritable
// planned and points the superblock at it (quota_set_sb_inum).
func (c *Checker) writeQuotaFile(t quota.Type, p *quotaPlan) {
	c.writePlannedQuota(t, p, c.lateFreeBlock, c.lateAllocBlock)
}

// writePlannedQuota writes a planned quota file, freeing and allocating
// blocks with free and alloc.
func (c *Checker) writePlannedQuota(t quota.Type, p *quotaPlan, free func(uint64), alloc func(uint64) (uint64, bool)) {
	f := c.fs
	ino := p.ino
	// quota_inode_init_new, with quota_inode_truncate when the file has a
	// size.
	if p.old.Size() != 0 && c.hasValidBlocks(p.old) {
		c.punchAll(p.old, free)
	}
	m, ok := c.mapQuotaFile(ino, p.built, alloc)
	if !ok {
		return
	}
	bs := uint64(f.BlockSize)
	buf := make([]byte, f.BlockSize)
	for i, lblk := range m.lblks {
		clear(buf)
		if start := lblk * bs; start < uint64(len(p.built.Data)) {
			copy(buf, p.built.Data[start:])
		}
		c.writeBlock(m.pblks[i], buf)
	}
	m.finish()
	m.n.SetSize(uint64(len(p.built.Data)))
	m.n.SetBlocks(m.iblocks)
	c.writeInode(ino, m.n)
	binary.LittleEndian.PutUint32(c.sb[quotaInumOff[t]:], ino)
}

// mapQuotaFile builds the new inode and maps the file's blocks in the
// order they are first written, allocating with alloc.
func (c *Checker) mapQuotaFile(ino uint32, built *quota.Built, alloc func(uint64) (uint64, bool)) (*quotaMapper, bool) {
	n := c.newInodeBytes(modeQuotaFile)
	n.SetLinksCount(1)
	flags := uint32(flagImmutable)
	if c.sb.HasIncompat(ondisk.IncompatExtents) {
		flags |= ondisk.FlagExtents
	}
	n.SetFlags(flags)
	m := &quotaMapper{c: c, ino: ino, n: n, allocFn: alloc}
	if flags&ondisk.FlagExtents != 0 {
		m.initExtents()
	}
	bs := uint64(c.fs.BlockSize)
	seen := map[uint64]bool{}
	for _, qb := range built.Order {
		lblk := uint64(qb) * quota.BlockSize / bs
		if seen[lblk] {
			continue
		}
		seen[lblk] = true
		pblk, ok := m.mapBlock(lblk)
		if !ok {
			return m, false
		}
		m.lblks = append(m.lblks, lblk)
		m.pblks = append(m.pblks, pblk)
	}
	return m, true
}

// dryAlloc is the library's allocation without side effects, over a
// bitmap with the old file's clusters freed and the dry run's own
// allocations taken.
type dryAlloc struct {
	c      *Checker
	blocks *bitmap.Bitmap
	taken  map[uint64]bool
	freed  []uint64 // sorted
}

// isTaken reports a cluster the dry run has allocated already.
func (d *dryAlloc) isTaken(cl uint64) bool { return d.taken[cl] }

func (d *dryAlloc) alloc(goal uint64) (uint64, bool) {
	// The old file's clusters count as free: allocate one of them when it
	// comes before the bitmap's first free cluster.
	f := d.c.fs
	cl, ok := ext2fs.NewCluster(f, d.blocks, goal, d.isTaken)
	g := f.ClusterOf(goal)
	if goal == 0 || goal >= f.BlocksCount {
		g = f.ClusterOf(f.FirstDataBlock)
	}
	pick := func(lo, hi uint64) (uint64, bool) {
		i, _ := slices.BinarySearch(d.freed, lo)
		for ; i < len(d.freed) && d.freed[i] < hi; i++ {
			if !d.taken[d.freed[i]] {
				return d.freed[i], true
			}
		}
		return 0, false
	}
	switch {
	case ok && cl >= g:
		if x, found := pick(g, cl); found {
			cl = x
		}
	case ok: // wrapped around: nothing free from the goal on in the bitmap
		if x, found := pick(g, ^uint64(0)); found {
			cl = x
		} else if x, found := pick(0, cl); found {
			cl = x
		}
	default:
		x, found := pick(g, ^uint64(0))
		if !found {
			if x, found = pick(0, g); !found {
				return 0, false
			}
		}
		cl = x
	}
	d.taken[cl] = true
	return cl << f.ClusterBits, true
}

// punchAll frees every block of inode n (data and mapping blocks), as
// ext2fs_punch(fs, ino, inode, NULL, 0, ~0) does; the inode itself is
// rewritten by the caller.
func (c *Checker) punchAll(n ondisk.Inode, free func(uint64)) {
	f := c.fs
	s := c.newScratch()
	last := ^uint64(0)
	c.iterateBlocks(s, n, func(b uint64, _ int64) {
		if b == 0 {
			return
		}
		cl := f.ClusterOf(b)
		if cl == last {
			return
		}
		last = cl
		free(b)
	})
}

// qExtent is one extent of the new file.
type qExtent struct {
	lblk, pblk uint64
	len        uint64
}

// quotaMapper maps the new file's blocks as the library's bmap with
// BMAP_ALLOC does.
type quotaMapper struct {
	c       *Checker
	ino     uint32
	n       ondisk.Inode
	iblocks uint64 // i_blocks, in 512-byte units
	allocFn func(goal uint64) (uint64, bool)
	// The data blocks mapped, in allocation order.
	lblks, pblks []uint64

	// Extent files: the extents in logical order. Once the in-inode root
	// has been split they live in leaf blocks: leafBlk[i] holds extents
	// leafStart[i] up to the next leaf's start.
	extents   []qExtent
	leafBlk   []uint64
	leafStart []int
	leafMax   int
	extentFS  bool

	// Block-mapped files: the indirect blocks' contents by block number.
	ind map[uint64][]byte
}

// addBlocks is ext2fs_iblk_add_blocks for one allocation.
func (m *quotaMapper) addBlocks() {
	m.iblocks += uint64(m.c.fs.BlockSize/512) << m.c.fs.ClusterBits
}

// alloc is ext2fs_alloc_block3 with e2fsck's callback after pass 5.
func (m *quotaMapper) alloc(goal uint64) (uint64, bool) {
	blk, ok := m.allocFn(goal)
	if ok {
		m.addBlocks()
	}
	return blk, ok
}

// mapBlock allocates and maps logical block lblk.
func (m *quotaMapper) mapBlock(lblk uint64) (uint64, bool) {
	if m.extentFS {
		return m.mapExtent(lblk)
	}
	return m.mapIndirect(lblk)
}

func (m *quotaMapper) initExtents() {
	m.extentFS = true
	ib := m.n.IBlock()
	clear(ib)
	binary.LittleEndian.PutUint16(ib[0:], ondisk.ExtentMagic)
	binary.LittleEndian.PutUint16(ib[4:], uint16((ondisk.IBlockSize-ondisk.ExtentHeaderSize)/ondisk.ExtentEntrySize))
}

// lookup returns the physical block of lblk, 0 when unmapped.
func (m *quotaMapper) lookup(lblk uint64) uint64 {
	for _, e := range m.extents {
		if lblk >= e.lblk && lblk < e.lblk+e.len {
			return e.pblk + lblk - e.lblk
		}
	}
	return 0
}

// mapExtent is extent_bmap with BMAP_ALLOC followed by
// ext2fs_extent_set_bmap.
func (m *quotaMapper) mapExtent(lblk uint64) (uint64, bool) {
	f := m.c.fs
	var pblk uint64
	if f.ClusterBits > 0 {
		// implied_cluster_alloc: another block of the logical cluster
		// already has a physical cluster.
		mask := uint64(1)<<f.ClusterBits - 1
		base := lblk &^ mask
		for i := uint64(0); i <= mask; i++ {
			if base+i == lblk {
				continue
			}
			if p := m.lookup(base + i); p != 0 {
				pblk = p - i + (lblk - base)
				break
			}
		}
	}
	if pblk == 0 {
		var goal uint64
		if lblk > 0 {
			goal = m.lookup(lblk - 1)
		}
		blk, ok := m.alloc(goal)
		if !ok {
			return 0, false
		}
		mask := uint64(1)<<f.ClusterBits - 1
		pblk = blk&^mask + lblk&mask
	}
	if !m.setBmap(lblk, pblk) {
		return 0, false
	}
	return pblk, true
}

// setBmap is ext2fs_extent_set_bmap for a logical block that is not
// mapped: it extends the extent before it or the one after it when the
// physical block is adjacent, and inserts a new extent otherwise.
func (m *quotaMapper) setBmap(lblk, pblk uint64) bool {
	if len(m.extents) == 0 {
		m.extents = append(m.extents, qExtent{lblk, pblk, 1})
		return true
	}
	// The current extent after ext2fs_extent_goto: the last one starting
	// at or before lblk, or the first one.
	cur := 0
	for i, e := range m.extents {
		if e.lblk <= lblk {
			cur = i
		}
	}
	e := &m.extents[cur]
	switch {
	case lblk == e.lblk+e.len && pblk == e.pblk+e.len && e.len < maxInitExtent-1:
		e.len++
		return true
	case lblk+1 == e.lblk && pblk+1 == e.pblk && e.len < maxInitExtent-1:
		e.len++
		e.lblk--
		e.pblk--
		return true
	}
	if cur+1 < len(m.extents) {
		nx := &m.extents[cur+1]
		if lblk+1 == nx.lblk && pblk+1 == nx.pblk && nx.len < maxInitExtent-1 {
			nx.len++
			nx.lblk--
			nx.pblk--
			return true
		}
	}
	at := cur + 1
	if lblk < e.lblk {
		at = cur
	}
	f := m.c.fs
	ratio := uint64(1) << f.ClusterBits
	rootMax := (ondisk.IBlockSize - ondisk.ExtentHeaderSize) / ondisk.ExtentEntrySize
	if m.leafBlk == nil && len(m.extents) == rootMax {
		// extent_node_split of the root: every extent moves to a new
		// leaf block, placed just before the first extent's block.
		goal := (m.extents[0].pblk - ratio) &^ (ratio - 1)
		leaf, ok := m.alloc(goal)
		if !ok {
			return false
		}
		m.leafBlk, m.leafStart = []uint64{leaf}, []int{0}
		m.leafMax = (f.BlockSize - ondisk.ExtentHeaderSize) / ondisk.ExtentEntrySize
	}
	if m.leafBlk == nil {
		m.extents = slices.Insert(m.extents, at, qExtent{lblk, pblk, 1})
		return true
	}
	l := m.leafOf(cur)
	if m.leafLen(l) >= m.leafMax {
		// extent_node_split of a leaf: the last extent moves to a new
		// leaf when the insert is at the end of the file, the upper half
		// otherwise; the new leaf goes just before the split leaf's
		// first block. A full root (a second index level) is not done:
		// quotaRewritable refuses it.
		if len(m.leafBlk) >= rootMax {
			return false
		}
		tocopy := m.leafLen(l) / 2
		if cur == len(m.extents)-1 {
			tocopy = 1
		}
		goal := (m.extents[m.leafStart[l]].pblk - ratio) &^ (ratio - 1)
		leaf, ok := m.alloc(goal)
		if !ok {
			return false
		}
		start := m.leafStart[l] + m.leafLen(l) - tocopy
		m.leafBlk = slices.Insert(m.leafBlk, l+1, leaf)
		m.leafStart = slices.Insert(m.leafStart, l+1, start)
		l = m.leafOf(cur)
	}
	m.extents = slices.Insert(m.extents, at, qExtent{lblk, pblk, 1})
	for k := l + 1; k < len(m.leafStart); k++ {
		m.leafStart[k]++
	}
	return true
}

// leafOf returns the leaf holding extent i.
func (m *quotaMapper) leafOf(i int) int {
	l := 0
	for k, st := range m.leafStart {
		if st <= i {
			l = k
		}
	}
	return l
}

// leafLen returns the number of extents in leaf l.
func (m *quotaMapper) leafLen(l int) int {
	if l+1 < len(m.leafStart) {
		return m.leafStart[l+1] - m.leafStart[l]
	}
	return len(m.extents) - m.leafStart[l]
}

// putExtents writes a node's header and leaf entries into b.
func putExtents(b []byte, max, depth int, extents []qExtent) {
	le := binary.LittleEndian
	le.PutUint16(b[0:], ondisk.ExtentMagic)
	le.PutUint16(b[2:], uint16(len(extents)))
	le.PutUint16(b[4:], uint16(max))
	le.PutUint16(b[6:], uint16(depth))
	for i, e := range extents {
		o := ondisk.ExtentHeaderSize + i*ondisk.ExtentEntrySize
		le.PutUint32(b[o:], uint32(e.lblk))
		le.PutUint16(b[o+4:], uint16(e.len))
		le.PutUint16(b[o+6:], uint16(e.pblk>>32))
		le.PutUint32(b[o+8:], uint32(e.pblk))
	}
}

// finish stores the block map in the inode and writes the mapping blocks.
func (m *quotaMapper) finish() {
	f := m.c.fs
	if m.extentFS {
		ib := m.n.IBlock()
		rootMax := (ondisk.IBlockSize - ondisk.ExtentHeaderSize) / ondisk.ExtentEntrySize
		if m.leafBlk == nil {
			putExtents(ib, rootMax, 0, m.extents)
			return
		}
		clear(ib)
		putExtents(ib, rootMax, 1, nil)
		le := binary.LittleEndian
		le.PutUint16(ib[2:], uint16(len(m.leafBlk)))
		buf := make([]byte, f.BlockSize)
		for l, blk := range m.leafBlk {
			ext := m.extents[m.leafStart[l] : m.leafStart[l]+m.leafLen(l)]
			o := ondisk.ExtentHeaderSize + l*ondisk.ExtentEntrySize
			if len(ext) > 0 {
				le.PutUint32(ib[o:], uint32(ext[0].lblk))
			}
			le.PutUint32(ib[o+4:], uint32(blk))
			le.PutUint16(ib[o+8:], uint16(blk>>32))
			clear(buf)
			putExtents(buf, m.leafMax, 0, ext)
			if f.MetadataCsum {
				if sum, _, ok := ondisk.ExtentBlockChecksum(buf, f.CsumSeed, m.ino, m.n.Generation()); ok {
					le.PutUint32(buf[ondisk.ExtentHeaderSize+m.leafMax*ondisk.ExtentEntrySize:], sum)
				}
			}
			m.c.writeBlock(blk, buf)
		}
		return
	}
	for blk, buf := range m.ind {
		m.c.writeBlock(blk, buf)
	}
}

// findInodeGoal is ext2fs_find_inode_goal for a block-mapped inode
// without blocks: the first block of the inode's (flex) group.
func (m *quotaMapper) findInodeGoal() uint64 {
	f := m.c.fs
	if b := m.n.Block(0); b != 0 {
		return uint64(b)
	}
	g := (m.ino - 1) / f.InodesPerGroup
	if lf := m.c.sb.LogGroupsPerFlex(); lf > 0 && lf < 32 {
		g &^= 1<<lf - 1
	}
	return f.FirstDataBlock + uint64(g)*uint64(f.BlocksPerGroup)
}

// mapIndirect is ext2fs_bmap2 with BMAP_ALLOC for a block-mapped file.
func (m *quotaMapper) mapIndirect(lblk uint64) (uint64, bool) {
	f := m.c.fs
	n := m.n
	if lblk < 12 {
		var goal uint64
		if lblk > 0 {
			goal = uint64(n.Block(int(lblk - 1)))
		} else {
			goal = m.findInodeGoal()
		}
		blk, ok := m.alloc(goal)
		if !ok {
			return 0, false
		}
		binary.LittleEndian.PutUint32(n.IBlock()[4*lblk:], uint32(blk))
		return blk, true
	}
	per := uint64(f.BlockSize / 4)
	rel := lblk - 12
	span := per
	for level := 1; level <= 3; level++ {
		if rel >= span {
			rel -= span
			span *= per
			continue
		}
		slot := 11 + level
		top := uint64(n.Block(slot))
		if top == 0 {
			blk, ok := m.alloc(uint64(n.Block(slot - 1)))
			if !ok {
				return 0, false
			}
			binary.LittleEndian.PutUint32(n.IBlock()[4*slot:], uint32(blk))
			top = blk
		}
		// Walk down: each level's entry is allocated with the previous
		// entry (or the block holding it) as the goal.
		parent := top
		for l := level; l >= 1; l-- {
			span /= per
			idx := rel / span
			rel %= span
			pb := m.indBlock(parent)
			child := uint64(binary.LittleEndian.Uint32(pb[4*idx:]))
			if child == 0 {
				goal := parent
				if idx > 0 {
					goal = uint64(binary.LittleEndian.Uint32(pb[4*(idx-1):]))
				}
				blk, ok := m.alloc(goal)
				if !ok {
					return 0, false
				}
				binary.LittleEndian.PutUint32(pb[4*idx:], uint32(blk))
				child = blk
			}
			if l == 1 {
				return child, true
			}
			parent = child
		}
	}
	return 0, false
}

// indBlock returns the contents of new indirect block blk.
func (m *quotaMapper) indBlock(blk uint64) []byte {
	if m.ind == nil {
		m.ind = map[uint64][]byte{}
	}
	b := m.ind[blk]
	if b == nil {
		b = make([]byte, m.c.fs.BlockSize)
		m.ind[blk] = b
	}
	return b
}
