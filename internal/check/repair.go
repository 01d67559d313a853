package check

import (
	"bytes"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"gofsck/internal/bitmap"
	"gofsck/internal/ondisk"
)

// Repair plumbing.
//
// A repair follows the same passes as a check; where a problem is answered
// yes, the pass takes e2fsck's "yes" path and writes what e2fsck writes.
// Writes never go to the device directly: workers record them as events
// (evWrite) that the replay applies in e2fsck's order, and the serial code
// writes at once; both go to the filesystem's device, which the command
// gives as a blockdev.Overlay so that nothing reaches the disk before the
// run is over and Flush writes every changed block in ascending order.
//
// A fix is only taken when its code is in the table of fixes.go, under
// the file that implements it: the command passes CanFix to the Reporter,
// which stops the run (writing nothing) rather than claim a fix gofsck
// does not make.

// repairState is shared by the Checker and its worker shards.
type repairState struct {
	mu  sync.Mutex
	err error // the first write error; the run is then aborted
	// uncounted is how many writes (each one device write, direct or
	// replayed) do not count as a change (writeBlockUncounted).
	uncounted atomic.Int64

	// blockEdits and inodeEdits are the bitmap bits fixes set (true) or
	// cleared (false) before pass 5, by cluster and inode number. Pass 5
	// applies them to the bitmaps it loads, as e2fsck's fixes update
	// fs->block_map and fs->inode_map in memory.
	blockEdits map[uint64]bool
	inodeEdits map[uint32]bool
	// final are the bitmaps as they will be on disk (pass 5's, after its
	// fixes); bitmapsDirty says they must be written.
	final        *diskBitmaps
	bitmapsDirty bool
	// blockBitmapDirty and inodeBitmapDirty are e2fsck's BB/IB dirty
	// flags: a fix changed that kind of bitmap (pass 5 then does not
	// verify its checksums, since it is rewritten anyway).
	blockBitmapDirty, inodeBitmapDirty bool
	// allSupers says a relocation needs every superblock and descriptor
	// copy written (relocate.go).
	allSupers bool
	// inodeCsumSeen is set when pass 1 met an inode whose checksum fails
	// (any inode, in any mode): only then can a directory's own inode
	// fail the library's reads in pass 2 (csumread.go).
	inodeCsumSeen atomic.Bool
	// bbRestart is set when inode 1 was cleared because the list names
	// its own inode-table block: pass 1 stops and the check restarts.
	bbRestart atomic.Bool
	// origSB is the superblock as opened and origGDT a digest of the
	// descriptors as opened, to tell whether fixes changed them
	// (Changed). The descriptors are not copied: on a big volume they
	// are tens or hundreds of MiB (1 PiB: 8M groups, 512 MiB).
	origSB  []byte
	origGDT gdtDigest
	// reloc is the work owed at pass 1's end: group metadata to relocate
	// and the resize inode to re-create (relocate.go).
	reloc relocState
}

// repairing reports whether this run may write.
func (c *Checker) repairing() bool { return !c.opt.ReadOnly }

// writeAt writes data at byte offset off of the device: recorded by a
// worker for the replay, written at once by serial code. data is copied.
func (c *Checker) writeAt(off int64, data []byte) {
	if !c.repairing() {
		return
	}
	if c.rec != nil && c.rec.direct == nil {
		c.rec.record(event{kind: evWrite, blk: uint64(off), data: bytes.Clone(data)})
		return
	}
	c.devWrite(off, data)
}

// writeFailed records a write error: the first one is the run's.
func (r *repairState) writeFailed(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
}

// devWrite writes to the device (the Overlay); an error aborts the run.
func (c *Checker) devWrite(off int64, data []byte) {
	if c.spec != nil {
		// A speculative pass that would write is not kept (speculate.go).
		c.spec.fail()
		return
	}
	if _, err := c.fs.Dev.WriteAt(data, off); err != nil {
		c.repair.writeFailed(err)
		c.abort = true
	}
}

// WriteError returns the first error writing a fix, nil if none.
func (c *Checker) WriteError() error {
	c.repair.mu.Lock()
	defer c.repair.mu.Unlock()
	return c.repair.err
}

// writeBlock writes one filesystem block.
func (c *Checker) writeBlock(blk uint64, data []byte) {
	c.writeAt(int64(blk)<<c.fs.BlockBits, data[:c.fs.BlockSize])
}

// writeBlockUncounted writes a block the way the library's block and
// extent iterators write tree blocks: e2fsck does not count such writes as
// a change of the filesystem ("FILE SYSTEM WAS MODIFIED", exit 1), only
// the inode, directory, bitmap and superblock updates that go with them.
func (c *Checker) writeBlockUncounted(blk uint64, data []byte) {
	if !c.repairing() {
		return
	}
	c.repair.uncounted.Add(1)
	c.writeBlock(blk, data)
}

// writeInode writes inode ino, recomputing its checksum first.
func (c *Checker) writeInode(ino uint32, n ondisk.Inode) {
	blk, off, ok := c.fs.InodeLoc(ino)
	if !ok {
		return
	}
	if c.fs.MetadataCsum {
		n.SetChecksum(c.fs.CsumSeed, ino)
	}
	c.writeAt(int64(blk)<<c.fs.BlockBits+int64(off), n[:c.fs.InodeSize])
}

// markBlockOnDisk records that a fix set (used) or cleared the on-disk
// bitmap bit of cluster cl; pass 5 sees the edited bitmap.
func (c *Checker) markBlockOnDisk(cl uint64, used bool) {
	markEdit(&c.repair.mu, &c.repair.blockEdits, cl, used)
}

// markInodeOnDisk is markBlockOnDisk for the inode bitmap.
func (c *Checker) markInodeOnDisk(ino uint32, used bool) {
	markEdit(&c.repair.mu, &c.repair.inodeEdits, ino, used)
}

// markEdit records bit k's new value in *edits (made on the first edit)
// under mu.
func markEdit[K comparable](mu *sync.Mutex, edits *map[K]bool, k K, used bool) {
	mu.Lock()
	if *edits == nil {
		*edits = map[K]bool{}
	}
	(*edits)[k] = used
	mu.Unlock()
}

// applyEdits sets and clears the edited bits in d (r.mu held).
func (r *repairState) applyEdits(d *diskBitmaps) {
	for cl, used := range r.blockEdits {
		if used {
			d.blocks.Set(cl)
		} else {
			d.blocks.Clear(cl)
		}
	}
	for ino, used := range r.inodeEdits {
		if used {
			d.inodes.Set(uint64(ino))
		} else {
			d.inodes.Clear(uint64(ino))
		}
	}
}

// applyBitmapEdits applies the fixes' bitmap edits to the loaded on-disk
// bitmaps (pass 5) and remembers them as the bitmaps to write.
func (c *Checker) applyBitmapEdits(d *diskBitmaps) {
	c.repair.mu.Lock()
	defer c.repair.mu.Unlock()
	c.repair.applyEdits(d)
	if len(c.repair.blockEdits) > 0 {
		c.repair.bitmapsDirty, c.repair.blockBitmapDirty = true, true
	}
	if len(c.repair.inodeEdits) > 0 {
		c.repair.bitmapsDirty, c.repair.inodeBitmapDirty = true, true
	}
	c.repair.final = d
}

// Finish ends a repair the way e2fsck ends a writable run: the superblock
// is marked valid (or not), its check time and mount count reset and its
// error records cleared; the descriptors' uninit flags, unused inode
// counts and checksums are recomputed; the bitmaps are written when a fix
// changed them; then the primary superblock and descriptors (all copies
// when the check used a backup superblock) are written. valid is whether
// the filesystem ends without errors. The check time is left alone when
// Options.TimeInsane says the clock cannot be trusted. It returns the
// first write error.
func (c *Checker) Finish(valid bool) error {
	if !c.repairing() {
		return nil
	}
	f := c.fs
	sb := f.SB
	if valid {
		sb.SetState(ondisk.StateValid)
	} else {
		sb.SetState(sb.State() &^ ondisk.StateValid)
	}
	now := uint32(c.opt.Now.Unix())
	if !c.opt.TimeInsane {
		sb.SetLastCheck(now)
	}
	sb.SetMntCount(0)
	sb.ClearErrorInfo()
	c.setGDTCsum()
	if c.repair.bitmapsDirty && c.repair.final != nil {
		c.writeBitmaps(c.repair.final)
	}
	sb.SetWtime(now)
	if kb := sb.KbytesWritten(); kb != 0 {
		// As the library does, count what this run wrote (the superblock
		// itself excluded) when the field is maintained.
		sb.SetKbytesWritten(kb + (f.Dev.Stats().WriteBytes+c.superAndGDTBytes())>>10)
	}
	c.writeSuperAndGDT(f.Backup || c.repair.allSupers)
	return c.WriteError()
}

// superAndGDTBytes is what writeSuperAndGDT writes before the primary
// superblock (the primary descriptor blocks; backups are not counted).
func (c *Checker) superAndGDTBytes() uint64 {
	return uint64(c.fs.DescBlocks) * uint64(c.fs.BlockSize)
}

// Changed reports whether the run has changed the filesystem so far
// (e2fsck's ext2fs_test_changed): a fix wrote a block, changed the
// superblock or a descriptor in memory, or made the bitmaps to be
// rewritten. Call it before Finish, whose own updates do not count.
func (c *Checker) Changed() bool {
	if !c.repairing() {
		return false
	}
	if c.repair.bitmapsDirty || c.fs.Dev.Stats().WriteOps > uint64(c.repair.uncounted.Load()) {
		return true
	}
	if c.fs.SBBlock != uint64(ondisk.SuperblockOffset)>>c.fs.BlockBits {
		// Checking from a backup superblock, e2fsck marks the
		// superblock dirty at once, which counts as a change.
		return true
	}
	return !bytes.Equal(c.fs.SB, c.repair.origSB) || !c.repair.origGDT.matches(c.fs.GDT())
}

// Halt ends a repair stopped by a preen halt, as e2fsck's preenhalt does:
// s_state gets the error bit and the superblock and descriptors are
// written (the passes' own writes are already pending).
func (c *Checker) Halt() error {
	if !c.repairing() {
		return nil
	}
	sb := c.fs.SB
	sb.SetState(sb.State() | ondisk.StateError)
	sb.SetWtime(uint32(c.opt.Now.Unix()))
	if c.repair.final == nil && (len(c.repair.blockEdits) > 0 || len(c.repair.inodeEdits) > 0) {
		// Bitmaps a fix before pass 5 changed (a bad-block list update)
		// are dirty in e2fsck's memory: closing the filesystem writes them.
		d := c.loadBitmaps()
		c.applyBitmapEdits(d)
		c.writeBitmaps(d)
	}
	// Dropping a bad journal clears EXT2_FLAG_MASTER_SB_ONLY in e2fsck,
	// so its preen halt writes every superblock copy, as a relocation does.
	dropped := c.journalDropped
	c.writeSuperAndGDT(dropped || c.repair.allSupers)
	return c.WriteError()
}

// setGDTCsum is ext2fs_set_gdt_csum: with checksummed descriptors, mark
// empty groups uninit, set bg_itable_unused from the last used inode, and
// recompute every descriptor checksum.
func (c *Checker) setGDTCsum() {
	var inodes *bitmap.Bitmap
	if c.repair.final != nil {
		inodes = c.repair.final.inodes
	}
	c.setGDTCsumFrom(inodes)
}

// setGDTCsumFrom is setGDTCsum over the inode bitmap given (nil: the
// unused counts are left alone where a group has inodes in use).
func (c *Checker) setGDTCsumFrom(inodes *bitmap.Bitmap) {
	f := c.fs
	if !f.GdtCsum {
		return
	}
	ipg := f.InodesPerGroup
	for g := uint32(0); g < f.Groups; g++ {
		gd := f.Group(g)
		if gd.FreeBlocks() == f.BlocksPerGroup && g != f.Groups-1 {
			gd.SetFlags(gd.Flags() | ondisk.BgBlockUninit)
		}
		if gd.FreeInodes() == ipg {
			gd.SetFlags(gd.Flags() | ondisk.BgInodeUninit)
			gd.SetItableUnused(ipg)
		} else if inodes != nil {
			last := ipg // find_last_inode_ingrp: ipg when none is in use
			base := uint64(g)*uint64(ipg) + 1
			for i := ipg; i > 0; i-- {
				if inodes.Test(base + uint64(i-1)) {
					last = i
					break
				}
			}
			gd.SetFlags(gd.Flags() &^ ondisk.BgInodeUninit)
			gd.SetItableUnused(ipg - last)
		}
		gd.UpdateChecksum(f.SB, g)
	}
}

// writeBitmaps writes every group's block and inode bitmaps from d (except
// those of uninit groups), with their padding bits set and their
// checksums stored in the descriptors.
func (c *Checker) writeBitmaps(d *diskBitmaps) { c.writeGroupBitmaps(d, true) }

// writeGroupBitmaps is writeBitmaps, writing the inode bitmaps only when
// inodes is set.
func (c *Checker) writeGroupBitmaps(d *diskBitmaps, inodes bool) {
	c.writeDirtyBitmaps(d, true, inodes)
}

// writeDirtyBitmaps is writeBitmaps for the bitmaps the library marked
// dirty: the block bitmaps when blocks is set, the inode bitmaps when
// inodes is.
func (c *Checker) writeDirtyBitmaps(d *diskBitmaps, blocks, inodes bool) {
	f := c.fs
	cpg := uint64(c.sb.ClustersPerGroup())
	ipg := uint64(f.InodesPerGroup)
	first := f.ClusterOf(f.FirstDataBlock)
	last := f.ClusterOf(f.BlocksCount - 1)
	buf := make([]byte, f.BlockSize)
	for g := uint32(0); g < f.Groups; g++ {
		gd := f.Group(g)
		if b := gd.BlockBitmap(); blocks && b != 0 && b < f.BlocksCount && !(f.GdtCsum && gd.Flags()&ondisk.BgBlockUninit != 0) {
			base := first + uint64(g)*cpg
			fillBitmap(buf, d.blocks, base, cpg, last+1-base)
			if f.MetadataCsum {
				gd.SetBlockBitmapCsum(ondisk.BitmapChecksum(f.CsumSeed, buf[:cpg/8]))
			}
			c.writeBlock(b, buf)
		}
		if b := gd.InodeBitmap(); inodes && b != 0 && b < f.BlocksCount && !(f.GdtCsum && gd.Flags()&ondisk.BgInodeUninit != 0) {
			base := 1 + uint64(g)*ipg
			fillBitmap(buf, d.inodes, base, ipg, ipg)
			if f.MetadataCsum {
				gd.SetInodeBitmapCsum(ondisk.BitmapChecksum(f.CsumSeed, buf[:ipg/8]))
			}
			c.writeBlock(b, buf)
		}
		gd.UpdateChecksum(f.SB, g)
	}
}

// fillBitmap renders bits [base, base+n) of m into buf; bits at or past
// valid (the end of the filesystem in the last group) and the bytes past n
// bits are set, as the kernel and e2fsprogs pad them.
func fillBitmap(buf []byte, m *bitmap.Bitmap, base, n, valid uint64) {
	clear(buf)
	for i := uint64(0); i < n; i++ {
		if i >= valid || m.Test(base+i) {
			buf[i/8] |= 1 << (i % 8)
		}
	}
	for i := (n + 7) / 8; i < uint64(len(buf)); i++ {
		buf[i] = 0xFF
	}
}

// writeSuperAndGDT writes the primary superblock and descriptor blocks
// (all meta_bg copies, as ext2fs_flush does even when it writes only the
// master superblock); with all, the backup superblocks and old-style
// descriptor copies too.
func (c *Checker) writeSuperAndGDT(all bool) {
	f := c.fs
	sb := f.SB
	gdt := f.GDT()
	bs := uint64(f.BlockSize)
	oldDesc := uint64(f.DescBlocks)
	metaBG := sb.HasIncompat(ondisk.IncompatMetaBG)
	if metaBG {
		oldDesc = min(oldDesc, uint64(sb.FirstMetaBG()))
	}
	scratch := make([]byte, descWriteChunk)
	for g := uint32(0); g < f.Groups; g++ {
		l := f.Layout(g)
		if g > 0 && all && l.Super != 0 {
			// ext2fs_flush writes the backups as not valid and without
			// needs_recovery.
			cp := ondisk.Superblock(bytes.Clone(sb))
			cp.SetState(cp.State() &^ ondisk.StateValid)
			cp.SetFeatureIncompat(cp.FeatureIncompat() &^ ondisk.IncompatRecover)
			cp.SetBlockGroupNr(uint16(g))
			cp.SetChecksum()
			c.writeAt(int64(l.Super*bs), cp[:ondisk.SuperblockSize])
		}
		if l.OldDesc != 0 && (g == 0 || all) && oldDesc > 0 {
			c.writeDescs(int64(l.OldDesc*bs), gdt[:oldDesc*bs], scratch)
		}
		if l.MetaBGDesc != 0 {
			i := uint64(g / f.DescPerBlock)
			if i < uint64(f.DescBlocks) {
				c.writeDescs(int64(l.MetaBGDesc*bs), gdt[i*bs:(i+1)*bs], scratch)
			}
		}
	}
	sb.SetBlockGroupNr(0)
	sb.SetChecksum()
	c.writeAt(ondisk.SuperblockOffset, sb[:ondisk.SuperblockSize])
}

// descWriteChunk is the stretch of descriptor blocks writeDescs compares
// with the device at once.
const descWriteChunk = 64 << 10

// writeDescs writes descriptor blocks at off, leaving out each stretch of
// descWriteChunk bytes that the device (the Overlay: pending writes
// included) already holds. ext2fs_flush rewrites every descriptor block
// whenever it writes the superblock, and on a big volume those are
// hundreds of MiB (256 TiB with meta_bg: 128 MiB; 1 PiB: 512 MiB) that
// the Overlay would hold in memory until the end of the run. A write of
// the bytes already there changes nothing on the device; the run's
// write of the superblock, which always follows, still counts as the
// change it is. Recorded and speculative writes go through writeAt as
// they are: their device is not the one they will be applied to.
func (c *Checker) writeDescs(off int64, data, scratch []byte) {
	if c.rec != nil && c.rec.direct == nil || c.spec != nil {
		c.writeAt(off, data)
		return
	}
	for len(data) > 0 {
		n := min(len(data), len(scratch))
		if _, err := c.fs.Dev.ReadAt(scratch[:n], off); err != nil || !bytes.Equal(scratch[:n], data[:n]) {
			c.writeAt(off, data[:n])
		}
		off += int64(n)
		data = data[n:]
	}
}

// BlockSize is the filesystem block size (the undo file's unit).
func (c *Checker) BlockSize() int { return c.fs.BlockSize }

// gdtDigest stands for the group descriptors at one moment, to tell
// later whether they changed, without a copy of them: a 64-bit hash
// under a seed chosen at random for the run (hash/maphash), so no image
// can be built to make two different tables agree; two different tables
// agree by chance with probability 2^-64 per comparison. The length is
// kept too, though the table's size never changes during a check.
type gdtDigest struct {
	seed maphash.Seed
	sum  uint64
	n    int
}

func newGDTDigest(gdt []byte) gdtDigest {
	d := gdtDigest{seed: maphash.MakeSeed(), n: len(gdt)}
	d.sum = maphash.Bytes(d.seed, gdt)
	return d
}

// matches reports whether gdt is the table the digest was made of.
func (d gdtDigest) matches(gdt []byte) bool {
	return len(gdt) == d.n && maphash.Bytes(d.seed, gdt) == d.sum
}
