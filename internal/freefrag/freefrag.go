// Package freefrag computes e2freefrag's free-space fragmentation report
// from a filesystem's on-disk block bitmaps.
//
// The bitmap is built as libext2fs's ext2fs_read_block_bitmap builds it:
// one bit per cluster, read from each group's block bitmap block, except
// that a BLOCK_UNINIT group whose descriptor checksum verifies reads as all
// free; then every BLOCK_UNINIT group (valid checksum or not) gets its own
// superblock and descriptor copies, and its bitmaps and inode table
// (wherever they are), marked in use. With metadata_csum a block bitmap
// whose checksum fails is an error, as it is for e2freefrag.
//
// The scan then follows e2freefrag 1.47.0 exactly, including its quirks, so
// the rendered report is byte-for-byte the same:
//
//   - free extents are counted in blocks over [s_first_data_block,
//     s_blocks_count), and an extent runs across chunk boundaries;
//   - with bigalloc e2freefrag passes blk >> cluster_bits to a cluster
//     bitmap that shifts by cluster_bits again, so block blk is "free" when
//     cluster blk >> (2*cluster_bits) is; Scan reproduces that (see
//     Report.BigallocQuirk);
//   - "Free blocks" is s_free_blocks_count, not the bitmap's count;
//   - chunk 0 starts at s_first_data_block, so with 1 KiB blocks it is
//     never counted as a free chunk.
//
// e2freefrag asks a mounted filesystem's kernel for its free space
// (GETFSMAP) instead of reading bitmaps; this package always reads the
// bitmaps, which is what e2freefrag does on an unmounted image or device.
package freefrag

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"gofsck/internal/bitmap"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// DefaultChunkBytes is e2freefrag's chunk size when -c is not given (it
// then prints no chunk section but still scans in chunks of this size).
const DefaultChunkBytes = 1 << 20

// MaxHist is the number of histogram buckets; the last one collects every
// extent of 2^30 blocks or more.
const MaxHist = 32

// Errors with e2fsprogs' wording (com_err messages), so the command can
// print "DEVICE: <message> while reading block bitmap".
var (
	ErrBitmapRead  = errors.New("Can't read a block bitmap")
	ErrBitmapCsum  = errors.New("Block bitmap checksum does not match bitmap")
	ErrChunkTooBig = errors.New("freefrag: chunk size too large")
)

// ReadBlockBitmap returns the cluster bitmap ext2fs_read_block_bitmap would
// build: bit c is cluster c (absolute cluster number, bits below
// s_first_data_block's cluster unused). Its length covers every group's
// full cluster range, as the library's does.
func ReadBlockBitmap(f *fs.FS) (*bitmap.Bitmap, error) {
	cpg := uint64(f.BlocksPerGroup) >> f.ClusterBits
	first := f.FirstDataBlock >> f.ClusterBits
	bm := bitmap.New(first + uint64(f.Groups)*cpg)
	nbytes := int(cpg / 8)
	buf := make([]byte, f.BlockSize)
	for g := uint32(0); g < f.Groups; g++ {
		gd := f.Group(g)
		blk := gd.BlockBitmap()
		if (f.GdtCsum && gd.Flags()&ondisk.BgBlockUninit != 0 && gd.ChecksumValid(f.SB, g)) ||
			blk >= f.BlocksCount {
			blk = 0
		}
		if blk == 0 {
			continue // reads as all free
		}
		if err := f.ReadBlock(blk, buf); err != nil {
			return nil, fmt.Errorf("group %d: %w: %w", g, ErrBitmapRead, err)
		}
		if f.MetadataCsum {
			sum := ondisk.BitmapChecksum(f.CsumSeed, buf[:nbytes])
			if !gd.BitmapCsumHasHi() {
				sum &= 0xFFFF
			}
			if sum != gd.BlockBitmapCsum() {
				return nil, fmt.Errorf("group %d: %w", g, ErrBitmapCsum)
			}
		}
		base := first + uint64(g)*cpg
		for i, b := range buf[:nbytes] {
			switch b {
			case 0:
			case 0xFF:
				bm.SetRange(base+uint64(i)*8, 8, nil)
			default:
				for k := uint64(0); k < 8; k++ {
					if b&(1<<k) != 0 {
						bm.Set(base + uint64(i)*8 + k)
					}
				}
			}
		}
	}
	markUninit(f, bm)
	return bm, nil
}

// markUninit is mark_uninit_bg_group_blocks: every BLOCK_UNINIT group's own
// metadata is in use, whatever its bitmap said.
func markUninit(f *fs.FS, bm *bitmap.Bitmap) {
	mark := func(blk, n uint64) {
		// The library refuses (and does not mark) a range past the end.
		if n == 0 || blk < f.FirstDataBlock && blk != 0 || blk >= f.BlocksCount || n > f.BlocksCount-blk {
			return
		}
		c0, c1 := blk>>f.ClusterBits, (blk+n-1)>>f.ClusterBits
		bm.SetRange(c0, c1-c0+1, nil)
	}
	for g := uint32(0); g < f.Groups; g++ {
		gd := f.Group(g)
		if gd.Flags()&ondisk.BgBlockUninit == 0 {
			continue
		}
		l := f.Layout(g)
		if l.Super != 0 || g == 0 {
			mark(l.Super, 1)
		}
		if g == 0 && f.BlockSize == 1024 && f.ClusterBits > 0 {
			mark(0, 1)
		}
		if l.OldDesc != 0 {
			n := l.OldDescLen
			if l.OldDesc+n >= f.BlocksCount {
				n = f.BlocksCount - l.OldDesc
			}
			mark(l.OldDesc, n)
		}
		if l.MetaBGDesc != 0 {
			mark(l.MetaBGDesc, 1)
		}
		if t := gd.InodeTable(); t != 0 {
			mark(t, uint64(f.InodeBlocksPerGroup))
		}
		if b := gd.BlockBitmap(); b != 0 && b < f.BlocksCount {
			mark(b, 1)
		}
		if b := gd.InodeBitmap(); b != 0 && b < f.BlocksCount {
			mark(b, 1)
		}
	}
}

// Bucket is one histogram line: extents whose size in blocks has
// floor(log2) == index-1.
type Bucket struct {
	Extents uint64 // number of free extents
	Blocks  uint64 // blocks in them
}

// Report is everything e2freefrag prints.
type Report struct {
	BlockSize   int
	BlocksCount uint64
	FreeBlocks  uint64 // s_free_blocks_count
	// ChunkBytes is the -c chunk size in bytes, 0 when not given (then
	// the chunk section is not printed).
	ChunkBytes  uint64
	BlksInChunk uint64
	TotalChunks uint64
	FreeChunks  uint64 // chunks entirely free
	// Min, Max and Sum are free extent sizes in blocks; Extents is their
	// number.
	Min, Max, Sum, Extents uint64
	Hist                   [MaxHist]Bucket
	// BigallocQuirk is true when the scan reproduced e2freefrag's double
	// cluster shift on a bigalloc filesystem.
	BigallocQuirk bool
}

// ChunkError says why a chunk size is refused.
type ChunkError struct{ Msg string }

func (e *ChunkError) Error() string { return e.Msg }

// Scan computes the report from the bitmap ReadBlockBitmap returned.
// chunkBytes is the -c value in bytes (0 for the default view); it must be
// a power of two no smaller than the block size.
func Scan(f *fs.FS, bm *bitmap.Bitmap, chunkBytes uint64) (*Report, error) {
	r := &Report{
		BlockSize:   f.BlockSize,
		BlocksCount: f.BlocksCount,
		FreeBlocks:  f.SB.FreeBlocksCount(),
		ChunkBytes:  chunkBytes,
		Min:         math.MaxUint64,
	}
	cb := chunkBytes
	if cb == 0 {
		cb = DefaultChunkBytes
	}
	if cb < uint64(f.BlockSize) {
		return nil, &ChunkError{"chunksize must be greater than or equal to filesystem blocksize."}
	}
	chunkBits := uint(log2(cb))
	// e2freefrag keeps blks_in_chunk in an int; refuse what would
	// overflow it rather than reproduce the garbage.
	if chunkBits-f.BlockBits > 30 {
		return nil, ErrChunkTooBig
	}
	B := uint64(1) << (chunkBits - f.BlockBits)
	r.BlksInChunk = B
	r.TotalChunks = (f.BlocksCount + B) >> (chunkBits - f.BlockBits)

	shift := f.ClusterBits * 2 // the quirk; 0 without bigalloc
	r.BigallocQuirk = f.ClusterBits > 0
	start, end := f.FirstDataBlock, f.BlocksCount
	// Walk maximal free runs of the tested bit index, scaled to blocks.
	idx := start >> shift
	lastIdx := (end - 1) >> shift
	for idx <= lastIdx {
		// next clear bit at or after idx
		if bm.Test(idx) {
			idx = nextClear(bm, idx, lastIdx+1)
			if idx > lastIdx {
				break
			}
		}
		runEnd := min(bm.NextSet(idx), lastIdx+1) // exclusive, in index units
		s := max(idx<<shift, start)
		e := min(runEnd<<shift, end)
		if runEnd > lastIdx {
			e = end
		}
		r.addExtent(e - s)
		r.countFullChunks(s, e, start)
		idx = runEnd
	}
	if r.Extents == 0 {
		r.Min = 0
	}
	return r, nil
}

// countFullChunks adds the chunks lying entirely inside the free run
// [s, e). Chunk 0 is scanned from first, so it is full only when first is
// 0; a chunk past the end is partial and never full.
func (r *Report) countFullChunks(s, e, first uint64) {
	B := r.BlksInChunk
	k0 := (s + B - 1) / B
	if k0 == 0 && first != 0 {
		k0 = 1
	}
	k1 := e / B // chunks [k0, k1) fit
	if k1 > k0 {
		r.FreeChunks += k1 - k0
	}
}

func (r *Report) addExtent(n uint64) {
	if n == 0 {
		return
	}
	i := log2(n) + 1
	if i >= MaxHist {
		i = MaxHist - 1
	}
	r.Hist[i].Extents++
	r.Hist[i].Blocks += n
	r.Max = max(r.Max, n)
	r.Min = min(r.Min, n)
	r.Sum += n
	r.Extents++
}

// nextClear returns the first clear bit in [i, limit), or limit.
func nextClear(bm *bitmap.Bitmap, i, limit uint64) uint64 {
	for ; i < limit; i++ {
		if i&63 == 0 && limit-i >= 64 && bm.Count(i, 64) == 64 {
			i += 63
			continue
		}
		if !bm.Test(i) {
			return i
		}
	}
	return limit
}

// log2 is e2freefrag's ul_log2: floor(log2(v)), 0 for 0.
func log2(v uint64) int {
	l := 0
	for v >>= 1; v != 0; v >>= 1 {
		l++
	}
	return l
}

// WriteHeader writes the two lines e2freefrag prints before reading the
// bitmap.
func WriteHeader(w io.Writer, device string, blockSize int) {
	fmt.Fprintf(w, "Device: %s\nBlocksize: %d bytes\n", device, blockSize)
}

// Write renders the report as e2freefrag's dump_chunk_info does.
func (r *Report) Write(w io.Writer) error {
	bb := log2(uint64(r.BlockSize))
	var b []byte
	b = fmt.Appendf(b, "Total blocks: %d\nFree blocks: %d (%s%%)\n",
		r.BlocksCount, r.FreeBlocks, cfloat(float64(r.FreeBlocks)*100/float64(r.BlocksCount), 0, 1))
	if r.ChunkBytes != 0 {
		b = fmt.Appendf(b, "\nChunksize: %d bytes (%d blocks)\n", r.ChunkBytes, r.BlksInChunk)
		b = fmt.Appendf(b, "Total chunks: %d\nFree chunks: %d (%s%%)\n",
			r.TotalChunks, r.FreeChunks, cfloat(float64(r.FreeChunks)*100/float64(r.TotalChunks), 0, 1))
	}
	var mn, mx, avg uint64
	if r.Extents != 0 {
		scale := uint64(r.BlockSize >> 10)
		mn, mx, avg = r.Min*scale, r.Max*scale, r.Sum/r.Extents*scale
	}
	b = fmt.Appendf(b, "\nMin. free extent: %d KB \nMax. free extent: %d KB\nAvg. free extent: %d KB\n", mn, mx, avg)
	b = fmt.Appendf(b, "Num. free extent: %d\n", r.Extents)
	b = fmt.Appendf(b, "\nHISTOGRAM OF FREE EXTENT SIZES:\n")
	b = fmt.Appendf(b, "%s :  %12s  %12s  %7s\n", "Extent Size Range", "Free extents", "Free Blocks", "Percent")
	const unitp = "KMGTPEZY"
	units, u := 10, 0
	var start uint64
	for i := 0; i < MaxHist; i++ {
		end := uint64(1) << (i + bb - units)
		if h := r.Hist[i]; h.Extents != 0 {
			endStr := fmt.Sprintf("%5d%c-", end, unitp[u])
			if i == MaxHist-1 {
				endStr = "max "
			}
			b = fmt.Appendf(b, "%5d%c...%7s  :  %12d  %12d  %s%%\n", start, unitp[u], endStr,
				h.Extents, h.Blocks, cfloat(float64(h.Blocks)*100/float64(r.FreeBlocks), 6, 2))
		}
		start = end
		if start == 1<<10 {
			start = 1
			units += 10
			u = min(u+1, len(unitp)-1)
		}
	}
	_, err := w.Write(b)
	return err
}

// cfloat formats v as C's "%<width>.<prec>f" does (glibc spells the
// non-finite values inf, -inf and -nan/nan).
func cfloat(v float64, width, prec int) string {
	var s string
	switch {
	case math.IsInf(v, 1):
		s = "inf"
	case math.IsInf(v, -1):
		s = "-inf"
	case math.IsNaN(v):
		s = "-nan" // 0.0/0.0 on x86 is the negative quiet NaN
	default:
		s = strconv.FormatFloat(v, 'f', prec, 64)
	}
	for len(s) < width {
		s = " " + s
	}
	return s
}
