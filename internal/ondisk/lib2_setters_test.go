package ondisk

import "testing"

// TestLib2Setters writes fields through the setters of lib2_setters.go
// and reads them back through the decoders.
func TestLib2Setters(t *testing.T) {
	area := make([]byte, 64)
	SetXattrMagic(area)
	if !HasXattrMagic(area) || HasXattrMagic(area[:3]) {
		t.Errorf("magic")
	}
	PutXattrEntry(area, 4, XattrIndexSystem, []byte("data"), 40, 0, 7)
	SetXattrEntryHash(area, 4, 0x1234)
	e, end, ok := DecodeXattrEntry(area, 4)
	if !ok || end || e.NameIndex != XattrIndexSystem || string(e.Name) != "data" || e.ValueOffs != 40 || e.ValueSize != 7 || e.Hash != 0x1234 {
		t.Errorf("entry %+v", e)
	}
	if XattrEndAt(area, 4) || !XattrEndAt(area, 4+e.EntryBytes) {
		t.Errorf("end marker")
	}
	blk := XattrBlock(make([]byte, 1024))
	blk.SetMagic(XattrMagic)
	blk.SetRefcount(3)
	blk.SetBlocks(1)
	blk.SetChecksum(5, 9)
	if blk.Magic() != XattrMagic || blk.Refcount() != 3 || blk.Blocks() != 1 || blk.Checksum() != blk.ComputeChecksum(5, 9) {
		t.Errorf("EA block header")
	}

	sb := Superblock(make([]byte, SuperblockSize))
	sb.SetInodesCount(77)
	sb.SetFlags(FlagTestFS)
	sb.SetUUID([16]byte{1, 2})
	sb.put32(offBlocksCountHi, 4)
	if lo, hi := sb.RawBlocksCount(); sb.InodesCount() != 77 || sb.Flags() != FlagTestFS || sb.UUID() != [16]byte{1, 2} || lo != 0 || hi != 4 {
		t.Errorf("superblock fields")
	}

	n := Inode(make([]byte, 256))
	n.SetExtraIsize(32)
	n.SetCtimeExtra(1)
	n.SetMtimeExtra(2)
	n.SetAtimeExtra(3)
	n.SetCrtimeExtra(4)
	n.SetCrtime(9)
	c, _ := n.CtimeExtra()
	m, _ := n.MtimeExtra()
	a, _ := n.AtimeExtra()
	r, _ := n.CrtimeExtra()
	if c != 1 || m != 2 || a != 3 || r != 4 || n.Crtime() != 9 {
		t.Errorf("extra times %d %d %d %d, crtime %d", c, m, a, r, n.Crtime())
	}

	d := make([]byte, 24)
	SetDirentIno(d, 12, 11)
	SetDirentRawRecLen(d, 12, 12)
	SetDirentFileType(d, 12, 2)
	if DirentIno(d, 12) != 11 || DirentRawRecLen(d, 12) != 12 || d[12+7] != 2 || InlineDirParent([]byte{2, 0, 0, 0}) != 2 || EncryptedSymlinkLen([]byte{5, 0}) != 7 {
		t.Errorf("dirent fields")
	}

	ob := OrphanBlock(make([]byte, 1024))
	ob.SetMagic(OrphanBlockMagic)
	ob.SetChecksum(1, 12, 0, 100)
	if ob.Slots() != 254 || ob.Magic() != OrphanBlockMagic || ob.Checksum() != ob.ComputeChecksum(1, 12, 0, 100) ||
		ob.ComputeChecksum(1, 12, 0, 101) == ob.Checksum() {
		t.Errorf("orphan block tail")
	}
}
