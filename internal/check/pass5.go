package check

import (
	"context"
	"slices"
	"sort"
	"sync"

	"gofsck/internal/bitmap"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// diskBitmaps are the on-disk bitmaps as e2fsck loads them for pass 5:
// uninit groups are synthesised, checksums are not enforced, and bad tail
// bytes are remembered for the padding checks.
type diskBitmaps struct {
	blocks, inodes       *bitmap.Bitmap // indexed by cluster / inode number
	blockTail, inodeTail bool
	// groups whose bitmap checksum does not verify (metadata_csum)
	blockCsumBad, inodeCsumBad []uint32
}

// loadBitmaps reads the bitmaps of every group that has them on disk.
// A group whose descriptor (with a valid checksum) says BLOCK_UNINIT or
// INODE_UNINIT has no such bitmap: e2fsck's read_bitmaps does not read
// it, and neither is it read here; a BLOCK_UNINIT group's bitmap is
// computed from its metadata instead.
func (c *Checker) loadBitmaps() *diskBitmaps {
	f := c.fs
	cpg := uint64(c.sb.ClustersPerGroup())
	ipg := uint64(f.InodesPerGroup)
	firstCluster := f.ClusterOf(f.FirstDataBlock)
	d := &diskBitmaps{
		blocks: bitmap.New(firstCluster + uint64(f.Groups)*cpg),
		inodes: bitmap.New(1 + uint64(f.Groups)*ipg),
	}
	pf := &bitmapPrefetch{c: c}
	var readBlock, readInode []bool
	for g0 := uint32(0); g0 < f.Groups; g0 += bitmapWindow {
		g1 := min(g0+bitmapWindow, f.Groups)
		readBlock, readInode = readBlock[:0], readInode[:0]
		for g := g0; g < g1; g++ {
			block, inode := c.pass5Reads(g)
			readBlock = append(readBlock, block)
			readInode = append(readInode, inode)
		}
		pf.load(g0, g1, readBlock, readInode)
		for g := g0; g < g1; g++ {
			gd := f.Group(g)
			base := firstCluster + uint64(g)*cpg
			if readBlock[g-g0] {
				if b := gd.BlockBitmap(); b != 0 && b < f.BlocksCount && pf.get(b) != nil {
					tail, bad := loadBitmap(f, gd, d.blocks, base, cpg, pf.get(b), gd.Flags()&ondisk.BgBlockUninit != 0, gd.BlockBitmapCsum())
					d.blockTail = d.blockTail || tail
					if bad {
						d.blockCsumBad = append(d.blockCsumBad, g)
					}
				}
			}
			ibase := 1 + uint64(g)*ipg
			if readInode[g-g0] {
				if b := gd.InodeBitmap(); b != 0 && b < f.BlocksCount && pf.get(b) != nil {
					tail, bad := loadBitmap(f, gd, d.inodes, ibase, ipg, pf.get(b), gd.Flags()&ondisk.BgInodeUninit != 0, gd.InodeBitmapCsum())
					d.inodeTail = d.inodeTail || tail
					if bad {
						d.inodeCsumBad = append(d.inodeCsumBad, g)
					}
				}
			}
		}
		// The window's pages were filled run by run: give back the dense
		// ones that hold few runs before the next window adds its own.
		d.blocks.Compact(firstCluster+uint64(g0)*cpg, uint64(g1-g0)*cpg)
		d.inodes.Compact(1+uint64(g0)*ipg, uint64(g1-g0)*ipg)
	}
	// mark_uninit_bg_group_blocks does not look at the feature: a
	// BLOCK_UNINIT flag left on without it (PR_0_GDT_UNINIT answered no)
	// still has the group's own metadata marked over the bitmap read.
	for g := uint32(0); g < f.Groups; g++ {
		if f.Group(g).Flags()&ondisk.BgBlockUninit != 0 {
			c.markUninitGroupBlocks(d.blocks, g)
		}
	}
	return d
}

// markUninitGroupBlocks synthesises the block bitmap of a BLOCK_UNINIT
// group: its superblock and descriptor copies, plus the bitmaps and inode
// table of that group wherever they are.
func (c *Checker) markUninitGroupBlocks(m *bitmap.Bitmap, g uint32) {
	f := c.fs
	l := f.Layout(g)
	mark := func(b, n uint64) {
		if b >= f.BlocksCount || n == 0 {
			return
		}
		last := min(b+n, f.BlocksCount) - 1
		cl := f.ClusterOf(b)
		m.SetRange(cl, f.ClusterOf(last)-cl+1, nil)
	}
	if l.Super != 0 || g == 0 {
		mark(l.Super, 1)
	}
	if l.OldDesc != 0 {
		mark(l.OldDesc, l.OldDescLen)
	}
	if l.MetaBGDesc != 0 {
		mark(l.MetaBGDesc, 1)
	}
	gd := f.Group(g)
	if b := gd.BlockBitmap(); b != 0 {
		mark(b, 1)
	}
	if b := gd.InodeBitmap(); b != 0 {
		mark(b, 1)
	}
	if b := gd.InodeTable(); b != 0 {
		mark(b, uint64(f.InodeBlocksPerGroup))
	}
}

// loadBitmap sets bits [base, base+n) of m from a group's bitmap block buf
// and reports whether the padding after them is not all ones (tail) and
// whether, with metadata_csum on a group not marked uninit, the bitmap's
// checksum differs from the descriptor's (stored, 16 bits without the
// descriptor's high half).
func loadBitmap(f *fs.FS, gd ondisk.GroupDesc, m *bitmap.Bitmap, base, n uint64, buf []byte, uninit bool, stored uint32) (tail, csumBad bool) {
	m.SetBytes(base, buf, n)
	tail = !allFF(buf[n/8:])
	if f.MetadataCsum && !uninit {
		sum := ondisk.BitmapChecksum(f.CsumSeed, buf[:n/8])
		if !gd.BitmapCsumHasHi() {
			sum &= 0xFFFF
		}
		csumBad = sum != stored
	}
	return tail, csumBad
}

func allFF(b []byte) bool {
	for _, x := range b {
		if x != 0xFF {
			return false
		}
	}
	return true
}

// pass5 compares the bitmaps and counts computed by passes 1-4 with the
// ones on disk.
func (c *Checker) pass5(ctx context.Context) error {
	groups := uint64(c.fs.Groups)
	c.progress(5, 0, 2*groups)
	c.fs.PromoteLater()
	d := c.loadBitmaps()
	if c.repairing() {
		c.applyBitmapEdits(d)
	}
	c.checkBlockBitmaps(d)
	c.checkInodeBitmaps(d)
	c.checkInodeEnd(d)
	c.checkBlockEnd(d)
	// A bitmap a fix has changed is rewritten with fresh checksums: e2fsck
	// verifies only the clean ones.
	if !c.repair.inodeBitmapDirty {
		for _, g := range d.inodeCsumBad {
			c.fixBitmaps(problem.Problem{Code: problem.PR_5_INODE_BITMAP_CSUM_INVALID, Group: g})
		}
	}
	if !c.repair.blockBitmapDirty {
		for _, g := range d.blockCsumBad {
			c.fixBitmaps(problem.Problem{Code: problem.PR_5_BLOCK_BITMAP_CSUM_INVALID, Group: g})
		}
	}
	return nil
}

// setBlockPadding sets the bits of m past the last cluster up to the end
// of the last group, as ext2fs_set_bitmap_padding does.
func (c *Checker) setBlockPadding(m *bitmap.Bitmap) {
	f := c.fs
	first := f.ClusterOf(f.FirstDataBlock)
	end := min(first+uint64(f.Groups)*uint64(c.sb.ClustersPerGroup()), m.Len())
	for cl := f.ClusterOf(f.BlocksCount-1) + 1; cl < end; cl++ {
		m.Set(cl)
	}
}

// fixBitmaps reports a problem whose fix is to rewrite the bitmaps (with
// their padding and checksums) at the end of the run.
func (c *Checker) fixBitmaps(p problem.Problem) bool {
	if c.fix(p) && c.repairing() {
		c.repair.bitmapsDirty = true
		return true
	}
	return false
}

// bitmapDiffs collects runs of differences for the latched list.
type bitmapDiffs struct {
	c       *Checker
	have    bool
	code    problem.Code
	lo, hi  uint64
	step    uint64
	any     bool
	rangeOf func(problem.Code) problem.Code
}

func (b *bitmapDiffs) add(code problem.Code, i uint64) {
	b.any = true
	if b.have && code == b.code && b.hi+b.step == i {
		b.hi = i
		return
	}
	b.flush()
	b.have, b.code, b.lo, b.hi = true, code, i, i
}

func (b *bitmapDiffs) flush() {
	if !b.have {
		return
	}
	p := problem.Problem{Code: b.code, Blk: b.lo, Blk2: b.hi, Ino: uint32(b.lo), Ino2: uint32(b.hi)}
	if b.lo != b.hi {
		p.Code = b.rangeOf(b.code)
	}
	b.c.fix(p)
	b.have = false
}

func (c *Checker) checkBlockBitmaps(d *diskBitmaps) {
	f := c.fs
	ratio := uint64(1) << f.ClusterBits
	cpg := uint64(c.sb.ClustersPerGroup())
	diffs := bitmapDiffs{c: c, step: ratio, rangeOf: func(p problem.Code) problem.Code {
		if p == problem.PR_5_BLOCK_UNUSED {
			return problem.PR_5_BLOCK_RANGE_UNUSED
		}
		return problem.PR_5_BLOCK_RANGE_USED
	}}
	freeArray := make([]uint64, f.Groups)
	var free uint64
	first := f.ClusterOf(f.FirstDataBlock)
	last := f.ClusterOf(f.BlocksCount - 1)
	// After the differences are fixed the on-disk bitmap is the computed
	// one and the counts are made again (e2fsck's redo_counts).
	groups := uint64(f.Groups)
	for redo := false; ; redo = true {
		free = 0
		if redo {
			c.progressRewind(5, 0) // the groups are counted anew
		}
		for g := uint32(0); g < f.Groups; g++ {
			start := first + uint64(g)*cpg
			end := min(start+cpg-1, last)
			var gfree uint64
			if n := end - start + 1; start <= end && (redo || c.blockFound.Equal(d.blocks, start, n)) {
				// No difference in the group: only its count. (The
				// found map has no bit past the last cluster.)
				gfree = n - c.blockFound.Count(start, n)
				freeArray[g] = gfree
				free += gfree
				c.progress(5, uint64(g)+1, 2*groups)
				continue
			}
			for cl := start; cl <= end; cl++ {
				actual := c.blockFound.Test(cl)
				onDisk := actual
				if !redo {
					onDisk = d.blocks.Test(cl)
				}
				if actual != onDisk {
					blk := cl << f.ClusterBits
					if actual {
						if gd := f.Group(g); gd.Flags()&ondisk.BgBlockUninit != 0 {
							if c.fix(problem.Problem{Code: problem.PR_5_BLOCK_UNINIT, Blk: blk, Group: g}) && c.repairing() {
								gd.SetFlags(gd.Flags() &^ ondisk.BgBlockUninit)
							}
						}
						diffs.add(problem.PR_5_BLOCK_USED, blk)
					} else {
						diffs.add(problem.PR_5_BLOCK_UNUSED, blk)
					}
				}
				if !onDisk {
					gfree++
				}
			}
			freeArray[g] = gfree
			free += gfree
			c.progress(5, uint64(g)+1, 2*groups)
		}
		if redo {
			break
		}
		diffs.flush()
		if !diffs.any {
			break
		}
		if fix, _ := c.sink.EndLatch(problem.LatchBBitmap); !fix || !c.repairing() || answeredAll(c.sink) {
			break
		}
		d.blocks = c.blockFound.CloneLen(d.blocks.Len())
		c.setBlockPadding(d.blocks)
		c.repair.bitmapsDirty, c.repair.blockBitmapDirty = true, true
	}
	for g := uint32(0); g < f.Groups; g++ {
		gd := f.Group(g)
		if got := uint64(gd.FreeBlocks()); got != freeArray[g] {
			if c.fix(problem.Problem{Code: problem.PR_5_FREE_BLOCK_COUNT_GROUP, Group: g, Blk: got, Blk2: freeArray[g]}) && c.repairing() {
				gd.SetFreeBlocks(uint32(freeArray[g]))
			}
		}
	}
	free <<= f.ClusterBits
	if sbFree := c.sb.FreeBlocksCount(); sbFree != free {
		if c.fix(problem.Problem{Code: problem.PR_5_FREE_BLOCK_COUNT, Blk: sbFree, Blk2: free}) && c.repairing() {
			c.sb.SetFreeBlocksCount(free)
		}
	}
}

func (c *Checker) checkInodeBitmaps(d *diskBitmaps) {
	f := c.fs
	ipg := f.InodesPerGroup
	diffs := bitmapDiffs{c: c, step: 1, rangeOf: func(p problem.Code) problem.Code {
		if p == problem.PR_5_INODE_UNUSED {
			return problem.PR_5_INODE_RANGE_UNUSED
		}
		return problem.PR_5_INODE_RANGE_USED
	}}
	freeArray := make([]uint32, f.Groups)
	dirArray := make([]uint32, f.Groups)
	var free uint32
	groups := uint64(f.Groups)
	for redo := false; ; redo = true {
		free = 0
		if redo {
			c.progressRewind(5, groups) // the groups are counted anew
		}
		for g := uint32(0); g < f.Groups; g++ {
			gd := f.Group(g)
			start := g*ipg + 1
			var gfree, gdirs uint32
			skip := f.GdtCsum && gd.Flags()&ondisk.BgInodeUninit != 0
			if skip && !c.inodeUsed.AnySet(uint64(start), uint64(ipg)) {
				freeArray[g], dirArray[g] = ipg, 0
				free += ipg
				c.progress(5, groups+uint64(g)+1, 2*groups)
				continue
			}
			if n := uint64(ipg); !skip && (redo || c.inodeUsed.Equal(d.inodes, uint64(start), n)) {
				// No difference in the group: only its counts.
				used := c.inodeUsed.Count(uint64(start), n)
				freeArray[g] = ipg - uint32(used)
				dirArray[g] = uint32(c.inodeUsed.CountAnd(c.inodeDir, uint64(start), n))
				free += freeArray[g]
				c.progress(5, groups+uint64(g)+1, 2*groups)
				continue
			}
			for i := uint32(0); i < ipg; i++ {
				ino := uint64(start + i)
				actual := c.inodeUsed.Test(ino)
				onDisk := actual
				if !redo {
					onDisk = !skip && d.inodes.Test(ino)
				}
				if actual != onDisk {
					if actual {
						if skip {
							if c.fix(problem.Problem{Code: problem.PR_5_INODE_UNINIT, Ino: uint32(ino), Group: g}) && c.repairing() {
								gd.SetFlags(gd.Flags() &^ ondisk.BgInodeUninit)
								skip = false
							}
						}
						diffs.add(problem.PR_5_INODE_USED, ino)
					} else {
						diffs.add(problem.PR_5_INODE_UNUSED, ino)
					}
				}
				if !onDisk {
					gfree++
				} else if c.inodeDir.Test(ino) {
					gdirs++
				}
			}
			freeArray[g] = gfree
			dirArray[g] = gdirs
			free += gfree
			c.progress(5, groups+uint64(g)+1, 2*groups)
		}
		if redo {
			break
		}
		diffs.flush()
		if !diffs.any {
			break
		}
		if fix, _ := c.sink.EndLatch(problem.LatchIBitmap); !fix || !c.repairing() || answeredAll(c.sink) {
			break
		}
		d.inodes = c.inodeUsed.CloneLen(d.inodes.Len())
		c.repair.bitmapsDirty, c.repair.inodeBitmapDirty = true, true
	}
	for g := uint32(0); g < f.Groups; g++ {
		gd := f.Group(g)
		if gd.FreeInodes() != freeArray[g] {
			if c.fix(problem.Problem{Code: problem.PR_5_FREE_INODE_COUNT_GROUP, Group: g, Ino: gd.FreeInodes(), Ino2: freeArray[g]}) && c.repairing() {
				gd.SetFreeInodes(freeArray[g])
			}
		}
		if gd.UsedDirs() != dirArray[g] {
			if c.fix(problem.Problem{Code: problem.PR_5_FREE_DIR_COUNT_GROUP, Group: g, Ino: gd.UsedDirs(), Ino2: dirArray[g]}) && c.repairing() {
				gd.SetUsedDirs(dirArray[g])
			}
		}
	}
	if sbFree := c.sb.FreeInodesCount(); sbFree != free {
		if c.fix(problem.Problem{Code: problem.PR_5_FREE_INODE_COUNT, Ino: sbFree, Ino2: free}) && c.repairing() {
			c.sb.SetFreeInodesCount(free)
		}
	}
}

func (c *Checker) checkInodeEnd(d *diskBitmaps) {
	if d.inodeTail {
		if c.fixBitmaps(problem.Problem{Code: problem.PR_5_INODE_BMAP_PADDING}) {
			c.repair.inodeBitmapDirty = true
		}
	}
}

func (c *Checker) checkBlockEnd(d *diskBitmaps) {
	f := c.fs
	first := f.ClusterOf(f.FirstDataBlock)
	end := first + uint64(f.Groups)*uint64(c.sb.ClustersPerGroup()) - 1
	lastReal := f.ClusterOf(f.BlocksCount - 1)
	for cl := lastReal + 1; cl <= end; cl++ {
		if !d.blocks.Test(cl) {
			if c.fixBitmaps(problem.Problem{Code: problem.PR_5_BLOCK_BMAP_PADDING}) {
				c.repair.blockBitmapDirty = true
			}
			return
		}
	}
	if d.blockTail {
		if c.fixBitmaps(problem.Problem{Code: problem.PR_5_BLOCK_BMAP_PADDING}) {
			c.repair.blockBitmapDirty = true
		}
	}
}

// bitmapWindow is how many groups' bitmaps are read ahead at once: a
// window's blocks are sorted, coalesced into runs (flex_bg keeps them
// contiguous) and read by several goroutines, instead of one small read
// per bitmap in group order. 256 groups hold up to 2 MiB of bitmaps at 4
// KiB blocks, which the window keeps for the check's whole pass 5.
const bitmapWindow = 256

// bitmapReaders is how many bitmap reads a window keeps in flight at
// least: on a big volume the initialised bitmaps are one block per flex
// group, each a read of its own.
const bitmapReaders = 32

// bitmapPrefetch holds one window of bitmap blocks.
type bitmapPrefetch struct {
	c      *Checker
	blocks map[uint64][]byte
	buf    []byte
}

// load reads the bitmaps of groups [g0, g1): group g's block bitmap when
// readBlock[g-g0] is set, its inode bitmap when readInode[g-g0] is.
func (p *bitmapPrefetch) load(g0, g1 uint32, readBlock, readInode []bool) {
	f := p.c.fs
	var want []uint64
	for g := g0; g < g1; g++ {
		gd := f.Group(g)
		if b := gd.BlockBitmap(); readBlock[g-g0] && b != 0 && b < f.BlocksCount {
			want = append(want, b)
		}
		if b := gd.InodeBitmap(); readInode[g-g0] && b != 0 && b < f.BlocksCount {
			want = append(want, b)
		}
	}
	sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
	want = slices.Compact(want)
	need := len(want) * f.BlockSize
	if cap(p.buf) < need {
		p.buf = make([]byte, need)
	}
	p.buf = p.buf[:need]
	p.blocks = make(map[uint64][]byte, len(want))
	type run struct{ start, idx, n int }
	var runs []run
	for i := 0; i < len(want); {
		j := i + 1
		for j < len(want) && want[j] == want[j-1]+1 && j-i < 256 {
			j++
		}
		runs = append(runs, run{i, i, j - i})
		i = j
	}
	ok := make([]bool, len(runs))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(max(p.c.workers()*2, bitmapReaders), max(len(runs), 1)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range next {
				rr := runs[r]
				dst := p.buf[rr.idx*f.BlockSize : (rr.idx+rr.n)*f.BlockSize]
				ok[r] = f.ReadBlock(want[rr.start], dst) == nil
			}
		}()
	}
	for r := range runs {
		next <- r
	}
	close(next)
	wg.Wait()
	for r, rr := range runs {
		if !ok[r] {
			// Read the run block by block so one bad block does not hide
			// the others.
			for k := 0; k < rr.n; k++ {
				dst := p.buf[(rr.idx+k)*f.BlockSize : (rr.idx+k+1)*f.BlockSize]
				if f.ReadBlock(want[rr.start+k], dst) == nil {
					p.blocks[want[rr.start+k]] = dst
				}
			}
			continue
		}
		for k := 0; k < rr.n; k++ {
			p.blocks[want[rr.start+k]] = p.buf[(rr.idx+k)*f.BlockSize : (rr.idx+k+1)*f.BlockSize]
		}
	}
}

// get returns a prefetched bitmap block, nil when it could not be read.
func (p *bitmapPrefetch) get(b uint64) []byte { return p.blocks[b] }
