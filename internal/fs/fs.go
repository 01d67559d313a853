// Package fs gives read access to an ext2/3/4 filesystem on a blockdev.Device:
// superblock selection and validation, geometry, group descriptors, group
// metadata layout (sparse_super, sparse_super2, meta_bg, flex_bg), inode
// location and reads, and walkers over extent trees, block maps and inline
// data. It holds no mutable state after Open, so any number of goroutines
// may use one FS at once.
package fs

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sync"

	"gofsck/internal/bitmap"
	"gofsck/internal/blockdev"
	"gofsck/internal/ondisk"
)

// FS is an opened filesystem. All fields are read-only after Open.
type FS struct {
	Dev blockdev.Device
	SB  ondisk.Superblock // private copy of the superblock in use
	// SBBlock is the block holding the superblock in use (in units of
	// BlockSize; the primary superblock is at byte 1024).
	SBBlock uint64
	// Backup is true when the superblock came from a backup group.
	Backup bool

	BlockSize           int
	BlockBits           uint // log2(BlockSize)
	ClusterBits         uint // log2(blocks per cluster)
	BlocksCount         uint64
	FirstDataBlock      uint64
	BlocksPerGroup      uint32
	InodesPerGroup      uint32
	InodesCount         uint32
	InodeSize           int
	DescSize            int
	Groups              uint32
	DescBlocks          uint32 // blocks of group descriptors
	DescPerBlock        uint32
	InodeBlocksPerGroup uint32
	FirstIno            uint32
	CsumSeed            uint32
	MetadataCsum        bool
	GdtCsum             bool // metadata_csum or uninit_bg: descriptors carry checksums

	gdt     []byte // all descriptors, DescSize each; off the heap, valid while f is
	relaxed bool
}

// Options select the superblock as e2fsck's -b and -B do.
type Options struct {
	// Superblock, when non-zero, is the block number of the superblock to
	// use (in units of BlockSize, or probed sizes when BlockSize is 0).
	Superblock uint64
	// BlockSize restricts probing to one block size.
	BlockSize int
	// Relaxed tolerates the superblock inconsistencies e2fsck's retry
	// "despite errors" tolerates (inode count vs groups, descriptor size,
	// s_first_meta_bg) so that the superblock checks can report them.
	Relaxed bool
}

// Errors that Open returns. They wrap ondisk.ErrCorrupt when the data is
// bad, so callers can tell corruption from I/O failure.
var (
	ErrBadMagic     = fmt.Errorf("fs: bad magic number in super-block: %w", ondisk.ErrCorrupt)
	ErrSbCsum       = fmt.Errorf("fs: superblock checksum does not match superblock: %w", ondisk.ErrCorrupt)
	ErrCorruptSuper = fmt.Errorf("fs: the ext2 superblock is corrupt: %w", ondisk.ErrCorrupt)
	ErrBadDescSize  = fmt.Errorf("fs: block group descriptor size incorrect: %w", ondisk.ErrCorrupt)
	ErrShortRead    = errors.New("fs: attempt to read block from filesystem resulted in short read")
	ErrJournalDev   = errors.New("fs: filesystem is an external journal device")
	ErrRevTooHigh   = errors.New("fs: filesystem revision too high")
	ErrUnknownCsum  = errors.New("fs: unknown checksum algorithm")
)

// UnsupportedError lists feature bits gofsck cannot check.
type UnsupportedError struct {
	Compat, Incompat, RoCompat uint32
}

func (e *UnsupportedError) Error() string {
	return "has unsupported feature(s): " + ondisk.FeatureString(e.Compat, e.Incompat, e.RoCompat)
}

// SuperError is a superblock field outside its allowed range; e2fsck reports
// these as "corrupt superblock" with the field name.
type SuperError struct {
	Field string
	Val   uint64
}

func (e *SuperError) Error() string {
	return fmt.Sprintf("fs: corrupt superblock field %s (%d)", e.Field, e.Val)
}
func (e *SuperError) Unwrap() error { return ErrCorruptSuper }

// Open reads and validates the superblock and the group descriptors.
func Open(dev blockdev.Device, opt Options) (*FS, error) {
	if opt.Superblock != 0 {
		sizes := []int{opt.BlockSize}
		if opt.BlockSize == 0 {
			sizes = []int{1024, 2048, 4096, 8192, 16384, 32768, 65536}
		}
		var err error
		for _, bs := range sizes {
			var f *FS
			f, err = openAt(dev, int64(opt.Superblock)*int64(bs), opt.Superblock, opt.Relaxed)
			if err == nil && f.BlockSize == bs {
				f.Backup = true
				f.clearBackupUninit()
				return f, nil
			}
			if err == nil {
				err = ErrBadMagic
			}
		}
		return nil, err
	}
	return openAt(dev, ondisk.SuperblockOffset, 0, opt.Relaxed)
}

// clearBackupUninit drops the uninit flags and itable_unused of every
// descriptor, as the library does when opening from a backup superblock:
// backup descriptors are stale, so the whole inode table is scanned.
func (f *FS) clearBackupUninit() {
	if !f.GdtCsum {
		return
	}
	for g := uint32(0); g < f.Groups; g++ {
		gd := f.Group(g)
		gd.SetFlags(gd.Flags() &^ (ondisk.BgBlockUninit | ondisk.BgInodeUninit))
		gd.SetItableUnused(0)
		if sum, ok := gd.ComputeChecksum(f.SB, g); ok {
			gd.SetChecksum(sum)
		}
	}
}

// openAt reads the superblock at byte offset off.
func openAt(dev blockdev.Device, off int64, sbBlock uint64, relaxed bool) (*FS, error) {
	buf := make([]byte, ondisk.SuperblockSize)
	if _, err := dev.ReadAt(buf, off); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, ErrShortRead
		}
		return nil, err
	}
	sb, _ := ondisk.NewSuperblock(buf)
	// The library's order (ext2fs_open2): the checksum type and the
	// checksum first, then the magic, which overrides them; only then
	// the revision and the features. A checksum that fails is reported
	// before a revision that is too high.
	var csumErr error
	if sb.HasRoCompat(ondisk.RoCompatMetadataCsum) && sb.ChecksumType() != 1 {
		csumErr = ErrUnknownCsum
	}
	if !sb.ChecksumValid() {
		csumErr = ErrSbCsum
	}
	if sb.Magic() != ondisk.Magic {
		return nil, ErrBadMagic
	}
	if csumErr != nil {
		return nil, csumErr
	}
	if sb.RevLevel() > 1 {
		return nil, ErrRevTooHigh
	}
	if sb.HasIncompat(ondisk.IncompatJournalDev) {
		return nil, ErrJournalDev
	}
	f := &FS{Dev: dev, SB: sb, relaxed: relaxed}
	if err := f.geometry(); err != nil {
		return nil, err
	}
	if off == ondisk.SuperblockOffset {
		f.SBBlock = uint64(ondisk.SuperblockOffset) >> f.BlockBits
	} else {
		// The descriptors are read from the backup copies too (meta_bg).
		f.SBBlock, f.Backup = sbBlock, true
	}
	if err := f.loadGDT(); err != nil {
		return nil, err
	}
	return f, nil
}

// CheckFeatures returns an UnsupportedError when the superblock has feature
// bits gofsck does not know how to check. readOnly tolerates unknown
// ro_compat bits only in the sense e2fsck does; gofsck refuses them too,
// because it cannot vouch for structures it does not understand.
func (f *FS) CheckFeatures() error {
	c := f.SB.FeatureCompat() &^ ondisk.SupportedCompat
	i := f.SB.FeatureIncompat() &^ ondisk.SupportedIncompat
	r := f.SB.FeatureRoCompat() &^ ondisk.SupportedRoCompat
	// e2fsck 1.47 refuses unknown compat bits too.
	if c != 0 || i != 0 || r != 0 {
		return &UnsupportedError{Compat: c, Incompat: i, RoCompat: r}
	}
	return nil
}

// geometry validates the superblock fields the layout depends on (spec 2.2)
// and derives the geometry. Every value used later as a size or a count is
// bounded here.
func (f *FS) geometry() error {
	sb := f.SB
	bad := func(field string, v uint64) error { return &SuperError{Field: field, Val: v} }
	if sb.LogBlockSize() > 6 {
		return bad("log_block_size", uint64(sb.LogBlockSize()))
	}
	f.BlockSize = sb.BlockSize()
	f.BlockBits = uint(10 + sb.LogBlockSize())
	if sb.HasRoCompat(ondisk.RoCompatBigalloc) {
		if sb.LogClusterSize() < sb.LogBlockSize() || sb.LogClusterSize() > 19 {
			return bad("log_cluster_size", uint64(sb.LogClusterSize()))
		}
		f.ClusterBits = uint(sb.LogClusterSize() - sb.LogBlockSize())
	} else if sb.LogClusterSize() != sb.LogBlockSize() {
		return bad("log_cluster_size", uint64(sb.LogClusterSize()))
	}
	f.InodeSize = int(sb.InodeSize())
	if f.InodeSize < ondisk.GoodOldInodeSize || f.InodeSize > f.BlockSize || bits.OnesCount(uint(f.InodeSize)) != 1 {
		return bad("inode_size", uint64(f.InodeSize))
	}
	f.BlocksCount = sb.BlocksCount()
	f.FirstDataBlock = uint64(sb.FirstDataBlock())
	f.BlocksPerGroup = sb.BlocksPerGroup()
	f.InodesPerGroup = sb.InodesPerGroup()
	f.InodesCount = sb.InodesCount()
	if f.BlocksCount == 0 {
		return bad("blocks_count", 0)
	}
	if f.FirstDataBlock >= f.BlocksCount {
		return bad("first_data_block", f.FirstDataBlock)
	}
	maxBPG := uint64(8*f.BlockSize) << f.ClusterBits
	if f.BlocksPerGroup < 8 || uint64(f.BlocksPerGroup) > maxBPG ||
		uint64(f.BlocksPerGroup) > (65536-8)<<f.ClusterBits {
		return bad("blocks_per_group", uint64(f.BlocksPerGroup))
	}
	if uint64(sb.ClustersPerGroup())<<f.ClusterBits != uint64(f.BlocksPerGroup) {
		return bad("clusters_per_group", uint64(sb.ClustersPerGroup()))
	}
	ipb := uint32(f.BlockSize / f.InodeSize)
	if f.InodesPerGroup < ipb || f.InodesPerGroup > uint32(8*f.BlockSize) || f.InodesPerGroup > 65536-ipb {
		return bad("inodes_per_group", uint64(f.InodesPerGroup))
	}
	f.InodeBlocksPerGroup = (f.InodesPerGroup*uint32(f.InodeSize) + uint32(f.BlockSize) - 1) / uint32(f.BlockSize)
	groups := (f.BlocksCount - f.FirstDataBlock + uint64(f.BlocksPerGroup) - 1) / uint64(f.BlocksPerGroup)
	if groups > 1<<32-1 || groups*uint64(f.InodesPerGroup) > 1<<32-1 {
		return bad("inodes_count", groups*uint64(f.InodesPerGroup))
	}
	f.Groups = uint32(groups)
	if uint64(f.InodesCount) != groups*uint64(f.InodesPerGroup) {
		if !f.relaxed {
			return bad("inodes_count", uint64(f.InodesCount))
		}
		// Relaxed: use the count the geometry implies, as the check
		// will offer to set it.
		f.InodesCount = uint32(groups * uint64(f.InodesPerGroup))
	}
	if sb.Is64bit() {
		ds := int(sb.RawDescSize())
		valid := ds >= ondisk.GroupDescSize64 && ds <= ondisk.MaxGroupDescSize && bits.OnesCount(uint(ds)) == 1
		// Relaxed, the library takes s_desc_size as it is; gofsck still
		// refuses sizes that leave no whole 32-byte descriptor or none per
		// block (e2fsck divides by zero on those).
		if !valid && !(f.relaxed && ds >= ondisk.GroupDescSize32 && ds <= f.BlockSize) {
			return ErrBadDescSize
		}
		f.DescSize = ds
	} else {
		f.DescSize = ondisk.GroupDescSize32
	}
	f.DescPerBlock = uint32(f.BlockSize / f.DescSize)
	// In 64 bits: 2^32-1 groups plus DescPerBlock-1 wraps in uint32.
	f.DescBlocks = uint32((uint64(f.Groups) + uint64(f.DescPerBlock) - 1) / uint64(f.DescPerBlock))
	if sb.HasIncompat(ondisk.IncompatMetaBG) && sb.FirstMetaBG() > f.DescBlocks && !f.relaxed {
		return bad("first_meta_bg", uint64(sb.FirstMetaBG()))
	}
	// s_first_ino is range-checked by the superblock checks (which stop
	// the run); the library opens the filesystem regardless.
	f.FirstIno = sb.FirstIno()
	f.MetadataCsum = sb.HasRoCompat(ondisk.RoCompatMetadataCsum)
	f.GdtCsum = f.MetadataCsum || sb.HasRoCompat(ondisk.RoCompatGdtCsum)
	if f.MetadataCsum {
		f.CsumSeed = sb.CsumSeed()
	}
	return nil
}

// GDT returns the descriptor table as it is kept in memory (DescBlocks
// blocks): the bytes a repair writes back after changing descriptors
// through Group.
func (f *FS) GDT() []byte { return f.gdt }

// descBlockLoc returns the location of descriptor block i when the
// superblock in use lives in block sbBlock.
func (f *FS) descBlockLoc(i uint32) uint64 {
	sb := f.SB
	if !sb.HasIncompat(ondisk.IncompatMetaBG) || i < sb.FirstMetaBG() {
		// The library counts the primary descriptors from
		// s_first_data_block, which is the superblock's block on every
		// sane filesystem; a larger one moves them (off the device).
		base := f.SBBlock
		if !f.Backup && f.FirstDataBlock > base {
			base = f.FirstDataBlock
		}
		return base + uint64(i) + 1
	}
	g := f.DescPerBlock * i
	blk := f.GroupFirstBlock(g)
	hasSuper := uint64(0)
	if f.GroupHasSuper(g) {
		hasSuper = 1
	}
	if f.Backup && blk+hasSuper+uint64(f.BlocksPerGroup) < f.BlocksCount {
		blk += uint64(f.BlocksPerGroup)
		hasSuper = 0
		if f.GroupHasSuper(g + 1) {
			hasSuper = 1
		}
	}
	return blk + hasSuper
}

func (f *FS) loadGDT() error {
	// Every descriptor block is a distinct block of the device: a table
	// larger than the device cannot be read, so do not allocate it.
	if uint64(f.DescBlocks)*uint64(f.BlockSize) > uint64(max(f.Dev.Size(), 0)) {
		return fmt.Errorf("reading group descriptors: %w", ErrShortRead)
	}
	// Off the heap: the table is live for the whole run, and the collector
	// would let the heap grow by half its size again (blockdev.OffHeap).
	f.gdt = blockdev.OffHeap(f, int(f.DescBlocks)*f.BlockSize)
	// The table is read as runs of consecutive blocks (the whole table
	// without meta_bg; one block per 64 groups with it, spread over the
	// volume: 32768 of them on 256 TiB), many runs in flight at once.
	// What is reported is what a read in table order would meet first.
	type run struct{ i, n uint32 }
	var runs []run
	end := f.DescBlocks // first descriptor block outside the filesystem
	var badLoc uint64
	for i := uint32(0); i < f.DescBlocks; i++ {
		blk := f.descBlockLoc(i)
		if blk >= f.BlocksCount {
			end, badLoc = i, blk
			break
		}
		if k := len(runs) - 1; k >= 0 && runs[k].n < 256 && f.descBlockLoc(runs[k].i)+uint64(runs[k].n) == blk {
			runs[k].n++
			continue
		}
		runs = append(runs, run{i, 1})
	}
	failed := make([]bool, len(runs))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(descReaders, len(runs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				r := runs[k]
				buf := f.gdt[int(r.i)*f.BlockSize : int(r.i+r.n)*f.BlockSize]
				failed[k] = f.ReadBlock(f.descBlockLoc(r.i), buf) != nil
			}
		}()
	}
	for k := range runs {
		next <- k
	}
	close(next)
	wg.Wait()
	for k, r := range runs {
		if !failed[k] {
			continue
		}
		// Again block by block, for the error of the first that fails.
		for i := r.i; i < r.i+r.n; i++ {
			if err := f.ReadBlock(f.descBlockLoc(i), f.gdt[int(i)*f.BlockSize:int(i+1)*f.BlockSize]); err != nil {
				return fmt.Errorf("reading group descriptors: %w", err)
			}
		}
	}
	if end < f.DescBlocks {
		return &SuperError{Field: "group descriptor location", Val: badLoc}
	}
	return nil
}

// descReaders is how many descriptor reads loadGDT keeps in flight.
const descReaders = 32

// Group returns the descriptor of group g (g < Groups).
func (f *FS) Group(g uint32) ondisk.GroupDesc {
	off := int(g) * f.DescSize
	return ondisk.GroupDesc(f.gdt[off : off+f.DescSize])
}

// ReadBlock reads block blk into buf (len(buf) == BlockSize, or a multiple
// for consecutive blocks). Blocks at or past BlocksCount are refused.
func (f *FS) ReadBlock(blk uint64, buf []byte) error {
	n := uint64(len(buf)) >> f.BlockBits
	if blk >= f.BlocksCount || n > f.BlocksCount-blk {
		return &BlockRangeError{Blk: blk}
	}
	_, err := f.Dev.ReadAt(buf, int64(blk)<<f.BlockBits)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("block %d: %w", blk, ErrShortRead)
		}
		return fmt.Errorf("block %d: %w", blk, err)
	}
	return nil
}

// BlockRangeError is a read of a block outside the filesystem.
type BlockRangeError struct{ Blk uint64 }

func (e *BlockRangeError) Error() string {
	return fmt.Sprintf("fs: block %d outside the filesystem", e.Blk)
}

// GroupFirstBlock returns the first block of group g.
func (f *FS) GroupFirstBlock(g uint32) uint64 {
	return f.FirstDataBlock + uint64(g)*uint64(f.BlocksPerGroup)
}

// GroupLastBlock returns the last block of group g.
func (f *FS) GroupLastBlock(g uint32) uint64 {
	if g == f.Groups-1 {
		return f.BlocksCount - 1
	}
	return f.GroupFirstBlock(g) + uint64(f.BlocksPerGroup) - 1
}

// GroupOfBlock returns the group holding block blk.
func (f *FS) GroupOfBlock(blk uint64) uint32 {
	if blk < f.FirstDataBlock {
		return 0
	}
	return uint32((blk - f.FirstDataBlock) / uint64(f.BlocksPerGroup))
}

// GroupHasSuper reports whether group g carries a superblock backup.
func (f *FS) GroupHasSuper(g uint32) bool {
	if g == 0 {
		return true
	}
	sb := f.SB
	if sb.HasCompat(ondisk.CompatSparseSuper2) {
		return g == sb.BackupBG(0) || g == sb.BackupBG(1)
	}
	if g <= 1 || !sb.HasRoCompat(ondisk.RoCompatSparseSuper) {
		return true
	}
	if g&1 == 0 {
		return false
	}
	return isPower(g, 3) || isPower(g, 5) || isPower(g, 7)
}

func isPower(g, base uint32) bool {
	n := uint64(base)
	for n < uint64(g) {
		n *= uint64(base)
	}
	return n == uint64(g)
}

// GroupLayout is where a group's superblock and descriptor copies lie.
type GroupLayout struct {
	Super      uint64 // 0 if none
	OldDesc    uint64 // first block of the old-style descriptor copy, 0 if none
	OldDescLen uint64 // descriptor blocks + reserved GDT blocks in that copy
	MetaBGDesc uint64 // meta_bg descriptor block, 0 if none
	Overhead   uint64 // number of blocks these take
}

// Layout returns the superblock/descriptor layout of group g, as the
// library e2fsck uses computes it.
func (f *FS) Layout(g uint32) GroupLayout {
	var l GroupLayout
	sb := f.SB
	first := f.GroupFirstBlock(g)
	if first == 0 && f.BlockSize == 1024 && f.ClusterBits > 0 {
		first = 1 // 1 KiB blocks with bigalloc: block 0 holds the boot block
	}
	var oldDescBlocks uint64
	if sb.HasIncompat(ondisk.IncompatMetaBG) {
		oldDescBlocks = uint64(sb.FirstMetaBG())
	} else {
		oldDescBlocks = uint64(f.DescBlocks) + uint64(sb.ReservedGdtBlocks())
	}
	hasSuper := f.GroupHasSuper(g)
	if hasSuper {
		l.Super = first
		l.Overhead++
	}
	metaBG := g / f.DescPerBlock
	if !sb.HasIncompat(ondisk.IncompatMetaBG) || metaBG < sb.FirstMetaBG() {
		if hasSuper {
			l.OldDesc = first + 1
			l.OldDescLen = oldDescBlocks
			l.Overhead += oldDescBlocks
		}
	} else {
		r := g % f.DescPerBlock
		if r == 0 || r == 1 || r == f.DescPerBlock-1 {
			l.MetaBGDesc = first
			if hasSuper {
				l.MetaBGDesc++
			}
			l.Overhead++
		}
	}
	return l
}

// InodeLoc returns the block holding inode ino and the byte offset in it,
// from the group descriptor's inode table location. ok is false when ino is
// out of range or the table location is outside the filesystem.
func (f *FS) InodeLoc(ino uint32) (blk uint64, off int, ok bool) {
	if ino == 0 || ino > f.InodesCount {
		return 0, 0, false
	}
	g := (ino - 1) / f.InodesPerGroup
	idx := (ino - 1) % f.InodesPerGroup
	byteOff := uint64(idx) * uint64(f.InodeSize)
	table := f.Group(g).InodeTable()
	blk = table + byteOff>>f.BlockBits
	if table == 0 || blk >= f.BlocksCount {
		return 0, 0, false
	}
	return blk, int(byteOff & uint64(f.BlockSize-1)), true
}

// ReadInode reads inode ino into buf (len InodeSize); scratch is a block
// buffer the caller owns.
func (f *FS) ReadInode(ino uint32, buf, scratch []byte) error {
	blk, off, ok := f.InodeLoc(ino)
	if !ok {
		return &BlockRangeError{Blk: blk}
	}
	if err := f.ReadBlock(blk, scratch[:f.BlockSize]); err != nil {
		return err
	}
	copy(buf, scratch[off:off+f.InodeSize])
	return nil
}

// ClusterOf converts a block number to its cluster number.
func (f *FS) ClusterOf(blk uint64) uint64 { return blk >> f.ClusterBits }

// DescError is a group descriptor that fails the library's sanity check
// (ext2fs_check_desc); Msg is the library's wording.
type DescError struct {
	Group uint32
	Msg   string
}

func (e *DescError) Error() string { return e.Msg }

// CheckDesc verifies that every group's bitmaps and inode table lie in the
// group (or the filesystem, with flex_bg) and overlap neither each other nor
// the superblock and descriptor copies, as ext2fs_check_desc does: it
// reports the first offender in the library's marking order. Memory is
// proportional to the number of groups, not blocks.
func (f *FS) CheckDesc() error {
	if f.DescSize&(f.DescSize-1) != 0 {
		return &DescError{Msg: "Block group descriptor size incorrect"}
	}
	// As ext2fs_check_desc: the superblock and descriptor copies are
	// marked in a block map, then each group's block bitmap, inode
	// bitmap and inode table in turn; the first structure outside its
	// range or on a block already marked is the bad one. The map's
	// memory follows what is marked, and the batch keeps a flex group's
	// interleaved runs from costing one page edit per block.
	used := bitmap.New(f.BlocksCount)
	mark := bitmap.NewBatch(used)
	if f.FirstDataBlock == 0 && f.BlockSize == 1024 && f.ClusterBits > 0 {
		// ext2fs_reserve_super_and_bgd marks the boot block too.
		mark.Mark(0, 1)
	}
	for g := uint32(0); g < f.Groups; g++ {
		l := f.Layout(g)
		if l.Super != 0 || g == 0 {
			mark.Mark(l.Super, 1)
		}
		if l.OldDesc != 0 && l.OldDesc < f.BlocksCount {
			mark.Mark(l.OldDesc, min(l.OldDesc+l.OldDescLen, f.BlocksCount)-l.OldDesc)
		}
		if l.MetaBGDesc != 0 {
			mark.Mark(l.MetaBGDesc, 1)
		}
	}
	msgs := [3]string{
		"Corrupt group descriptor: bad block for block bitmap",
		"Corrupt group descriptor: bad block for inode bitmap",
		"Corrupt group descriptor: bad block for inode table",
	}
	first, last := f.FirstDataBlock, f.BlocksCount-1
	flex := f.SB.HasIncompat(ondisk.IncompatFlexBG)
	for g := uint32(0); g < f.Groups; g++ {
		if !flex {
			first, last = f.GroupFirstBlock(g), f.GroupLastBlock(g)
		}
		gd := f.Group(g)
		locs := [3]uint64{gd.BlockBitmap(), gd.InodeBitmap(), gd.InodeTable()}
		lens := [3]uint64{1, 1, uint64(f.InodeBlocksPerGroup)}
		for k := 0; k < 3; k++ {
			if locs[k] < first || locs[k]+lens[k]-1 > last || mark.AnySet(locs[k], lens[k]) {
				return &DescError{Group: g, Msg: msgs[k]}
			}
			mark.Mark(locs[k], lens[k])
		}
	}
	return nil
}

// PrefetchLater hints that a later pass will read blocks [blk, blk+n),
// when the device supports it (see blockdev.LaterPrefetcher).
func (f *FS) PrefetchLater(blk, n uint64) {
	if p, ok := f.Dev.(blockdev.LaterPrefetcher); ok {
		if off, size, ok := f.hintRange(blk, n); ok {
			p.PrefetchLater(off, size)
		}
	}
}

// PromoteLater says the later pass PrefetchLater hinted for has come
// (see blockdev.LaterPrefetcher).
func (f *FS) PromoteLater() {
	if p, ok := f.Dev.(blockdev.LaterPrefetcher); ok {
		p.PromoteLater()
	}
}

// Prefetch hints that blocks [blk, blk+n) will be read soon, when the
// device supports it (see blockdev.Prefetcher). Out-of-range requests are
// ignored.
func (f *FS) Prefetch(blk, n uint64) {
	if p, ok := f.Dev.(blockdev.Prefetcher); ok {
		if off, size, ok := f.hintRange(blk, n); ok {
			p.Prefetch(off, size)
		}
	}
}

// hintRange is blocks [blk, blk+n) in bytes, cut at the end of the
// filesystem; false when nothing of it is inside.
func (f *FS) hintRange(blk, n uint64) (off, size int64, ok bool) {
	if blk >= f.BlocksCount || n == 0 {
		return 0, 0, false
	}
	n = min(n, f.BlocksCount-blk)
	return int64(blk) << f.BlockBits, int64(n) << f.BlockBits, true
}
