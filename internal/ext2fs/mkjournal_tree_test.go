package ext2fs

import (
	"bytes"
	"fmt"
	"os/exec"
	"testing"

	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// TestJournalTreeLikeTune2fs fragments the free space of mke2fs images
// made without a journal (one block in every stride taken with debugfs
// setb) so that the default journal needs an extent tree, creates it,
// and compares it with what tune2fs -j makes of the same image: inode
// 8's i_block, size, i_blocks and flags, every extent tree block, the
// journal superblock and s_jnl_blocks.
func TestJournalTreeLikeTune2fs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spec   testfs.Spec
		stride uint64
		depth  uint16 // of the tree tune2fs makes
	}{
		{"1k-depth1", testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 1024, Features: "^has_journal,^metadata_csum,^uninit_bg"}, 8, 1},
		{"1k-every-other", testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 1024, Features: "^has_journal,^metadata_csum,^uninit_bg"}, 2, 2},
		{"4k", testfs.Spec{FSType: "ext4", Size: 64 << 20, BlockSize: 4096, Features: "^has_journal,^metadata_csum,^uninit_bg"}, 5, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := testfs.MkImage(t, tc.spec)
			{
				f, _ := openOverlay(t, img)
				var cmds []string
				for b := f.FirstDataBlock; b < f.BlocksCount; b += tc.stride {
					cmds = append(cmds, fmt.Sprintf("setb %d", b))
				}
				testfs.Debugfs(t, img, cmds...)
			}
			ref := testfs.CopyImage(t, img)
			if out, err := exec.Command("tune2fs", "-j", ref).CombinedOutput(); err != nil {
				t.Fatalf("tune2fs -j: %v\n%s", err, out)
			}
			want, _ := openOverlay(t, ref)
			f, _ := openOverlay(t, img)

			total, fc := JournalParams(f.SB, DefaultJournalSize(f.BlocksCount))
			used := diskBlockMap(t, f)
			goal := MidpointJournalBlock(f)
			if _, ok := PlanJournal(f, used, total, goal); ok {
				t.Fatal("the journal fits in four extents: no tree to test")
			}
			io := devIO{t, f}
			stats := func(b uint64) { used.Set(f.ClusterOf(b)) }
			const now = 1700000000
			if !CreateJournalTree(&Filsys{FS: f, IO: io}, io, used, total, fc, goal, now, stats) {
				t.Fatal("CreateJournalTree failed")
			}

			got := readFSInode(t, f, ondisk.JournalIno)
			wn := readFSInode(t, want, ondisk.JournalIno)
			if !bytes.Equal(got.IBlock(), wn.IBlock()) {
				t.Errorf("i_block\n got %x\nwant %x", got.IBlock(), wn.IBlock())
			}
			if got.Size() != wn.Size() || StatIBlocks(f, got) != StatIBlocks(want, wn) || got.Flags() != wn.Flags() {
				t.Errorf("size %d blocks %d flags %#x, want %d %d %#x", got.Size(), StatIBlocks(f, got), got.Flags(),
					wn.Size(), StatIBlocks(want, wn), wn.Flags())
			}
			h := ondisk.ExtentHeader(got.IBlock())
			if h.Depth() != tc.depth {
				t.Errorf("tree depth %d, want %d", h.Depth(), tc.depth)
			}
			// Every tree block, walking both trees together.
			var walk func(g, w ondisk.ExtentHeader)
			walk = func(g, w ondisk.ExtentHeader) {
				if g.Depth() == 0 {
					return
				}
				for i := 0; i < int(g.Entries()); i++ {
					b := g.Entry(i).Leaf()
					gb, wb := make([]byte, f.BlockSize), make([]byte, f.BlockSize)
					if f.ReadBlock(b, gb) != nil || want.ReadBlock(b, wb) != nil {
						t.Fatalf("reading tree block %d", b)
					}
					if !bytes.Equal(gb, wb) {
						t.Errorf("tree block %d differs from tune2fs's", b)
						continue
					}
					walk(ondisk.ExtentHeader(gb), ondisk.ExtentHeader(wb))
				}
			}
			walk(h, ondisk.ExtentHeader(wn.IBlock()))
			for i := 0; i < 17; i++ {
				if f.SB.JnlBlock(i) != want.SB.JnlBlock(i) {
					t.Errorf("s_jnl_blocks[%d] = %d, want %d", i, f.SB.JnlBlock(i), want.SB.JnlBlock(i))
				}
			}
		})
	}
}
