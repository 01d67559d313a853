package ext2fs

import (
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
)

// The resize inode (inode 7), as ext2fs_create_resize_inode makes or
// completes it: its double-indirect block lists the reserved GDT blocks
// that follow the primary descriptors, and each reserved GDT block lists
// the block at the same offset in every backup group (the groups
// BackupGroups walks).

// BackupGroups walks the groups holding backup superblock and descriptor
// copies in the library's order (list_backups): s_backup_bgs with
// sparse_super2, every group from 1 on without sparse_super, else the
// powers of 3, 5 and 7 merged in ascending order. The zero value is not
// ready: use NewBackupGroups.
type BackupGroups struct {
	three, five, seven uint64
}

// NewBackupGroups returns a walk from the first backup group.
func NewBackupGroups() BackupGroups { return BackupGroups{three: 1, five: 5, seven: 7} }

// Next returns the next backup group of sb, a value >= groups when there
// are no more.
func (it *BackupGroups) Next(sb ondisk.Superblock, groups uint32) uint64 {
	if sb.HasCompat(ondisk.CompatSparseSuper2) {
		if it.three == 1 {
			it.three++
			if b := sb.BackupBG(0); b != 0 {
				return uint64(b)
			}
		}
		if it.three == 2 {
			it.three++
			if b := sb.BackupBG(1); b != 0 {
				return uint64(b)
			}
		}
		return uint64(groups)
	}
	if !sb.HasRoCompat(ondisk.RoCompatSparseSuper) {
		r := it.three
		it.three++
		return r
	}
	p, mult := &it.three, uint64(3)
	if it.five < *p {
		p, mult = &it.five, 5
	}
	if it.seven < *p {
		p, mult = &it.seven, 7
	}
	r := *p
	*p *= mult
	return r
}

// IblkSet is ext2fs_iblk_set: n's i_blocks set to num blocks (clusters
// with bigalloc) in the units IblkAddBlocks uses; without huge_file a
// count past 32 bits leaves i_blocks as it was.
func IblkSet(f *fs.FS, n ondisk.Inode, num uint64) {
	huge := f.SB.HasRoCompat(ondisk.RoCompatHugeFile)
	if !huge || n.Flags()&ondisk.FlagHugeFile == 0 {
		num *= uint64(f.BlockSize / 512)
	}
	num <<= f.ClusterBits
	if huge {
		n.SetBlocksHi(uint16(num >> 32))
	} else if num>>32 != 0 {
		return
	}
	n.SetBlocksLo(uint32(num))
}

// WriteNewInode is ext2fs_write_new_inode: base holds the 128-byte inode
// (struct ext2_inode); its zero times become now and, in a large inode,
// everything past the base is zero but i_extra_isize and i_crtime (now).
// The inode is written through fsys.IO.
func WriteNewInode(fsys *Filsys, ino uint32, base ondisk.Inode, now uint32) {
	fsys.IO.WriteInode(ino, NewInode(fsys.FS, base, now))
}

// CreateResizeInode is ext2fs_create_resize_inode on a filesystem whose
// inode 7 reads as cur (the caller reads it with its checksum policy):
// a missing double-indirect block is allocated through fsys.Alloc (goal:
// the block after the first group's inode table, as the library guesses
// it), every reserved GDT block is entered in it and lists its backup
// copies, and the inode is written as a new inode (WriteNewInode) when
// anything changed. Table blocks are read and written through fsys.IO;
// one outside the filesystem is read as ErrShortRead and not written.
// The superblock gains large_file when the inode's size needs it.
//
// It returns ErrShortRead, ErrBlockAllocFail or ErrResizeInodeCorrupt as
// the library does; what it wrote before the failure stays written.
func CreateResizeInode(fsys *Filsys, cur ondisk.Inode, now uint32) error {
	f := fsys.FS
	sb := f.SB
	bs := f.BlockSize
	// The library works on the 128-byte base inode and writes it back as
	// a new inode.
	n := make(ondisk.Inode, ondisk.GoodOldInodeSize)
	copy(n, cur)
	sbBlk := uint32(f.FirstDataBlock)
	if bs == 1024 && sbBlk == 0 {
		sbBlk = 1 // 1 KiB blocks with bigalloc
	}
	apb := uint32(bs / 4)
	read := func(blk uint64, buf []byte) bool {
		return blk < f.BlocksCount && fsys.IO.ReadBlock(blk, buf) == nil
	}
	write := func(blk uint64, buf []byte) {
		if blk < f.BlocksCount {
			fsys.IO.WriteBlock(blk, buf)
		}
	}
	dind := n.Block(ondisk.DindBlock)
	dindBuf := make(ondisk.MapBlock, bs)
	dindDirty, inodeDirty := false, false
	var err error
	if dind != 0 {
		if !read(uint64(dind), dindBuf) {
			return ErrShortRead
		}
	} else {
		goal := sbBlk + f.DescBlocks + uint32(sb.ReservedGdtBlocks()) + 2 + f.InodeBlocksPerGroup
		blk, ok := fsys.Alloc.AllocBlock(uint64(goal))
		if !ok {
			return ErrBlockAllocFail
		}
		dind = uint32(blk)
		n.SetMode(ondisk.SIFREG | 0o600)
		n.SetLinksCount(1)
		n.SetBlock(ondisk.DindBlock, dind)
		IblkSet(f, n, 1)
		dindDirty, inodeDirty = true, true
		size := (uint64(apb)*uint64(apb) + uint64(apb) + 12) * uint64(bs)
		if size >= 0x80000000 && !sb.HasRoCompat(ondisk.RoCompatLargeFile) {
			sb.SetFeatureRoCompat(sb.FeatureRoCompat() | ondisk.RoCompatLargeFile)
		}
		n.SetSize(size)
		n.SetCtime(now)
	}
	gdtBuf := make(ondisk.MapBlock, bs)
	gdtOff, gdtBlk := f.DescBlocks, sbBlk+1+f.DescBlocks
	for rsv := uint32(0); rsv < uint32(sb.ReservedGdtBlocks()) && err == nil; rsv, gdtOff, gdtBlk = rsv+1, gdtOff+1, gdtBlk+1 {
		gdtOff %= apb
		gdtDirty := false
		switch dindBuf.Ptr(int(gdtOff)) {
		case 0:
			gdtDirty, dindDirty, inodeDirty = true, true, true
			clear(gdtBuf)
			dindBuf.SetPtr(int(gdtOff), gdtBlk)
			_ = IblkAddBlocks(f, n, 1) // an overflow leaves i_blocks as it was
		case gdtBlk:
			if !read(uint64(gdtBlk), gdtBuf) {
				err = ErrShortRead
				continue
			}
		default:
			err = ErrResizeInodeCorrupt
			continue
		}
		it := NewBackupGroups()
		for last := uint32(0); ; last++ {
			grp := it.Next(sb, f.Groups)
			if grp >= uint64(f.Groups) {
				break
			}
			if last >= apb {
				// The library would write past its buffer.
				err = ErrResizeInodeCorrupt
				break
			}
			expect := gdtBlk + uint32(grp)*f.BlocksPerGroup
			switch gdtBuf.Ptr(int(last)) {
			case 0:
				gdtBuf.SetPtr(int(last), expect)
				_ = IblkAddBlocks(f, n, 1)
				gdtDirty, inodeDirty = true, true
			case expect:
			default:
				err = ErrResizeInodeCorrupt
			}
			if err != nil {
				break
			}
		}
		if err == nil && gdtDirty {
			write(uint64(gdtBlk), gdtBuf)
		}
	}
	if dindDirty {
		write(uint64(dind), dindBuf)
	}
	if inodeDirty {
		n.SetAtime(now)
		n.SetMtime(now)
		WriteNewInode(fsys, ondisk.ResizeIno, n, now)
	}
	return err
}
