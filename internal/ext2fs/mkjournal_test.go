package ext2fs

import (
	"bytes"
	"os/exec"
	"testing"

	"gofsck/internal/bitmap"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/ondisk/jbd2"
	"gofsck/internal/testfs"
)

// diskBlockMap reads f's block bitmaps (indexed by cluster). The images
// have no uninit_bg or metadata_csum, so every group's bitmap is on disk.
func diskBlockMap(t *testing.T, f *fs.FS) *bitmap.Bitmap {
	t.Helper()
	cpg := uint64(f.SB.ClustersPerGroup())
	first := f.ClusterOf(f.FirstDataBlock)
	last := f.ClusterOf(f.BlocksCount - 1)
	m := bitmap.New(last + 1)
	buf := make([]byte, f.BlockSize)
	for g := uint32(0); g < f.Groups; g++ {
		if f.Group(g).Flags()&ondisk.BgBlockUninit != 0 {
			t.Fatalf("group %d is BLOCK_UNINIT", g)
		}
		if err := f.ReadBlock(f.Group(g).BlockBitmap(), buf); err != nil {
			t.Fatal(err)
		}
		for i := uint64(0); i < cpg; i++ {
			cl := first + uint64(g)*cpg + i
			if cl <= last && buf[i/8]&(1<<(i%8)) != 0 {
				m.Set(cl)
			}
		}
	}
	return m
}

// TestDefaultJournalSize pins the size table at its edges.
func TestDefaultJournalSize(t *testing.T) {
	for _, tc := range []struct {
		blocks uint64
		want   int
	}{
		{0, -1}, {2047, -1}, {2048, 1024}, {32767, 1024}, {32768, 4096},
		{256 * 1024, 8192}, {512 * 1024, 16384}, {4096 * 1024, 32768},
		{8192 * 1024, 65536}, {16384 * 1024, 131072}, {32768 * 1024, 262144}, {1 << 40, 262144},
	} {
		if got := DefaultJournalSize(tc.blocks); got != tc.want {
			t.Errorf("DefaultJournalSize(%d) = %d, want %d", tc.blocks, got, tc.want)
		}
	}
}

// TestJournalLikeTune2fs creates the default journal on mke2fs images
// made without one and compares it with what tune2fs -j (the library's
// ext2fs_add_journal_inode3) makes of the same image: the journal
// inode's i_block, size, i_blocks and flags, every mapping block, the
// journal superblock, and the superblock's journal fields.
func TestJournalLikeTune2fs(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec testfs.Spec
	}{
		{"ext4-1k", testfs.Spec{FSType: "ext4", Size: 32 << 20, BlockSize: 1024, Features: "^has_journal,^metadata_csum,^uninit_bg"}},
		{"ext4-4k-flex", testfs.Spec{FSType: "ext4", Size: 512 << 20, BlockSize: 4096, Features: "^has_journal,^metadata_csum,^uninit_bg"}},
		{"ext4-fast-commit", testfs.Spec{FSType: "ext4", Size: 64 << 20, BlockSize: 1024, Features: "^has_journal,^metadata_csum,^uninit_bg,fast_commit"}},
		{"ext3-1k", testfs.Spec{FSType: "ext3", Size: 16 << 20, BlockSize: 1024, Features: "^has_journal"}},
		{"ext3-4k", testfs.Spec{FSType: "ext3", Size: 128 << 20, BlockSize: 4096, Features: "^has_journal", InodeSize: 128}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := testfs.MkImage(t, tc.spec)
			ref := testfs.CopyImage(t, img)
			if out, err := exec.Command("tune2fs", "-j", ref).CombinedOutput(); err != nil {
				t.Fatalf("tune2fs -j: %v\n%s", err, out)
			}
			want, _ := openOverlay(t, ref)
			f, _ := openOverlay(t, img)
			if want.SB.JournalInum() != ondisk.JournalIno || f.SB.HasCompat(ondisk.CompatHasJournal) {
				t.Fatal("tune2fs made no journal, or the image has one")
			}

			n := DefaultJournalSize(f.BlocksCount)
			total, fc := JournalParams(f.SB, n)
			if f.SB.HasCompat(ondisk.CompatFastCommit) && fc == 0 {
				t.Fatal("no fast-commit blocks")
			}
			p, ok := PlanJournal(f, diskBlockMap(t, f), total, MidpointJournalBlock(f))
			if !ok {
				t.Fatal("PlanJournal failed")
			}
			if !f.SB.HasIncompat(ondisk.IncompatExtents) && len(p.Meta) == 0 {
				t.Error("a block-mapped journal without mapping blocks")
			}
			var counted []uint64
			const now = 1700000000
			WriteJournal(&Filsys{FS: f, IO: devIO{t, f}}, p, total, fc, now, func(b uint64) { counted = append(counted, b) })
			if len(counted) != len(p.Data)+len(p.Meta) {
				t.Errorf("%d blocks counted, want %d", len(counted), len(p.Data)+len(p.Meta))
			}

			got := readFSInode(t, f, ondisk.JournalIno)
			wn := readFSInode(t, want, ondisk.JournalIno)
			if !bytes.Equal(got.IBlock(), wn.IBlock()) {
				t.Errorf("i_block\n got %x\nwant %x", got.IBlock(), wn.IBlock())
			}
			if got.Size() != wn.Size() || StatIBlocks(f, got) != StatIBlocks(want, wn) || got.Flags() != wn.Flags() ||
				got.Mode() != wn.Mode() || got.LinksCount() != wn.LinksCount() {
				t.Errorf("size %d blocks %d flags %#x mode %o links %d, want %d %d %#x %o %d",
					got.Size(), StatIBlocks(f, got), got.Flags(), got.Mode(), got.LinksCount(),
					wn.Size(), StatIBlocks(want, wn), wn.Flags(), wn.Mode(), wn.LinksCount())
			}
			if got.Mtime() != now || got.Ctime() != now || got.Atime() != now {
				t.Errorf("times %d %d %d, want %d", got.Atime(), got.Ctime(), got.Mtime(), now)
			}
			for _, b := range p.Meta {
				g, w := make([]byte, f.BlockSize), make([]byte, f.BlockSize)
				if f.ReadBlock(b, g) != nil || want.ReadBlock(b, w) != nil || !bytes.Equal(g, w) {
					t.Errorf("mapping block %d differs from tune2fs's", b)
				}
			}
			gj, wj := make([]byte, f.BlockSize), make([]byte, f.BlockSize)
			if f.ReadBlock(p.Data[0], gj) != nil || want.ReadBlock(p.Data[0], wj) != nil {
				t.Fatal("reading the journal superblock")
			}
			if !bytes.Equal(gj[:jbd2.SuperblockSize], wj[:jbd2.SuperblockSize]) {
				t.Errorf("journal superblock\n got %x\nwant %x", gj[:0x60], wj[:0x60])
			}
			for i := 0; i < 17; i++ {
				if f.SB.JnlBlock(i) != want.SB.JnlBlock(i) {
					t.Errorf("s_jnl_blocks[%d] = %d, want %d", i, f.SB.JnlBlock(i), want.SB.JnlBlock(i))
				}
			}
			if f.SB.JournalInum() != ondisk.JournalIno || f.SB.JnlBackupType() != want.SB.JnlBackupType() ||
				f.SB.FeatureCompat() != want.SB.FeatureCompat() {
				t.Errorf("journal inum %d backup type %d compat %#x, want %d %d %#x", f.SB.JournalInum(), f.SB.JnlBackupType(),
					f.SB.FeatureCompat(), want.SB.JournalInum(), want.SB.JnlBackupType(), want.SB.FeatureCompat())
			}
		})
	}
}

// TestPlanJournalNoRoom: a bitmap with no free block, or too fragmented
// for four extents, has no plan.
func TestPlanJournalNoRoom(t *testing.T) {
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 1024, Features: "^has_journal,^metadata_csum,^uninit_bg"})
	f, _ := openOverlay(t, img)
	full := bitmap.New(f.BlocksCount)
	for b := uint64(0); b < f.BlocksCount; b++ {
		full.Set(b)
	}
	if _, ok := PlanJournal(f, full, 1024, MidpointJournalBlock(f)); ok {
		t.Error("planned a journal in a full filesystem")
	}
	holes := diskBlockMap(t, f)
	for b := uint64(0); b < f.BlocksCount; b += 2 {
		holes.Set(b)
	}
	if _, ok := PlanJournal(f, holes, 1024, MidpointJournalBlock(f)); ok {
		t.Error("planned 1024 blocks in four extents over every other block")
	}
	if runs := FreeRuns(f, holes, MidpointJournalBlock(f)); len(runs) < 5 {
		t.Errorf("%d free runs", len(runs))
	}
}

// TestJournalNoSpace: with five free runs, the last of one block, every
// free block is zeroed and counted, and inode 8 keeps the first four
// runs as extents, with the new journal's size and their blocks.
func TestJournalNoSpace(t *testing.T) {
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 1024, Features: "^has_journal,^metadata_csum,^uninit_bg"})
	f, _ := openOverlay(t, img)
	used := bitmap.New(f.BlocksCount)
	for b := uint64(0); b < f.BlocksCount; b++ {
		used.Set(b)
	}
	free := [][2]uint64{{9000, 30}, {12000, 20}, {15000, 10}, {2000, 40}, {5000, 1}}
	for _, r := range free {
		for k := uint64(0); k < r[1]; k++ {
			used.Clear(r[0] + k)
		}
	}
	goal := uint64(8193)
	runs := FreeRuns(f, used, goal)
	if len(runs) != 5 || runs[0] != free[0] || runs[3] != [2]uint64{2000, 40} {
		t.Fatalf("runs %v", runs)
	}
	for _, r := range runs {
		devIO{t, f}.WriteBlock(r[0], bytes.Repeat([]byte{0xEE}, int(f.BlockSize)))
	}
	var counted int
	const n, now = 1024, 1700000000
	ino := readFSInode(t, f, ondisk.JournalIno)
	JournalNoSpace(&Filsys{FS: f, IO: devIO{t, f}}, ino, runs, n, now, func(uint64) { counted++ })
	if counted != 101 {
		t.Errorf("%d blocks counted, want 101", counted)
	}
	got := readFSInode(t, f, ondisk.JournalIno)
	h := ondisk.ExtentHeader(got.IBlock())
	if h.Verify() != nil || h.Entries() != 4 || h.Depth() != 0 {
		t.Fatalf("header magic %#x entries %d depth %d", h.Magic(), h.Entries(), h.Depth())
	}
	lblk := uint32(0)
	for i := 0; i < 4; i++ {
		e := h.Leaf(i)
		if e.Lblk != lblk || e.Pblk != runs[i][0] || uint64(e.Len) != runs[i][1] {
			t.Errorf("extent %d = %+v, want %d+%d at %d", i, e, runs[i][0], runs[i][1], lblk)
		}
		lblk += e.Len
	}
	if got.Size() != n*uint64(f.BlockSize) || StatIBlocks(f, got) != 100*uint64(f.BlockSize/512) ||
		got.Flags()&ondisk.FlagExtents == 0 || got.Mtime() != now || got.LinksCount() != 1 || !got.IsReg() {
		t.Errorf("size %d blocks %d flags %#x mtime %d links %d mode %o", got.Size(), StatIBlocks(f, got),
			got.Flags(), got.Mtime(), got.LinksCount(), got.Mode())
	}
	buf := make([]byte, f.BlockSize)
	for _, r := range runs {
		if err := f.ReadBlock(r[0], buf); err != nil || !bytes.Equal(buf, make([]byte, f.BlockSize)) {
			t.Errorf("block %d not zeroed", r[0])
		}
	}
}
