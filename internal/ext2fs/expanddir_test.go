package ext2fs

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"gofsck/internal/freefrag"
	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// libExpand is ext2fs_expand_dir over fsys: one empty block more in dir,
// i_size one block longer.
func libExpand(t *testing.T, fsys *Filsys, dir uint32) {
	t.Helper()
	f := fsys.FS
	n := readInode(t, fsys, dir)
	es := &DirExpander{Fsys: fsys, IO: fsys.IO, Dir: dir, Num: 1, Lib: true,
		NewDirBlock: func(blk uint64) {
			b := make([]byte, f.BlockSize)
			SetRecLen(b, 0, f.BlockSize, f.BlockSize)
			fsys.IO.WriteBlock(blk, b)
		}}
	if err := es.Expand(n); err != nil || es.Num != 0 {
		t.Fatalf("Expand: %v (num %d)", err, es.Num)
	}
	n.SetSize(n.Size() + uint64(f.BlockSize))
	if err := IblkAddBlocks(f, n, uint64(es.NewBlocks)); err != nil {
		t.Fatal(err)
	}
	fsys.IO.WriteInode(dir, n)
}

// TestDirExpanderLikeDebugfs grows a block-mapped directory past its
// direct blocks (the indirect block is allocated) and an extent-mapped
// one, block by block, and compares the inode, its blocks and the block
// bitmap with what debugfs's expand_dir leaves on a copy.
func TestDirExpanderLikeDebugfs(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	for _, tc := range []struct {
		fstype string
		times  int
	}{{"ext2", 13}, {"ext4", 4}} {
		t.Run(tc.fstype, func(t *testing.T) {
			img := testfs.MkImage(t, testfs.Spec{FSType: tc.fstype, Size: 8 << 20, BlockSize: 1024, Features: "^metadata_csum",
				Populate: func(tr *testfs.Tree) { tr.Dir("d"); tr.File("d/f", 3000) }})
			ref := testfs.CopyImage(t, img)
			var cmds []string
			for range tc.times {
				cmds = append(cmds, "expand_dir /d")
			}
			testfs.Debugfs(t, ref, cmds...)
			dir := testfs.Ino(t, img, "/d")
			fsys := openRW(t, img)
			for range tc.times {
				libExpand(t, fsys, dir)
			}
			got, want := readInode(t, fsys, dir), readFSInode(t, openRW(t, ref).FS, dir)
			if !bytes.Equal(got[:ondisk.GoodOldInodeSize], want[:ondisk.GoodOldInodeSize]) {
				t.Errorf("inode differs:\n got %x\nwant %x", got[:ondisk.GoodOldInodeSize], want[:ondisk.GoodOldInodeSize])
			}
			if bm := testfs.Blocks(t, img, "/d"); len(bm.Data) != 1+tc.times || tc.fstype == "ext2" && len(bm.Ind) != 1 {
				t.Errorf("expanded to %v %v", bm.Data, bm.Ind)
			}
			compareBlocks(t, img, ref, "/d", fsys)
		})
	}
}

// compareBlocks compares the blocks of file in img and ref (the same
// numbers, the same bytes) and fsys's block bitmap with ref's.
func compareBlocks(t *testing.T, img, ref, file string, fsys *Filsys) {
	t.Helper()
	gm, wm := testfs.Blocks(t, img, file), testfs.Blocks(t, ref, file)
	if !slices.Equal(gm.Data, wm.Data) || !slices.Equal(gm.Meta, wm.Meta) {
		t.Fatalf("blocks %v %v, debugfs %v %v", gm.Data, gm.Meta, wm.Data, wm.Meta)
	}
	bs := int(testfs.BlockSize(t, img))
	for _, b := range append(gm.Data, gm.Meta...) {
		if !bytes.Equal(testfs.ReadAt(t, img, int64(b)*int64(bs), bs), testfs.ReadAt(t, ref, int64(b)*int64(bs), bs)) {
			t.Errorf("block %d differs", b)
		}
	}
	rm, err := freefrag.ReadBlockBitmap(openRW(t, ref).FS)
	if err != nil {
		t.Fatal(err)
	}
	bm := fsys.Alloc.(*diskAlloc).bm
	for cl := uint64(0); cl < rm.Len(); cl++ {
		if bm.Test(cl) != rm.Test(cl) {
			t.Errorf("cluster %d: in use %v, debugfs %v", cl, bm.Test(cl), rm.Test(cl))
		}
	}
}

// TestPunchIndLikeDebugfs punches a sparse block-mapped file from a
// block in its doubly indirect range on, and compares it with debugfs's
// punch (ext2fs_punch) on a copy.
func TestPunchIndLikeDebugfs(t *testing.T) {
	img, ino := blockMapImage(t)
	for _, start := range []uint64{5, 300, 70000} {
		t.Run(fmt.Sprint(start), func(t *testing.T) {
			mine, ref := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
			testfs.Debugfs(t, ref, fmt.Sprintf("punch /big %d", start))
			fsys := openRW(t, mine)
			n := readInode(t, fsys, ino)
			if err := Punch(fsys, ino, n, start); err != nil {
				t.Fatal(err)
			}
			fsys.IO.WriteInode(ino, n)
			if StatIBlocks(fsys.FS, n) >= StatIBlocks(fsys.FS, readFSInode(t, openRW(t, img).FS, ino)) {
				t.Error("nothing punched")
			}
			want := readFSInode(t, openRW(t, ref).FS, ino)
			if !bytes.Equal(n[:ondisk.GoodOldInodeSize], want[:ondisk.GoodOldInodeSize]) {
				t.Errorf("inode differs:\n got %x\nwant %x", n[:ondisk.GoodOldInodeSize], want[:ondisk.GoodOldInodeSize])
			}
			compareBlocks(t, mine, ref, "/big", fsys)
		})
	}
}
