package ext2fs

import "gofsck/internal/ondisk"

// Punch is ext2fs_punch(ino, n, start, ~0): every block of inode ino
// (held as n, changed in place; the caller writes it) from logical block
// start on is unmapped and freed through fsys.Alloc, with the mapping
// blocks it empties, and i_blocks lowered.
func Punch(fsys *Filsys, ino uint32, n ondisk.Inode, start uint64) error {
	if n.Flags()&ondisk.FlagExtents != 0 {
		return PunchExtents(fsys, ino, n, start)
	}
	return punchInd(fsys, n, start)
}

// punchInd is ext2fs_punch_ind to the end of the file: each mapping
// block is walked for the slots at or past start, written back, and
// freed (its slot zeroed) when nothing is left in it. A mapping block
// out of range or unreadable is left alone.
func punchInd(fsys *Filsys, n ondisk.Inode, start uint64) error {
	f := fsys.FS
	per := uint64(f.BlockSize / 4)
	var freed uint64
	// ind frees what slot i of m maps from logical block offset on
	// (level 0: a data block) and reports whether the slot was freed.
	var ind func(m ondisk.MapBlock, i, level int, offset uint64) bool
	ind = func(m ondisk.MapBlock, i, level int, offset uint64) bool {
		b := uint64(m.Ptr(i))
		if b == 0 {
			return false
		}
		if level > 0 {
			buf := make([]byte, f.BlockSize)
			if b >= f.BlocksCount || fsys.IO.ReadBlock(b, buf) != nil {
				return false
			}
			incr := uint64(1)
			for k := 1; k < level; k++ {
				incr *= per
			}
			for k := uint64(0); k < per; k++ {
				if o := offset + k*incr; o+incr > start {
					ind(buf, int(k), level-1, o)
				}
			}
			fsys.IO.WriteBlock(b, buf)
			for _, x := range buf {
				if x != 0 {
					return false
				}
			}
		}
		fsys.Alloc.FreeBlock(b)
		freed++
		m.SetPtr(i, 0)
		return true
	}
	ib := ondisk.MapBlock(n.IBlock())
	for i := start; i < ondisk.NDirBlocks; i++ {
		ind(ib, int(i), 0, i)
	}
	base, span := uint64(ondisk.NDirBlocks), uint64(1)
	for level := 1; level <= 3; level++ {
		span *= per
		if base+span > start {
			ind(ib, ondisk.IndBlock-1+level, level, base)
		}
		base += span
	}
	return IblkSubBlocks(f, n, freed)
}
