package ext2fs

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// TestInlineDataSet reads the attributes of an inline-data file that
// mke2fs -d wrote (system.data in the inode body, a user attribute
// beside it), rewrites its data through InlineDataSet with a longer value
// and checks what debugfs reads back and that e2fsck finds the image
// clean; a size past the inode body's room is ErrInlineDataNoSpace.
func TestInlineDataSet(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	old := bytes.Repeat([]byte("0123456789"), 8) // 80 bytes: 60 in i_block, 20 in system.data
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Features: "inline_data,metadata_csum", InodeSize: 256,
		Populate: func(tr *testfs.Tree) {
			tr.FileData("f", old)
			tr.Xattr("f", "user.k", "v")
		}})
	ino := testfs.Ino(t, img, "/f")
	fsys := openRW(t, img)
	n := readInode(t, fsys, ino)
	if r := XattrsReadInode(fsys.FS, n, false); r != XattrReadOK {
		t.Fatalf("XattrsReadInode: %d", r)
	}
	attrs, ibody, err := ReadXattrs(fsys.FS, n)
	if err != nil || ibody != len(attrs) {
		t.Fatalf("ReadXattrs: %d of %d in the body, %v", ibody, len(attrs), err)
	}
	i := FindSystemData(attrs)
	if i < 0 || !bytes.Equal(attrs[i].Value, old[60:]) {
		t.Fatalf("system.data at %d in %+v", i, attrs)
	}
	if v, ok := FindInodeXattr(n, 1, "k"); !ok || string(v) != "v" {
		t.Errorf("user.k: %q, %v", v, ok)
	}
	data := bytes.Repeat([]byte("abcdefghij"), 10)
	if err := InlineDataSet(fsys, ino, data, len(data)); err != nil {
		t.Fatal(err)
	}
	n = readInode(t, fsys, ino)
	n.SetSize(uint64(len(data)))
	fsys.IO.WriteInode(ino, n)
	if got := testfs.DebugfsRO(t, img, "cat /f"); !strings.HasSuffix(got, "\n"+string(data)) {
		t.Errorf("debugfs cat: %q, want %q", got, data)
	}
	if got := testfs.DebugfsRO(t, img, "ea_get /f user.k"); !strings.Contains(got, "v") {
		t.Errorf("user.k after the rewrite: %q", got)
	}
	if out, err := exec.Command("e2fsck", "-fn", img).CombinedOutput(); err != nil {
		t.Errorf("e2fsck -fn: %v\n%s", err, out)
	}
	big := make([]byte, 400)
	if err := InlineDataSet(fsys, ino, big, len(big)); !errors.Is(err, ErrInlineDataNoSpace) {
		t.Errorf("400 bytes: %v, want ErrInlineDataNoSpace", err)
	}
	if max, err := XattrInodeMaxSize(readInode(t, fsys, ino)); err != nil || max >= 400-ondisk.IBlockSize {
		t.Errorf("XattrInodeMaxSize: %d, %v", max, err)
	}
}

// TestReadExtAttr reads the EA block mke2fs -d gave a file with a large
// attribute, then the same block with a bad magic and with a changed
// value byte (a bad checksum under metadata_csum).
func TestReadExtAttr(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Features: "metadata_csum", InodeSize: 256,
		Populate: func(tr *testfs.Tree) {
			tr.File("f", 10)
			tr.XattrSize("f", "user.big", 600)
		}})
	f, _ := openOverlay(t, img)
	blk := testfs.Blocks(t, img, "/f").FileACL
	buf := make([]byte, f.BlockSize)
	if blk == 0 || ReadExtAttr(f, blk, buf) != nil {
		t.Fatalf("EA block %d: %v", blk, ReadExtAttr(f, blk, buf))
	}
	if v, ok := FindBlockXattr(f, readFSInode(t, f, testfs.Ino(t, img, "/f")), 1, "big"); !ok || len(v) != 600 {
		t.Errorf("user.big: %d bytes, %v", len(v), ok)
	}
	for _, tc := range []struct {
		off  int
		want error
	}{{0, ErrBadEAHeader}, {f.BlockSize - 1, ErrExtAttrCsumInvalid}} {
		bad := append([]byte(nil), buf...)
		bad[tc.off] ^= 0xFF
		if _, err := f.Dev.WriteAt(bad, int64(blk)<<f.BlockBits); err != nil {
			t.Fatal(err)
		}
		if err := ReadExtAttr(f, blk, make([]byte, f.BlockSize)); err != tc.want {
			t.Errorf("byte %d changed: %v, want %v", tc.off, err, tc.want)
		}
	}
}
