package fcreplay

import (
	"encoding/binary"

	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
)

// Links and unlinks of the fast-commit replay in inline-data directories:
// ext2fs_link and ext2fs_unlink iterate them with
// ext2fs_inline_data_dir_iterate, which hands link_proc and unlink_proc
// a synthesized "." entry, a synthesized ".." entry (i_block[0], written
// back when changed), the 56 bytes of entries after it in i_block
// (written back with the inode when changed) and, when system.data holds
// more, the attribute's value (written back with ext2fs_inline_data_ea_set
// when changed). The library never grows the directory there: a name
// that does not fit fails with EXT2_ET_DIR_NO_SPACE. Attributes the
// library's reader and writer would treat in ways not emulated (see
// ibodyXattrs) stop the replay as unsupported.

// inlineDotDotSize is EXT4_INLINE_DATA_DOTDOT_SIZE.
const inlineDotDotSize = 4

// libRecLen is ext2fs_get_rec_len.
func (r *fcReplay) libRecLen(b []byte) int {
	v := int(binary.LittleEndian.Uint16(b))
	if v == 65535 || v == 0 {
		return r.fs.BlockSize
	}
	return v&65532 | (v&3)<<16
}

// inlineArea checks one area's entries as ext2fs_process_dir_block does
// and calls fn on each until it reports done.
func (r *fcReplay) inlineArea(buf []byte, fn func(off, recLen int) (done bool, err error)) (bool, error) {
	n := len(buf)
	if n < 8 {
		return false, ext2fs.ErrDirCorrupted
	}
	for off := 0; off < n-8; {
		rl := r.libRecLen(buf[off+4:])
		if off+rl > n || rl < 8 || rl%4 != 0 || int(buf[off+6])+8 > rl {
			return false, ext2fs.ErrDirCorrupted
		}
		done, err := fn(off, rl)
		if done || err != nil {
			return done, err
		}
		// The callback may have changed the entry's length.
		off += r.libRecLen(buf[off+4:])
	}
	return false, nil
}

// inlineEAArea runs fn over the entries of system.data's value (the last
// area of ext2fs_inline_data_dir_iterate) and writes the value back when
// fn changed it; done reports whether fn ended the iteration.
func (r *fcReplay) inlineEAArea(dir uint32, fn func(buf []byte) (done, changed bool, err error)) (bool, error) {
	v, err := r.h.InlineData(dir)
	if err != nil || len(v) == 0 {
		return false, err
	}
	done, changed, err := fn(v)
	if changed {
		if serr := r.h.SetInlineData(dir, v); serr != nil {
			return false, Unsupported("rewriting system.data of %d: %v", dir, serr)
		}
	}
	if err != nil {
		return false, err
	}
	return done, r.h.WriteError()
}

// inlineLink is ext2fs_link's link_proc over an inline directory.
func (r *fcReplay) inlineLink(dir uint32, n ondisk.Inode, name string, ino uint32, ft uint8) error {
	le := binary.LittleEndian
	need := ondisk.DirRecLen(len(name), 0)
	ib := n.IBlock()
	// ".": in use, 12 bytes, never has room. "..": empty only when
	// i_block[0] is 0, and then takes a name of up to 4 bytes.
	if le.Uint32(ib) == 0 && need <= ondisk.DirRecLen(2, 0) {
		le.PutUint32(ib, ino)
		r.h.WriteInode(dir, n)
		return r.h.WriteError()
	}
	csum := 0
	if r.fs.MetadataCsum {
		csum = ondisk.DirTailSize
	}
	if !r.sb.HasIncompat(ondisk.IncompatFiletype) {
		ft = 0
	}
	area := func(buf []byte) (bool, bool, error) {
		bl := len(buf)
		changed := false
		done, err := r.inlineArea(buf, func(off, cur int) (bool, error) {
			if next := off + cur; next < bl-(8+csum) && le.Uint32(buf[next:]) == 0 &&
				next+int(le.Uint16(buf[next+4:])) <= bl {
				cur += int(le.Uint16(buf[next+4:]))
				if cur > r.fs.BlockSize || cur&3 != 0 {
					return false, errFCInval
				}
				le.PutUint16(buf[off+4:], uint16(cur))
				changed = true
			}
			if le.Uint32(buf[off:]) != 0 {
				minLen := ondisk.DirRecLen(int(buf[off+6]), 0)
				if cur < minLen+need {
					return false, nil
				}
				le.PutUint16(buf[off+4:], uint16(minLen))
				e := buf[off+minLen:]
				le.PutUint32(e, 0)
				e[6], e[7] = 0, 0
				le.PutUint16(e[4:], uint16(cur-minLen))
				changed = true
				return false, nil
			}
			if cur < need {
				return false, nil
			}
			le.PutUint32(buf[off:], ino)
			buf[off+6] = uint8(len(name))
			copy(buf[off+8:], name)
			if r.sb.HasIncompat(ondisk.IncompatFiletype) {
				buf[off+7] = ft
			}
			changed = true
			return true, nil
		})
		return done, changed, err
	}
	done, changed, err := area(ib[inlineDotDotSize:])
	if changed {
		r.h.WriteInode(dir, n)
		if werr := r.h.WriteError(); werr != nil {
			return werr
		}
	}
	if err != nil || done {
		return err
	}
	if done, err = r.inlineEAArea(dir, area); err != nil || done {
		return err
	}
	return ext2fs.ErrDirNoSpace
}

// inlineUnlink is ext2fs_unlink's unlink_proc over an inline directory.
func (r *fcReplay) inlineUnlink(dir uint32, n ondisk.Inode, name string, ino uint32, force bool) error {
	le := binary.LittleEndian
	ib := n.IBlock()
	match := func(entIno uint32, entName string) bool {
		if entName != name {
			return false
		}
		if !force && ino != 0 {
			return entIno == ino
		}
		return entIno != 0
	}
	if match(dir, ".") {
		// The synthesized entry is emptied; nothing is written.
		return nil
	}
	if match(le.Uint32(ib), "..") {
		le.PutUint32(ib, 0)
		r.h.WriteInode(dir, n)
		return r.h.WriteError()
	}
	area := func(buf []byte) (bool, bool, error) {
		prev := -1
		done, err := r.inlineArea(buf, func(off, cur int) (bool, error) {
			p := prev
			prev = off
			nl := int(buf[off+6])
			if !match(le.Uint32(buf[off:]), string(buf[off+8:off+8+nl])) {
				return false, nil
			}
			if off != 0 {
				le.PutUint16(buf[p+4:], le.Uint16(buf[p+4:])+le.Uint16(buf[off+4:]))
			} else {
				le.PutUint32(buf[off:], 0)
			}
			return true, nil
		})
		return done, done, err
	}
	done, _, err := area(ib[inlineDotDotSize:])
	if err != nil {
		return err
	}
	if done {
		r.h.WriteInode(dir, n)
		return r.h.WriteError()
	}
	if done, err = r.inlineEAArea(dir, area); err != nil || done {
		return err
	}
	return ext2fs.ErrDirNoSpace
}
