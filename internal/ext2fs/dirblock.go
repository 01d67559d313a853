package ext2fs

import (
	"encoding/binary"

	"gofsck/internal/ondisk"
)

// Directory-block mechanics of ext2fs_link and ext2fs_unlink: their
// link_proc and unlink_proc over the entries of one leaf block, which
// compare and copy names byte for byte.

// SetRecLen is ext2fs_set_rec_len: recLen stored at off, in the encoding
// of blocks of 64 KiB and more.
func SetRecLen(buf []byte, off, recLen, bs int) {
	v := uint16(recLen)
	if recLen >= 65536 {
		if recLen == bs {
			v = 0xFFFF
			if bs != 65536 {
				v = 0
			}
		} else {
			v = uint16(recLen&0xFFFC) | uint16(recLen>>16)&3
		}
	}
	binary.LittleEndian.PutUint16(buf[off+4:], v)
}

// PutDirent writes an entry header (inode, rec_len, name_len, file type)
// at off.
func PutDirent(buf []byte, off int, ino uint32, recLen int, nameLen int, ft uint8, bs int) {
	binary.LittleEndian.PutUint32(buf[off:], ino)
	SetRecLen(buf, off, recLen, bs)
	buf[off+6] = uint8(nameLen)
	buf[off+7] = ft
}

// direntSane is ext2fs_process_dir_block's check of an entry of d's
// length at off.
func direntSane(d ondisk.Dirent, off, bs int) bool {
	return off+d.RecLen <= bs && d.RecLen >= 8 && d.RecLen%4 == 0 && d.NameLen+8 <= d.RecLen
}

// LinkInBlock runs link_proc over one leaf block of bs bytes (csum: the
// block ends in a checksum tail): an empty entry following an entry is
// merged into it, a live entry with room for the name is split, and the
// first empty entry with room takes the name (ino, file type ft). done
// reports that the name was added, changed that buf was modified (to be
// written back even when not done); a damaged entry stops the walk with
// ErrDirCorrupted.
func LinkInBlock(buf []byte, bs int, csum bool, name string, ino uint32, ft uint8) (done, changed bool, err error) {
	csumSize := 0
	if csum {
		csumSize = ondisk.DirTailSize
	}
	need := ondisk.DirRecLen(len(name), 0)
	for off := 0; off < bs-8; {
		d, _ := ondisk.DecodeDirent(buf, off, bs)
		if !direntSane(d, off, bs) {
			return false, changed, ErrDirCorrupted
		}
		if d.Ino == 0 && csum && off == bs-csumSize && d.RecLen == csumSize &&
			binary.LittleEndian.Uint16(buf[off+6:]) == uint16(ondisk.DirTailFileType)<<8 {
			off += d.RecLen
			continue
		}
		cur := d.RecLen
		if next := off + cur; next < bs-(8+csumSize) {
			nd, _ := ondisk.DecodeDirent(buf, next, bs)
			if nd.Ino == 0 && next+nd.RecLen <= bs {
				cur += nd.RecLen
				SetRecLen(buf, off, cur, bs)
				changed = true
			}
		}
		if d.Ino != 0 {
			minLen := ondisk.DirRecLen(d.NameLen, 0)
			if cur >= minLen+need {
				SetRecLen(buf, off, minLen, bs)
				PutDirent(buf, off+minLen, 0, cur-minLen, 0, 0, bs)
				changed = true
			}
		} else if cur >= need {
			PutDirent(buf, off, ino, cur, len(name), ft, bs)
			copy(buf[off+8:], name)
			return true, true, nil
		}
		d2, _ := ondisk.DecodeDirent(buf, off, bs)
		off += d2.RecLen
	}
	return false, changed, nil
}

// UnlinkInBlock runs unlink_proc over one leaf block of bs bytes: the
// first live entry called name (and, unless force is set or ino is 0,
// naming ino) is merged into the previous entry, or emptied when first in
// the block. done reports that it was found (buf is then to be written);
// a damaged entry stops the walk with ErrDirCorrupted.
func UnlinkInBlock(buf []byte, bs int, name string, ino uint32, force bool) (done bool, err error) {
	prev := -1
	for off := 0; off < bs-8; {
		d, _ := ondisk.DecodeDirent(buf, off, bs)
		if !direntSane(d, off, bs) {
			return false, ErrDirCorrupted
		}
		match := d.NameLen == len(name) && string(buf[off+8:off+8+d.NameLen]) == name
		if match && !force && ino != 0 {
			match = d.Ino == ino
		} else if match {
			match = d.Ino != 0
		}
		if match {
			if prev >= 0 {
				p, _ := ondisk.DecodeDirent(buf, prev, bs)
				SetRecLen(buf, prev, p.RecLen+d.RecLen, bs)
			} else {
				binary.LittleEndian.PutUint32(buf[off:], 0)
			}
			return true, nil
		}
		prev = off
		off += d.RecLen
	}
	return false, nil
}

// LinkBlocks is ext2fs_link's walk over the leaf blocks pblks of a
// directory, in iteration order: link_proc on each block, a block it
// changed given to write (which adds the checksum), until the name is
// added. ErrDirNoSpace when no block had room; ErrDirCorrupted when a
// block cannot be read or holds a damaged entry.
func LinkBlocks(fsys *Filsys, pblks []uint64, write func(blk uint64, buf []byte), name string, ino uint32, ft uint8) error {
	f := fsys.FS
	buf := make([]byte, f.BlockSize)
	for _, pb := range pblks {
		if pb >= f.BlocksCount || fsys.IO.ReadBlock(pb, buf) != nil {
			return ErrDirCorrupted
		}
		done, changed, err := LinkInBlock(buf, f.BlockSize, f.MetadataCsum, name, ino, ft)
		if changed {
			write(pb, buf)
		}
		if err != nil || done {
			return err
		}
	}
	return ErrDirNoSpace
}

// UnlinkBlocks is ext2fs_unlink's walk over pblks: the first entry called
// name (naming ino, unless ino is 0) is removed and its block given to
// write. ErrDirNoSpace when none matched (the library's answer then);
// ErrDirCorrupted as for LinkBlocks.
func UnlinkBlocks(fsys *Filsys, pblks []uint64, write func(blk uint64, buf []byte), name string, ino uint32) error {
	f := fsys.FS
	buf := make([]byte, f.BlockSize)
	for _, pb := range pblks {
		if pb >= f.BlocksCount || fsys.IO.ReadBlock(pb, buf) != nil {
			return ErrDirCorrupted
		}
		done, err := UnlinkInBlock(buf, f.BlockSize, name, ino, false)
		if err != nil {
			return err
		}
		if done {
			write(pb, buf)
			return nil
		}
	}
	return ErrDirNoSpace
}
