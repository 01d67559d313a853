package ondisk

// The superblock's 40-bit timestamps: a 32-bit field and, for the
// ext4 superblock, a high byte (s_mtime_hi, s_wtime_hi).
const (
	offWtimeHi = 0x274
	offMtimeHi = 0x275
)

// SetMtimeStamp stores t as s_mtime, high byte included (ext2fs_set_tstamp
// with a 32-bit time); a superblock too short for the high byte keeps
// only the low field.
func (s Superblock) SetMtimeStamp(t uint32) { s.setStamp(offMtime, offMtimeHi, t) }

// SetWtimeStamp is SetMtimeStamp for s_wtime.
func (s Superblock) SetWtimeStamp(t uint32) { s.setStamp(offWtime, offWtimeHi, t) }

func (s Superblock) setStamp(lo, hi int, t uint32) {
	if len(s) > hi {
		s.put32(lo, t)
		s[hi] = 0
	}
}
