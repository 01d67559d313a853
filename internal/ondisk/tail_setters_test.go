package ondisk_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// TestDirTailSettersMatchMke2fs rebuilds the checksum tail of the root
// directory's leaf block, which mke2fs wrote with metadata_csum, and the
// dx tail of a directory e2fsck -D indexed: InitDirTail and the checksum
// setters must give back the blocks as written, and the checksums must be
// the ones DirLeafChecksum and DxChecksum compute.
func TestDirTailSettersMatchMke2fs(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 8 << 20, BlockSize: 1024,
		Populate: func(tr *testfs.Tree) { tr.ManyFiles("d", 300) }})
	testfs.E2fsckInPlace(t, img, "-fyD")
	bs := int(testfs.BlockSize(t, img))
	sb := ondisk.Superblock(testfs.ReadAt(t, img, ondisk.SuperblockOffset, ondisk.SuperblockSize))
	seed := sb.CsumSeed()
	read := func(b uint64) []byte { return testfs.ReadAt(t, img, int64(b)*int64(bs), bs) }
	gen := func(path string) uint32 {
		return ondisk.Inode(testfs.ReadAt(t, img, testfs.InodeOffset(t, img, path), 256)).Generation()
	}

	root := read(testfs.Blocks(t, img, "/").Data[0])
	stored, ok := ondisk.DirTail(root)
	if !ok {
		t.Fatal("mke2fs's root block has no checksum tail")
	}
	if sum := ondisk.DirLeafChecksum(root, seed, ondisk.RootIno, gen("<2>")); sum != stored {
		t.Fatalf("root leaf checksum %#x, stored %#x", sum, stored)
	}
	got := bytes.Clone(root)
	clear(got[bs-ondisk.DirTailSize:])
	ondisk.InitDirTail(got)
	if s, ok := ondisk.DirTail(got); !ok || s != 0 {
		t.Fatalf("InitDirTail: tail ok=%v checksum %#x", ok, s)
	}
	ondisk.SetDirTailChecksum(got, stored)
	if !bytes.Equal(got, root) {
		t.Errorf("rebuilt root leaf differs from mke2fs's")
	}

	dx := read(testfs.Blocks(t, img, "/d").Data[0])
	const countOff = 0x20 // after '.', '..' and dx_root_info
	limit, count, ok := ondisk.DxCountLimit(dx, countOff)
	if !ok || count < 2 {
		t.Fatalf("e2fsck -D root: limit %d count %d ok %v", limit, count, ok)
	}
	ino := uint32(testfs.Ino(t, img, "/d"))
	sum, stored, ok := ondisk.DxChecksum(dx, countOff, limit, count, seed, ino, gen("/d"))
	if !ok || sum != stored {
		t.Fatalf("dx checksum %#x, stored %#x (ok %v)", sum, stored, ok)
	}
	got = bytes.Clone(dx)
	clear(got[countOff+limit*ondisk.DxEntrySize+4:][:4])
	ondisk.SetDxTailChecksum(got, countOff, limit, sum)
	if !bytes.Equal(got, dx) {
		t.Errorf("rebuilt dx tail differs from e2fsck's")
	}
}

// TestStampSetters sets s_mtime as debugfs does, and checks s_wtime and
// both high bytes (s_wtime_hi 0x274, s_mtime_hi 0x275 in struct
// ext2_super_block) directly: the library rewrites s_wtime itself when
// debugfs closes the filesystem.
func TestStampSetters(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Features: "^metadata_csum,^has_journal"})
	read := func() ondisk.Superblock {
		return testfs.ReadAt(t, img, ondisk.SuperblockOffset, ondisk.SuperblockSize)
	}
	sb := read()
	sb[0x275] = 3 // a high byte the setter must clear
	testfs.Debugfs(t, img, "ssv mtime @287454020")
	want := read()
	sb.SetMtimeStamp(287454020)
	sb.SetWtime(want.Wtime())
	sb.SetKbytesWritten(want.KbytesWritten())
	sb[0x274] = want[0x274]
	diffBytes(t, "superblock", sb, want)

	s := make(ondisk.Superblock, ondisk.SuperblockSize)
	s[0x274], s[0x275] = 1, 1
	s.SetWtimeStamp(0x01020304)
	if s.Wtime() != 0x01020304 || s[0x274] != 0 || s[0x275] != 1 {
		t.Errorf("SetWtimeStamp: wtime %#x, hi bytes %d %d", s.Wtime(), s[0x274], s[0x275])
	}
	short := make(ondisk.Superblock, 0x100)
	short.SetMtimeStamp(5) // too short for the high byte: left as it is
	if binary.LittleEndian.Uint32(short[0x2C:]) != 0 {
		t.Errorf("SetMtimeStamp wrote into a short superblock")
	}
}

// TestOrphanSlot reads slot i at byte 4*i of an orphan file block.
func TestOrphanSlot(t *testing.T) {
	b := ondisk.OrphanBlock(make([]byte, 1024))
	binary.LittleEndian.PutUint32(b[8:], 77)
	if b.Slot(2) != 77 || b.Slot(1) != 0 || b.Slots() != (1024-ondisk.OrphanTailSize)/4 {
		t.Errorf("slot 2 %d, slot 1 %d, slots %d", b.Slot(2), b.Slot(1), b.Slots())
	}
}
