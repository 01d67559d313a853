package ext2fs

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// TestReadBBFile reads a list as ext2fs_read_bb_FILE does: blanks and a
// sign before the number, junk lines skipped, duplicates dropped, a
// number outside the filesystem given to the callback, and a 33-bit
// number failing with EOVERFLOW.
func TestReadBBFile(t *testing.T) {
	var list BadBlocksList
	var invalid []uint32
	err := ReadBBFile(strings.NewReader("  30\n+20 x\njunk\n30\n5000\n0\n"), &list, 1, 4096,
		func(b uint32) { invalid = append(invalid, b) })
	if err != nil || fmt.Sprint(list.Sorted()) != "[20 30]" || fmt.Sprint(invalid) != "[5000 0]" {
		t.Errorf("list %v, invalid %v, %v", list.Sorted(), invalid, err)
	}
	if err := ReadBBFile(strings.NewReader("4294967296\n"), &list, 1, 4096, func(uint32) {}); !errors.Is(err, ErrOverflow) {
		t.Errorf("33-bit number: %v, want ErrOverflow", err)
	}
}

// TestUpdateBBInode maps 20 free blocks into inode 1 of an ext2 image
// (twelve direct, the rest through a new indirect block) and reads them
// back with ReadBBInode and with dumpe2fs -b; the walk's budget stops a
// second read.
func TestUpdateBBInode(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext2", Size: 4 << 20, BlockSize: 1024})
	fsys := openRW(t, img)
	used := diskBlockMap(t, fsys.FS)
	var list []uint64
	for b := uint64(2000); b < 2020; b++ {
		list = append(list, b)
	}
	stats := func(blk uint64, inuse int) {
		if inuse > 0 {
			used.Set(blk)
		} else {
			used.Clear(blk)
		}
	}
	w := &BBWalk{Fsys: fsys, Budget: 1 << 20}
	n := readInode(t, fsys, 1)
	w.UpdateBBInode(n, list, used, stats, 1234)
	if w.Err != nil {
		t.Fatal(w.Err)
	}
	n = readInode(t, fsys, 1)
	if n.Size() != 20*1024 || n.Mtime() != 1234 || n.Block(12) == 0 || !used.Test(uint64(n.Block(12))) {
		t.Errorf("size %d, mtime %d, indirect block %d", n.Size(), n.Mtime(), n.Block(12))
	}
	var got BadBlocksList
	if w.ReadBBInode(n, &got); w.Err != nil || fmt.Sprint(got.Sorted()) != fmt.Sprint(list) {
		t.Errorf("ReadBBInode: %v, %v", got.Sorted(), w.Err)
	}
	out := testfs.DebugfsRO(t, img, "stat <1>")
	if !strings.Contains(out, "(0-11):2000-2011, (IND):") || !strings.Contains(out, "(12-19):2012-2019") {
		t.Errorf("debugfs stat <1>:\n%s", out)
	}
	w.Budget = 3
	if w.ReadBBInode(n, &got); !errors.Is(w.Err, ErrBBWalkBudget) {
		t.Errorf("budget 3: %v, want ErrBBWalkBudget", w.Err)
	}
}
