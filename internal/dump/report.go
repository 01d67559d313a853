package dump

import (
	"container/heap"
	"fmt"
	"io"
	"strings"

	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/ondisk/jbd2"
)

// ReadInode reads inode ino of f.
func ReadInode(f *fs.FS, ino uint32) (ondisk.Inode, error) {
	buf := make([]byte, f.InodeSize)
	scratch := make([]byte, f.BlockSize)
	if err := f.ReadInode(ino, buf, scratch); err != nil {
		return nil, fmt.Errorf("inode %d: %w", ino, err)
	}
	return ondisk.Inode(buf), nil
}

// WriteJournal writes the journal superblock fields dumpe2fs -h prints for
// an internal journal (e2p_list_journal_super). It reads the first 1024
// bytes of the journal inode's block 0.
func WriteJournal(w io.Writer, f *fs.FS) error {
	ino := f.SB.JournalInum()
	if !f.SB.HasCompat(ondisk.CompatHasJournal) || ino == 0 {
		return nil
	}
	inode, err := ReadInode(f, ino)
	if err != nil {
		return fmt.Errorf("while reading journal inode: %w", err)
	}
	m := BlockMap(f, ino, inode)
	pblk, ok := m.Lookup(0)
	if !ok {
		return fmt.Errorf("while reading journal super block: %w", ErrCorruptMap)
	}
	buf := make([]byte, f.BlockSize)
	if err := f.ReadBlock(pblk, buf); err != nil {
		return fmt.Errorf("while reading journal super block: %w", err)
	}
	jsb, err := jbd2.SuperblockOf(buf[:jbd2.SuperblockSize])
	if err != nil || !jsb.Header().Valid() {
		return fmt.Errorf("Journal superblock magic number invalid!")
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	fc := uint32(0)
	if f.SB.HasCompat(ondisk.CompatFastCommit) {
		fc = jsb.NumFCBlocksRaw()
		if fc == 0 {
			fc = 256 // JBD2_DEFAULT_FAST_COMMIT_BLOCKS
		}
	}
	maxlen := jsb.MaxLen()
	var feats []string
	for _, s := range []string{jsb.FeatureCompat().String(), jsb.FeatureIncompat().String(), jsb.FeatureRoCompat().String()} {
		if s != "(none)" {
			feats = append(feats, s)
		}
	}
	if len(feats) == 0 {
		feats = []string{"(none)"}
	}
	p("Journal features:         %s\n", strings.Join(feats, " "))
	size := (jsb.BlockSize() / 1024) * maxlen
	if size < 8192 {
		p("Total journal size:       %dk\n", size)
	} else {
		p("Total journal size:       %dM\n", size>>10)
	}
	if jsb.BlockSize() != uint32(f.BlockSize) {
		p("Journal block size:       %d\n", jsb.BlockSize())
	}
	p("Total journal blocks:     %d\n", maxlen)
	p("Max transaction length:   %d\n", maxlen-fc)
	p("Fast commit length:       %d\n", fc)
	if jsb.First() != 1 {
		p("Journal first block:      %d\n", jsb.First())
	}
	p("Journal sequence:         0x%08x\n", jsb.Sequence())
	p("Journal start:            %d\n", jsb.Start())
	if n := jsb.NrUsers(); n != 1 {
		p("Journal number of users:  %d\n", n)
	}
	if jsb.FeatureCompat()&jbd2.CompatChecksum != 0 {
		p("Journal checksum type:    crc32\n")
	}
	if jsb.FeatureIncompat()&(jbd2.IncompatCsumV2|jbd2.IncompatCsumV3) != 0 {
		ct := "unknown"
		if jsb.ChecksumType() == 4 {
			ct = "crc32c"
		}
		p("Journal checksum type:    %s\n", ct)
		p("Journal checksum:         0x%08x\n", jsb.Checksum())
	}
	if n := jsb.NrUsers(); n > 1 || UUIDString(buf[0x100:0x110]) != "<none>" {
		for i := uint32(0); i < n && i < 48; i++ {
			label := "Journal users:            "
			if i > 0 {
				label = "                          "
			}
			p("%s%s\n", label, UUIDString(buf[0x100+16*i:0x110+16*i]))
		}
	}
	if e := jsb.Errno(); e != 0 {
		p("Journal errno:            %d\n", e)
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// WriteGroups writes one line per group: block range, flags, free counts,
// directories, itable_unused, and whether the descriptor and bitmap
// checksums verify ("ok", "BAD", or "-" without checksums).
func WriteGroups(w io.Writer, f *fs.FS) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%6s %23s %-26s %8s %8s %6s %8s %5s %6s %6s\n",
		"Group", "Blocks", "Flags", "FreeBlk", "FreeIno", "Dirs", "IUnused", "Csum", "BBmap", "IBmap")
	buf := make([]byte, f.BlockSize)
	for g := uint32(0); g < f.Groups; g++ {
		gd := f.Group(g)
		var flags []string
		for _, fl := range []struct {
			bit  uint16
			name string
		}{{ondisk.BgInodeUninit, "INODE_UNINIT"}, {ondisk.BgBlockUninit, "BLOCK_UNINIT"}, {ondisk.BgInodeZeroed, "ITABLE_ZEROED"}} {
			if gd.Flags()&fl.bit != 0 {
				flags = append(flags, fl.name)
			}
		}
		fs := "-"
		if len(flags) > 0 {
			fs = strings.Join(flags, ",")
		}
		csum := "-"
		if f.GdtCsum {
			csum = okBad(gd.ChecksumValid(f.SB, g))
		}
		bb, ib := "-", "-"
		if f.MetadataCsum {
			bb = bitmapCsum(f, buf, gd.BlockBitmap(), int(f.SB.ClustersPerGroup()/8), gd.BlockBitmapCsum(), gd.BitmapCsumHasHi(), gd.Flags()&ondisk.BgBlockUninit != 0)
			ib = bitmapCsum(f, buf, gd.InodeBitmap(), int(f.InodesPerGroup/8), gd.InodeBitmapCsum(), gd.BitmapCsumHasHi(), gd.Flags()&ondisk.BgInodeUninit != 0)
		}
		fmt.Fprintf(&b, "%6d %11d-%-11d %-26s %8d %8d %6d %8d %5s %6s %6s\n",
			g, f.GroupFirstBlock(g), f.GroupLastBlock(g), fs, gd.FreeBlocks(), gd.FreeInodes(),
			gd.UsedDirs(), gd.ItableUnused(), csum, bb, ib)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func okBad(ok bool) string {
	if ok {
		return "ok"
	}
	return "BAD"
}

// bitmapCsum verifies a bitmap block's metadata_csum checksum; an
// uninitialised bitmap is not checked ("uninit").
func bitmapCsum(f *fs.FS, buf []byte, blk uint64, n int, stored uint32, hi, uninit bool) string {
	if uninit {
		return "uninit"
	}
	if blk == 0 || blk >= f.BlocksCount || n > len(buf) {
		return "BAD"
	}
	if err := f.ReadBlock(blk, buf); err != nil {
		return "EIO"
	}
	sum := ondisk.BitmapChecksum(f.CsumSeed, buf[:n])
	if !hi {
		sum &= 0xFFFF
	}
	return okBad(sum == stored)
}

// Frag is one file's entry in the fragmentation report.
type Frag struct {
	Ino       uint32
	Dir       bool
	Size      uint64
	Map       Map
	Fragments int // physically separate pieces (Map.Fragments)
}

// Score is the cost of reading the inode from start to end: the seeks
// between its pieces (fragments - 1).
func (x Frag) Score() int { return max(x.Fragments-1, 0) }

// FragOptions select what the fragmentation scan looks at.
type FragOptions struct {
	N int // how many of each kind (files, directories) to keep
}

// FragReport is the N most fragmented files and directories.
type FragReport struct {
	Files, Dirs []Frag
	Scanned     uint64 // inodes with a block map examined
	Corrupt     uint64 // of which the map could not be walked to the end
}

// ScanFragmentation walks every in-use inode (by the inode bitmaps,
// skipping INODE_UNINIT groups and the unused tail of each inode table)
// and keeps the N most fragmented regular files and directories.
func ScanFragmentation(f *fs.FS, o FragOptions) (*FragReport, error) {
	n := max(o.N, 1)
	files, dirs := &fragHeap{}, &fragHeap{}
	rep := &FragReport{}
	bmap := make([]byte, f.BlockSize)
	ipb := uint32(f.BlockSize / f.InodeSize)
	table := make([]byte, int(f.InodeBlocksPerGroup)*f.BlockSize)
	for g := uint32(0); g < f.Groups; g++ {
		gd := f.Group(g)
		if f.GdtCsum && gd.Flags()&ondisk.BgInodeUninit != 0 && gd.ChecksumValid(f.SB, g) {
			continue
		}
		used := f.InodesPerGroup
		if f.GdtCsum && gd.ChecksumValid(f.SB, g) && gd.ItableUnused() <= f.InodesPerGroup {
			used -= gd.ItableUnused()
		}
		if used == 0 {
			continue
		}
		ib := gd.InodeBitmap()
		if ib == 0 || ib >= f.BlocksCount {
			continue
		}
		if err := f.ReadBlock(ib, bmap); err != nil {
			return nil, fmt.Errorf("group %d inode bitmap: %w", g, err)
		}
		itab := gd.InodeTable()
		nblk := uint64((used + ipb - 1) / ipb)
		if itab == 0 || itab >= f.BlocksCount || nblk > f.BlocksCount-itab {
			continue
		}
		if err := f.ReadBlock(itab, table[:nblk*uint64(f.BlockSize)]); err != nil {
			return nil, fmt.Errorf("group %d inode table: %w", g, err)
		}
		for i := uint32(0); i < used; i++ {
			if bmap[i/8]&(1<<(i%8)) == 0 {
				continue
			}
			ino := g*f.InodesPerGroup + i + 1
			if ino < f.FirstIno && ino != ondisk.RootIno {
				continue // reserved inodes (journal, resize) are not user data
			}
			off := int(i) * f.InodeSize
			inode := ondisk.Inode(table[off : off+f.InodeSize])
			if inode.LinksCount() == 0 || inode.Dtime() != 0 || !(inode.IsReg() || inode.IsDir()) {
				continue
			}
			m := BlockMap(f, ino, inode)
			rep.Scanned++
			if m.Truncated {
				rep.Corrupt++
			}
			x := Frag{Ino: ino, Dir: inode.IsDir(), Size: inode.Size(), Map: m, Fragments: m.Fragments()}
			h := files
			if x.Dir {
				h = dirs
			}
			if h.Len() < n {
				heap.Push(h, x)
			} else if less((*h)[0], x) {
				(*h)[0] = x
				heap.Fix(h, 0)
			}
		}
	}
	rep.Files, rep.Dirs = sorted(files), sorted(dirs)
	return rep, nil
}

// less orders by fragments, then size, then (reversed) inode number, so
// the heap's minimum is the entry to drop.
func less(a, b Frag) bool {
	if a.Fragments != b.Fragments {
		return a.Fragments < b.Fragments
	}
	if a.Size != b.Size {
		return a.Size < b.Size
	}
	return a.Ino > b.Ino
}

type fragHeap []Frag

func (h fragHeap) Len() int           { return len(h) }
func (h fragHeap) Less(i, j int) bool { return less(h[i], h[j]) }
func (h fragHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *fragHeap) Push(x any)        { *h = append(*h, x.(Frag)) }
func (h *fragHeap) Pop() any          { v := (*h)[len(*h)-1]; *h = (*h)[:len(*h)-1]; return v }

func sorted(h *fragHeap) []Frag {
	out := make([]Frag, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(Frag)
	}
	return out
}

// Write renders the report.
func (r *FragReport) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Inodes with a block map: %d", r.Scanned)
	if r.Corrupt > 0 {
		fmt.Fprintf(&b, " (%d with a corrupt map, listed up to the damage)", r.Corrupt)
	}
	b.WriteString("\n")
	for _, part := range []struct {
		title string
		list  []Frag
	}{{"Most fragmented directories", r.Dirs}, {"Most fragmented files", r.Files}} {
		fmt.Fprintf(&b, "\n%s (score = seeks to read it in order):\n", part.title)
		if len(part.list) == 0 {
			b.WriteString("  (none)\n")
			continue
		}
		for _, x := range part.list {
			kind := "EXTENTS"
			if !x.Map.Extents {
				kind = "BLOCKS"
			}
			fmt.Fprintf(&b, "Inode %d: size %d, %d blocks, %d extents, %d fragments, score %d\n",
				x.Ino, x.Size, x.Map.DataBlocks(), x.Map.DataPieces(), x.Fragments, x.Score())
			fmt.Fprintf(&b, "  %s: %s\n", kind, x.Map.String())
			if x.Map.Err != nil {
				fmt.Fprintf(&b, "  (map walk stopped: %v)\n", x.Map.Err)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
