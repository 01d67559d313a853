package ext2fs

import (
	"bytes"
	"fmt"
	"testing"

	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// TestLinkUnlinkInBlockMatchDebugfs unlinks and links names in a
// directory's one block with UnlinkInBlock and LinkInBlock and compares
// the block with what debugfs's unlink and ln (ext2fs_unlink and
// ext2fs_link) leave on a copy of the image.
func TestLinkUnlinkInBlockMatchDebugfs(t *testing.T) {
	for _, bs := range []int{1024, 4096} {
		t.Run(fmt.Sprint(bs), func(t *testing.T) {
			img := testfs.MkImage(t, testfs.Spec{
				FSType: "ext4", BlockSize: bs, Features: "^metadata_csum",
				Populate: func(tr *testfs.Tree) {
					tr.Dir("d")
					for _, n := range []string{"a", "bb", "ccc", "dddd", "e"} {
						tr.File("d/"+n, 0)
					}
				},
			})
			ref := testfs.CopyImage(t, img)
			aIno := testfs.Ino(t, img, "/d/a")
			testfs.Debugfs(t, ref, "unlink /d/bb", "unlink /d/a", "ln /d/ccc /d/newname", "ln /d/e /d/zz")
			blk := testfs.Bmap(t, img, "/d", 0)
			want := testfs.ReadAt(t, ref, int64(blk)*int64(bs), bs)
			buf := testfs.ReadAt(t, img, int64(blk)*int64(bs), bs)

			for _, name := range []string{"bb", "a"} {
				if done, err := UnlinkInBlock(buf, bs, name, 0, false); !done || err != nil {
					t.Fatalf("unlink %q: %v %v", name, done, err)
				}
			}
			if done, err := UnlinkInBlock(buf, bs, "a", aIno, false); done || err != nil {
				t.Fatalf("unlinking a twice: %v %v", done, err)
			}
			for _, l := range []struct {
				name, target string
			}{{"newname", "/d/ccc"}, {"zz", "/d/e"}} {
				ino := testfs.Ino(t, img, l.target)
				done, changed, err := LinkInBlock(buf, bs, false, l.name, ino, ondisk.FTRegFile)
				if !done || !changed || err != nil {
					t.Fatalf("link %q: %v %v %v", l.name, done, changed, err)
				}
			}
			if !bytes.Equal(buf, want) {
				t.Errorf("block differs from debugfs's:\n got %x\nwant %x", buf[:96], want[:96])
			}
		})
	}
}

// TestDirBlockCorrupt: a damaged entry stops both walks with
// ErrDirCorrupted; a block with no room reports not done.
func TestDirBlockCorrupt(t *testing.T) {
	const bs = 1024
	buf := make([]byte, bs)
	PutDirent(buf, 0, 11, 6, 1, 1, bs) // rec_len below 8
	if _, err := UnlinkInBlock(buf, bs, "x", 0, true); err != ErrDirCorrupted {
		t.Errorf("unlink: %v", err)
	}
	if _, _, err := LinkInBlock(buf, bs, false, "x", 12, 1); err != ErrDirCorrupted {
		t.Errorf("link: %v", err)
	}
	long := string(bytes.Repeat([]byte{'n'}, 255))
	PutDirent(buf, 0, 11, 12, 1, 1, bs)
	for off := 12; off < 792; off += 260 {
		PutDirent(buf, off, 12, 260, 250, 1, bs)
	}
	PutDirent(buf, 792, 12, bs-792, 220, 1, bs)
	if done, _, err := LinkInBlock(buf, bs, false, long, 13, 1); done || err != nil {
		t.Errorf("link into a full block: %v %v", done, err)
	}
}

// TestSetRecLen pins the encoding of 64 KiB blocks.
func TestSetRecLen(t *testing.T) {
	for _, tc := range []struct {
		recLen, bs int
		want       uint16
	}{
		{12, 4096, 12},
		{4096, 4096, 4096},
		{65536, 65536, 0xFFFF},
		{65536 + 4, 1 << 17, 0x0005},
	} {
		b := make([]byte, 8)
		SetRecLen(b, 0, tc.recLen, tc.bs)
		if got := uint16(b[4]) | uint16(b[5])<<8; got != tc.want {
			t.Errorf("SetRecLen(%d, bs %d) = %#x, want %#x", tc.recLen, tc.bs, got, tc.want)
		}
		if tc.bs >= 65536 {
			if got := ondisk.DecodeRecLen(uint16(b[4])|uint16(b[5])<<8, tc.bs); got != tc.recLen {
				t.Errorf("decoded %d, want %d", got, tc.recLen)
			}
		}
	}
}

// TestLinkBlocksMatchDebugfs links a name into a directory of several
// blocks and unlinks one from its last block, and compares every block
// with what debugfs's ln and unlink leave on a copy; a name not there
// and a full directory are ErrDirNoSpace.
func TestLinkBlocksMatchDebugfs(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", BlockSize: 1024, Features: "^metadata_csum,^dir_index",
		Populate: func(tr *testfs.Tree) { tr.ManyFiles("d", 60) }})
	ref := testfs.CopyImage(t, img)
	bm := testfs.Blocks(t, img, "/d")
	if len(bm.Data) < 3 {
		t.Fatalf("directory of %d blocks", len(bm.Data))
	}
	testfs.Debugfs(t, ref, "ln /d/entry-with-a-long-name-00001 /d/newname", "unlink /d/entry-with-a-long-name-00059")
	fsys := openRW(t, img)
	write := func(blk uint64, buf []byte) { fsys.IO.WriteBlock(blk, buf) }
	ino := testfs.Ino(t, img, "/d/entry-with-a-long-name-00001")
	if err := LinkBlocks(fsys, bm.Data, write, "newname", ino, ondisk.FTRegFile); err != nil {
		t.Fatal(err)
	}
	if err := UnlinkBlocks(fsys, bm.Data, write, "entry-with-a-long-name-00059", 0); err != nil {
		t.Fatal(err)
	}
	if err := UnlinkBlocks(fsys, bm.Data, write, "missing", 0); err != ErrDirNoSpace {
		t.Errorf("unlinking a missing name: %v", err)
	}
	if err := LinkBlocks(fsys, bm.Data[:0], write, "x", ino, ondisk.FTRegFile); err != ErrDirNoSpace {
		t.Errorf("linking into no blocks: %v", err)
	}
	for _, b := range bm.Data {
		if !bytes.Equal(testfs.ReadAt(t, img, int64(b)*1024, 1024), testfs.ReadAt(t, ref, int64(b)*1024, 1024)) {
			t.Errorf("block %d differs from debugfs's", b)
		}
	}
}
