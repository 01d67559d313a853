package ext2fs

import "gofsck/internal/ondisk"

// BmapSetBlockMapped is ext2fs_bmap2 with BMAP_SET on a block-mapped
// inode ino (held as n): logical block lblk becomes blk, in i_block (n
// is then written) or in the indirect block that maps it, which must
// exist (ErrSetBmapNoInd otherwise, as for a block past the triply
// indirect range); a mapping block past the filesystem is ErrShortRead,
// and one fsys.IO cannot read fails with its error. The indirect block
// changed is written through fsys.IO.
func BmapSetBlockMapped(fsys *Filsys, ino uint32, n ondisk.Inode, lblk uint32, blk uint64) error {
	f := fsys.FS
	if lblk < ondisk.NDirBlocks {
		n.SetBlock(int(lblk), uint32(blk))
		fsys.IO.WriteInode(ino, n)
		return nil
	}
	per := uint64(f.BlockSize / 4)
	rest := uint64(lblk) - ondisk.NDirBlocks
	// level 1: IND, 2: DIND, 3: TIND; span is what one slot of the top
	// block maps.
	level, span := 1, uint64(1)
	for level <= 3 && rest >= span*per {
		rest -= span * per
		level++
		span *= per
	}
	if level > 3 {
		return ErrSetBmapNoInd
	}
	ind := uint64(n.Block(ondisk.IndBlock - 1 + level))
	buf := make(ondisk.MapBlock, f.BlockSize)
	for {
		if ind == 0 {
			return ErrSetBmapNoInd
		}
		if ind >= f.BlocksCount {
			return ErrShortRead
		}
		if err := fsys.IO.ReadBlock(ind, buf); err != nil {
			return err
		}
		slot := int(rest / span)
		if span == 1 {
			buf.SetPtr(slot, uint32(blk))
			fsys.IO.WriteBlock(ind, buf)
			return nil
		}
		ind = uint64(buf.Ptr(slot))
		rest %= span
		span /= per
	}
}
