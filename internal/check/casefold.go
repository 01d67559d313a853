package check

import (
	"bytes"
	"errors"

	"gofsck/internal/casefold"
	"gofsck/internal/dirhash"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Casefolded directories (the casefold feature, EXT4_CASEFOLD_FL). With
// the feature, libext2fs loads the encoding (s_encoding; e2fsck refuses an
// unknown one before pass 1) and:
//   - hashes the names of a casefolded directory after folding them
//     (ext2fs_dirhash2), in pass 2's htree checks and pass 3A's rebuild;
//   - pass 3A sorts and compares such names folded (name_cf_cmp,
//     same_name), so names differing only in case are duplicates;
//   - pass 2 checks that names are valid in the encoding
//     (PR_2_BAD_ENCODED_NAME) and finds duplicates by folded name only in
//     strict mode (EXT4_ENC_STRICT_MODE_FL) or with -E check_encoding: its
//     cf_dir.
//
// libext2fs's folding fails for an invalid name (a byte sequence that is
// not a character, past the first byte): e2fsck 1.47.0's pass 2 then keeps
// the hash of the entry before (which never moves the block's hash range:
// gofsck leaves the range alone), and pass 3A gives up on the directory.

// errFoldFailed is the error libext2fs's hash returns for an invalid name
// in a casefolded directory (-ENAMETOOLONG, which com_err does not know).
var errFoldFailed = errors.New("Unknown code ____ 220")

// casefoldFS reports whether names of casefolded directories fold: the
// feature is on (an unknown encoding never gets this far).
func (c *Checker) casefoldFS() bool { return c.sb.HasIncompat(ondisk.IncompatCasefold) }

// checksEncoding is e2fsck's cf_dir for a directory: casefolded (in pass
// 1's inode_casefold_map) and either strict or -E check_encoding.
func (c *Checker) checksEncoding(di *dirInfo) bool {
	if di == nil || !di.casefold {
		return false
	}
	_, flags := c.sb.Encoding()
	return flags&casefold.FlagStrict != 0 || c.opt.CheckEncoding
}

// folder returns the checker's Folder for serial code (pass 3A).
func (c *Checker) folder() *casefold.Folder {
	if c.fold == nil {
		c.fold = new(casefold.Folder)
	}
	return c.fold
}

// hashName is ext2fs_dirhash2: the hash of name under v with seed, of its
// folded form when fo is set (a casefolded directory). A name libext2fs
// does not fold because it starts with a continuation byte is hashed as it
// is; an invalid one fails with errFoldFailed.
func hashName(fo *casefold.Folder, v dirhash.Version, name []byte, seed *[4]uint32) (major, minor uint32, err error) {
	if fo != nil && len(name) > 0 {
		folded, st := fo.Fold(name)
		switch st {
		case casefold.OK:
			return dirhash.Hash(v, folded, seed)
		case casefold.Invalid:
			return 0, 0, errFoldFailed
		}
	}
	return dirhash.Hash(v, name, seed)
}

// folder returns the worker's Folder, made on first use.
func (w *dirWorker) folder() *casefold.Folder {
	if w.fold == nil {
		w.fold = new(casefold.Folder)
	}
	return w.fold
}

// entryHash is the hash pass 2 gives an entry of an indexed directory
// that is not SipHash-keyed; update is false when e2fsck keeps the hash of
// the entry before (its fold failed).
func (w *dirWorker) entryHash(dd *dxDirState, name []byte) (hash uint32, update bool) {
	var fo *casefold.Folder
	if dd.casefold {
		fo = w.folder()
	}
	seed := w.c.sb.HashSeed()
	h, _, err := hashName(fo, dd.hashVersion, name, &seed)
	switch {
	case errors.Is(err, errFoldFailed):
		return 0, false
	case err != nil:
		return 0, true
	}
	return h, true
}

// checkEncodedName is encoded_check_name: an invalid name is fixed by
// turning every byte from the first bad one up to the end (or a NUL) into
// '.'; the generic name check runs only when that was not fixed.
func (w *dirWorker) checkEncodedName(p problem.Problem, name []byte) {
	if pos := casefold.InvalidAt(name); pos >= 0 {
		q := p
		q.Code = problem.PR_2_BAD_ENCODED_NAME
		if w.c.fix(q) {
			if w.editable() {
				for i := pos; i < len(name) && name[i] != 0; i++ {
					name[i] = '.'
				}
				w.entryModified = true
			}
			return
		}
	}
	w.checkName(p, name)
}

// sameName is pass 3A's same_name: folded comparison in a casefolded
// directory, bytes otherwise.
func sameName(fo *casefold.Folder, a, b []byte) bool {
	if fo == nil {
		return bytes.Equal(a, b)
	}
	return fo.Equal(a, b)
}

// rehashFolder returns the Folder pass 3A compares and hashes the names
// of directory inode n with, or nil when they are not casefolded
// (fs->encoding and EXT4_CASEFOLD_FL).
func (c *Checker) rehashFolder(n ondisk.Inode) *casefold.Folder {
	if !c.casefoldFS() || n.Flags()&ondisk.FlagCasefold == 0 {
		return nil
	}
	return c.folder()
}
