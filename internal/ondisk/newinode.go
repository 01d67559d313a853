package ondisk

// Setters of the fields a new inode is given (ext2fs_write_new_inode's
// times, i_extra_isize and i_crtime), the project id of an inode and the
// superblock's quota inode numbers.

// SetAtime stores i_atime.
func (n Inode) SetAtime(v uint32) { n.put32(offIAtime, v) }

// SetCtime stores i_ctime.
func (n Inode) SetCtime(v uint32) { n.put32(offICtime, v) }

// SetMtime stores i_mtime.
func (n Inode) SetMtime(v uint32) { n.put32(offIMtime, v) }

// SetExtraIsize stores i_extra_isize; a 128-byte inode has none and is
// left alone.
func (n Inode) SetExtraIsize(v uint16) {
	if len(n) <= GoodOldInodeSize {
		return
	}
	n.put16(offIExtraIsize, v)
}

// SetCrtime stores i_crtime when the inode is large enough to hold it,
// whatever i_extra_isize says (the caller sets that).
func (n Inode) SetCrtime(v uint32) {
	if len(n) < offICrtime+4 {
		return
	}
	n.put32(offICrtime, v)
}

// Projid returns i_projid and whether i_extra_isize covers it.
func (n Inode) Projid() (uint32, bool) {
	if !n.hasExtraField(offIProjid, 4) {
		return 0, false
	}
	return n.u32(offIProjid), true
}

// SetUsrQuotaInum stores s_usr_quota_inum.
func (s Superblock) SetUsrQuotaInum(v uint32) { s.put32(offUsrQuotaInum, v) }

// SetGrpQuotaInum stores s_grp_quota_inum.
func (s Superblock) SetGrpQuotaInum(v uint32) { s.put32(offGrpQuotaInum, v) }

// SetPrjQuotaInum stores s_prj_quota_inum.
func (s Superblock) SetPrjQuotaInum(v uint32) { s.put32(offPrjQuotaInum, v) }
