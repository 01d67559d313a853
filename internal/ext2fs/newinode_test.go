package ext2fs

import (
	"encoding/binary"
	"testing"

	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// TestNewInode builds new inodes of 256 and 128 bytes from a base with
// one time set and bytes past its first 128: the set time stays, the
// zero ones become now, the large part is zero but i_extra_isize 32 and
// i_crtime; a small inode gets neither.
func TestNewInode(t *testing.T) {
	base := ondisk.Inode(make([]byte, 256))
	base.SetMode(ondisk.SIFREG | 0o600)
	base.SetMtime(7)
	for i := ondisk.GoodOldInodeSize; i < len(base); i++ {
		base[i] = 0xFF
	}
	const now = 1000
	n := NewInode(&fs.FS{InodeSize: 256}, base, now)
	if len(n) != 256 || n.Mode() != ondisk.SIFREG|0o600 {
		t.Fatalf("%d bytes, mode %o", len(n), n.Mode())
	}
	if n.Atime() != now || n.Ctime() != now || n.Mtime() != 7 {
		t.Errorf("times %d %d %d, want %d %d 7", n.Atime(), n.Ctime(), n.Mtime(), now, now)
	}
	if n.ExtraIsize() != 32 {
		t.Errorf("i_extra_isize %d, want 32", n.ExtraIsize())
	}
	if id, ok := n.Projid(); !ok || id != 0 {
		t.Errorf("i_projid %d, %v; want 0, true", id, ok)
	}
	want := make([]byte, 256-ondisk.GoodOldInodeSize)
	want[0] = 32                                                            // i_extra_isize
	binary.LittleEndian.PutUint32(want[0x90-ondisk.GoodOldInodeSize:], now) // i_crtime
	if got := n[ondisk.GoodOldInodeSize:]; string(got) != string(want) {
		t.Errorf("large part % x, want % x", got, want)
	}
	if base.Atime() != 0 {
		t.Errorf("base changed")
	}
	small := NewInode(&fs.FS{InodeSize: ondisk.GoodOldInodeSize}, base, now)
	if len(small) != ondisk.GoodOldInodeSize || small.ExtraIsize() != 0 || small.Atime() != now {
		t.Errorf("128-byte inode: %d bytes, extra isize %d, atime %d", len(small), small.ExtraIsize(), small.Atime())
	}
}
