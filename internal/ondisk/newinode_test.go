package ondisk

import "testing"

// TestNewInodeSetters writes a new inode's times, i_extra_isize and
// i_crtime at their offsets, leaves a 128-byte inode's missing fields
// alone, reads i_projid only where i_extra_isize covers it, and stores
// the superblock's quota inodes where their getters read them.
func TestNewInodeSetters(t *testing.T) {
	n := Inode(make([]byte, 256))
	n.SetAtime(1)
	n.SetCtime(2)
	n.SetMtime(3)
	n.SetExtraIsize(32)
	n.SetCrtime(4)
	if n.Atime() != 1 || n.Ctime() != 2 || n.Mtime() != 3 || n.ExtraIsize() != 32 {
		t.Errorf("times %d %d %d, extra isize %d", n.Atime(), n.Ctime(), n.Mtime(), n.ExtraIsize())
	}
	if n.u32(offICrtime) != 4 {
		t.Errorf("i_crtime %d, want 4", n.u32(offICrtime))
	}
	n.put32(offIProjid, 77)
	n.SetExtraIsize(offIProjid - GoodOldInodeSize) // ends where i_projid starts
	if _, ok := n.Projid(); ok {
		t.Errorf("i_projid read with i_extra_isize %d", n.ExtraIsize())
	}
	n.SetExtraIsize(32)
	if id, ok := n.Projid(); !ok || id != 77 {
		t.Errorf("Projid = %d, %v; want 77, true", id, ok)
	}

	old := Inode(make([]byte, GoodOldInodeSize))
	old.SetExtraIsize(32)
	old.SetCrtime(4)
	if old.ExtraIsize() != 0 {
		t.Errorf("128-byte inode got i_extra_isize")
	}
	if _, ok := old.Projid(); ok {
		t.Errorf("128-byte inode has i_projid")
	}

	sb := Superblock(make([]byte, SuperblockSize))
	sb.SetUsrQuotaInum(3)
	sb.SetGrpQuotaInum(4)
	sb.SetPrjQuotaInum(12)
	if sb.UsrQuotaInum() != 3 || sb.GrpQuotaInum() != 4 || sb.PrjQuotaInum() != 12 {
		t.Errorf("quota inodes %d %d %d, want 3 4 12", sb.UsrQuotaInum(), sb.GrpQuotaInum(), sb.PrjQuotaInum())
	}
}
