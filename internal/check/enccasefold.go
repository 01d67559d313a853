package check

import (
	"bytes"

	"gofsck/internal/casefold"
	"gofsck/internal/ondisk"
	"gofsck/internal/qsort"
)

// Directories both encrypted and casefolded (EXT4_ENCRYPT_FL and
// EXT4_CASEFOLD_FL). Their names are ciphertext, so the hash of a name
// cannot be computed without the key: every entry after '.' and '..'
// stores its hash and minor hash in 8 bytes after the name (padded to 4
// bytes), and its rec_len leaves room for them. Their htrees are
// SipHash-keyed and use the stored hashes.
//
//   - Pass 2 (e2fsck's hash_in_dirent): the directory is casefolded (the
//     flag as pass 1 left it) and has an encryption policy; its entries
//     after '..' must be 8 bytes longer, and the salvage of a corrupt
//     entry keeps room for the hash.
//   - Pass 3A (ext4_hash_in_dirent, from the inode flags alone): entries
//     keep their stored hashes and are sorted by them, are written back
//     with the hash after the name (every entry, '.' and '..' too when the
//     directory is packed linearly), and the root is SipHash.

// entriesCarryHash is pass 1's view of whether directory ino stores its
// entries' hashes: EXT4_CASEFOLD_FL (e2fsck's casefolded_dirs, with or
// without the casefold feature) and an encryption policy found for it.
func (c *Checker) entriesCarryHash(ino uint32, n ondisk.Inode) bool {
	if n.Flags()&ondisk.FlagCasefold == 0 || n.Flags()&ondisk.FlagEncrypt == 0 {
		return false
	}
	c.shared.mu.Lock()
	_, ok := c.shared.encPolicy[ino]
	c.shared.mu.Unlock()
	return ok
}

// hashExtra is the room an entry at dotState needs for its hash in pass 2
// (e2fsck's "extended": never for '.' and '..').
func hashExtra(di *dirInfo, dotState int) int {
	if di != nil && di.hashInDirent && dotState > 1 {
		return ondisk.DirentHashSize
	}
	return 0
}

// hashInInode is ext4_hash_in_dirent: both flags set on the inode.
func hashInInode(n ondisk.Inode) bool {
	const both = ondisk.FlagEncrypt | ondisk.FlagCasefold
	return n.Flags()&both == both
}

// isFakeEntry is rehash.c's is_fake_entry: '.' and '..' of the first
// block, and the checksum tail, carry no stored hash.
func isFakeEntry(lblk uint32, off, bs int, csum bool) bool {
	if lblk == 0 && off <= 12 {
		return true
	}
	return csum && off&(bs-1) == bs-ondisk.DirTailSize
}

// rehashCmp is pass 3A's hash_cmp: hash, minor hash, then the names
// (name_cf_cmp in a casefolded directory, where ext2fs_casefold_cmp is
// -1 whenever either name does not fold, so that identical ciphertext
// names never compare equal; name_cmp otherwise), then the longer name
// last, then the inode numbers' difference (the higher first).
func rehashCmp(fo *casefold.Folder) func(a, b *hashEntry) int {
	return func(a, b *hashEntry) int {
		switch {
		case a.hash > b.hash:
			return 1
		case a.hash < b.hash:
			return -1
		case a.minor > b.minor:
			return 1
		case a.minor < b.minor:
			return -1
		}
		var r int
		if fo != nil {
			r = fo.Compare(a.name, b.name)
		} else {
			r = bytes.Compare(a.name[:min(len(a.name), len(b.name))], b.name[:min(len(a.name), len(b.name))])
		}
		if r != 0 {
			return r
		}
		switch {
		case len(a.name) > len(b.name):
			return 1
		case len(a.name) < len(b.name):
			return -1
		}
		return int(int32(b.ino - a.ino))
	}
}

// sortRehash sorts entries as e2fsck's sort_r does on glibc (qsort.Glibc),
// which fixes the order where the comparator is not a total order (names
// that do not fold, in a casefolded directory).
func sortRehash(ents []hashEntry, fo *casefold.Folder) {
	qsort.Glibc(ents, rehashCmp(fo))
}
