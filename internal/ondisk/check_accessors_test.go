package ondisk_test

import (
	"encoding/binary"
	"testing"

	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// TestCheckSetterOffsets stores through each setter of check_accessors.go
// into a zeroed structure and finds the value at the field's offset in
// struct ext2_inode / ext2_super_block (lib/ext2fs/ext2_fs.h), with every
// other byte left zero; the matching accessor reads it back.
func TestCheckSetterOffsets(t *testing.T) {
	for _, c := range []struct {
		name      string
		size, off int
		width     int // bytes; the value written is 0x01020304 cut to width
		set       func(b []byte, v uint32)
		get       func(b []byte) uint32 // nil: no single-field accessor
	}{
		{"i_size_high", 256, 0x6C, 4, func(b []byte, v uint32) { ondisk.Inode(b).SetSizeHigh(v) },
			func(b []byte) uint32 { return ondisk.Inode(b).SizeHigh() }},
		{"i_obso_faddr", 256, 0x70, 4, func(b []byte, v uint32) { ondisk.Inode(b).SetFaddr(v) },
			func(b []byte) uint32 { return ondisk.Inode(b).Faddr() }},
		{"h_i_frag", 256, 0x74, 1, func(b []byte, v uint32) { ondisk.Inode(b).SetHurdFrag(uint8(v)) },
			func(b []byte) uint32 { return uint32(ondisk.Inode(b).HurdFrag()) }},
		{"h_i_fsize", 256, 0x75, 1, func(b []byte, v uint32) { ondisk.Inode(b).SetHurdFsize(uint8(v)) },
			func(b []byte) uint32 { return uint32(ondisk.Inode(b).HurdFsize()) }},
		{"l_i_file_acl_high", 256, 0x76, 2, func(b []byte, v uint32) { ondisk.Inode(b).SetFileACLHi(uint16(v)) },
			func(b []byte) uint32 { return uint32(ondisk.Inode(b).FileACLHi()) }},
		{"s_checksum_seed", ondisk.SuperblockSize, 0x270, 4,
			func(b []byte, v uint32) { ondisk.Superblock(b).SetChecksumSeedField(v) },
			func(b []byte) uint32 { return ondisk.Superblock(b).ChecksumSeedField() }},
		{"s_min_extra_isize", ondisk.SuperblockSize, 0x15C, 2,
			func(b []byte, v uint32) { ondisk.Superblock(b).SetMinExtraIsize(uint16(v)) },
			func(b []byte) uint32 { return uint32(ondisk.Superblock(b).MinExtraIsize()) }},
		{"s_want_extra_isize", ondisk.SuperblockSize, 0x15E, 2,
			func(b []byte, v uint32) { ondisk.Superblock(b).SetWantExtraIsize(uint16(v)) },
			func(b []byte) uint32 { return uint32(ondisk.Superblock(b).WantExtraIsize()) }},
		{"s_reserved_gdt_blocks", ondisk.SuperblockSize, 0xCE, 2,
			func(b []byte, v uint32) { ondisk.Superblock(b).SetReservedGdtBlocks(uint16(v)) },
			func(b []byte) uint32 { return uint32(ondisk.Superblock(b).ReservedGdtBlocks()) }},
		{"s_usr_quota_inum", ondisk.SuperblockSize, 0x240, 4,
			func(b []byte, v uint32) { ondisk.Superblock(b).SetQuotaInum(ondisk.UsrQuota, v) },
			func(b []byte) uint32 { return ondisk.Superblock(b).UsrQuotaInum() }},
		{"s_grp_quota_inum", ondisk.SuperblockSize, 0x244, 4,
			func(b []byte, v uint32) { ondisk.Superblock(b).SetQuotaInum(ondisk.GrpQuota, v) },
			func(b []byte) uint32 { return ondisk.Superblock(b).QuotaInum(ondisk.GrpQuota) }},
		{"s_prj_quota_inum", ondisk.SuperblockSize, 0x26C, 4,
			func(b []byte, v uint32) { ondisk.Superblock(b).SetQuotaInum(ondisk.PrjQuota, v) },
			func(b []byte) uint32 { return ondisk.Superblock(b).PrjQuotaInum() }},
		{"rec_len", 16, 4 + 4, 2, func(b []byte, v uint32) { ondisk.SetDirentRawRecLen(b, 4, uint16(v)) },
			func(b []byte) uint32 { return uint32(ondisk.DirentRawRecLen(b, 4)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := make([]byte, c.size)
			v := uint32(0x01020304) & (1<<(8*c.width) - 1)
			c.set(b, v)
			want := make([]byte, c.size)
			var w [4]byte
			binary.LittleEndian.PutUint32(w[:], v)
			copy(want[c.off:], w[:c.width])
			diffBytes(t, "set", b, want)
			if got := c.get(b); got != v {
				t.Errorf("accessor = %#x, want %#x", got, v)
			}
		})
	}
}

// TestCheckAccessors covers the accessors that span fields or read past a
// directory entry's header, and their refusals on short buffers.
func TestCheckAccessors(t *testing.T) {
	n := ondisk.Inode(make([]byte, 256))
	n.SetEARefCount(0x1122334455667788)
	// ext2fs_set_ea_inode_ref: high word in i_ctime (0x0C), low in
	// osd1.l_i_version (0x24).
	if binary.LittleEndian.Uint32(n[0x0C:]) != 0x11223344 || binary.LittleEndian.Uint32(n[0x24:]) != 0x55667788 ||
		n.EARefCount() != 0x1122334455667788 {
		t.Errorf("EA ref count: ctime %#x version %#x, read %#x", n.Ctime(), n.Version(), n.EARefCount())
	}

	sb := ondisk.Superblock(make([]byte, ondisk.SuperblockSize))
	sb.SetQuotaInum(ondisk.MaxQuotas, 9)
	sb.SetQuotaInum(-1, 9)
	if sb.QuotaInum(ondisk.MaxQuotas) != 0 || sb.QuotaInum(-1) != 0 || string(sb) != string(make([]byte, ondisk.SuperblockSize)) {
		t.Error("an unknown quota type was stored or read")
	}

	// A block with an entry at 12 whose 5-byte name is padded to 8: its
	// hashes sit at 12+8+8.
	blk := make([]byte, 40)
	binary.LittleEndian.PutUint16(blk[12+4:], 28)
	if got := ondisk.DirentRecLen(blk, 12, 4096); got != 28 {
		t.Errorf("DirentRecLen = %d, want 28", got)
	}
	ondisk.SetDirentHashes(blk, 12, 5, 0xAABBCCDD, 0x01020304)
	if binary.LittleEndian.Uint32(blk[28:]) != 0xAABBCCDD || binary.LittleEndian.Uint32(blk[32:]) != 0x01020304 {
		t.Errorf("hashes stored at the wrong place: %x", blk)
	}
	if h, m, ok := ondisk.DirentHashes(blk, 12, 5); !ok || h != 0xAABBCCDD || m != 0x01020304 {
		t.Errorf("DirentHashes = %#x %#x %v", h, m, ok)
	}
	if h, ok := ondisk.DirentHash(blk[:32], 12, 5); !ok || h != 0xAABBCCDD {
		t.Errorf("DirentHash with the minor hash cut off = %#x %v", h, ok)
	}
	if _, _, ok := ondisk.DirentHashes(blk[:35], 12, 5); ok {
		t.Error("DirentHashes read past the buffer")
	}
	if _, ok := ondisk.DirentHash(blk[:31], 12, 5); ok {
		t.Error("DirentHash read past the buffer")
	}
	short := make([]byte, 35)
	ondisk.SetDirentHashes(short, 12, 5, 1, 1)
	if string(short) != string(make([]byte, 35)) {
		t.Error("SetDirentHashes wrote a partial hash")
	}

	if got := ondisk.InlineDirParent([]byte{2, 0, 0, 0, 9}); got != 2 {
		t.Errorf("InlineDirParent = %d, want 2", got)
	}
	if got := ondisk.InlineDirParent([]byte{2, 0, 0}); got != 0 {
		t.Errorf("InlineDirParent of 3 bytes = %d, want 0", got)
	}

	ea := binary.LittleEndian.AppendUint32(nil, ondisk.XattrMagic)
	if !ondisk.HasIbodyXattrHeader(ea) || ondisk.HasIbodyXattrHeader(ea[:3]) || ondisk.HasIbodyXattrHeader(nil) ||
		ondisk.HasIbodyXattrHeader([]byte{0, 0, 1, 0xEA}) {
		t.Error("HasIbodyXattrHeader misjudges the in-inode header")
	}
	if ondisk.DirentHashSize != 8 || ondisk.InlineDotDotSize != 4 || ondisk.DxBlockMask != 0x0FFFFFFF {
		t.Error("directory layout constants differ from EXT2_DIR_ENTRY_HASH_LEN, EXT4_INLINE_DATA_DOTDOT_SIZE, dx_get_block")
	}
}

// TestCheckSettersMatchDebugfs sets fields with debugfs (set_inode_field,
// set_super_value) and the same values with the setters on the image's
// bytes from before: both must give the same inodes and superblock.
func TestCheckSettersMatchDebugfs(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Features: "^metadata_csum,^has_journal"})
	off2, off3 := testfs.InodeOffset(t, img, "<2>"), testfs.InodeOffset(t, img, "<3>")
	const isize = 256
	read := func() (ondisk.Superblock, ondisk.Inode, ondisk.Inode) {
		return testfs.ReadAt(t, img, ondisk.SuperblockOffset, ondisk.SuperblockSize),
			testfs.ReadAt(t, img, off2, isize), testfs.ReadAt(t, img, off3, isize)
	}
	sb, n2, n3 := read()
	testfs.Debugfs(t, img, "sif <2> faddr 0x01020304", "sif <2> frag 7", "sif <2> fsize 9",
		"sif <3> ctime @287454020", "sif <3> version 0x55667788",
		"ssv checksum_seed 0xdeadbeef", "ssv usr_quota_inum 21", "ssv grp_quota_inum 22", "ssv prj_quota_inum 23",
		"ssv min_extra_isize 12", "ssv want_extra_isize 16", "ssv reserved_gdt_blocks 5")
	wantSB, want2, want3 := read()

	n2.SetFaddr(0x01020304)
	n2.SetHurdFrag(7)
	n2.SetHurdFsize(9)
	n3.SetEARefCount(287454020<<32 | 0x55667788)
	sb.SetChecksumSeedField(0xdeadbeef)
	for i, v := range []uint32{21, 22, 23} {
		sb.SetQuotaInum(ondisk.UsrQuota+i, v)
	}
	sb.SetMinExtraIsize(12)
	sb.SetWantExtraIsize(16)
	sb.SetReservedGdtBlocks(5)
	// What the library updates itself when it closes the filesystem.
	sb.SetWtime(wantSB.Wtime())
	sb.SetKbytesWritten(wantSB.KbytesWritten())
	for _, c := range []struct {
		name      string
		got, want []byte
	}{{"inode 2", n2, want2}, {"inode 3", n3, want3}, {"superblock", sb, wantSB}} {
		diffBytes(t, c.name, c.got, c.want)
	}
}

// diffBytes reports each byte where got and want (of one length) differ.
func diffBytes(t *testing.T, name string, got, want []byte) {
	t.Helper()
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: byte %#x is %#02x, want %#02x", name, i, got[i], want[i])
		}
	}
}
