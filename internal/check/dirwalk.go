package check

import (
	"errors"
	"sort"
	"strconv"

	"gofsck/internal/dirhash"
	"gofsck/internal/ext2fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// iterateDir calls fn for every live entry of directory dir, in block
// order, like the library's directory iterator: it stops (returning false)
// at the first structurally corrupt entry. fn returns false to stop early.
// It is used for path names in messages and by pass 3/3A, never in a hot
// path.
func (c *Checker) iterateDir(dir uint32, fn func(ino uint32, name []byte) bool) bool {
	return c.iterateDirOpt(dir, false, fn)
}

// iterateDirOpt is iterateDir; with verify, a block whose checksum fails
// (metadata_csum) stops the iteration as an error, as the library's
// checked directory read does for path names.
func (c *Checker) iterateDirOpt(dir uint32, verify bool, fn func(ino uint32, name []byte) bool) bool {
	f := c.fs
	b := c.getIterBufs()
	defer c.putIterBufs(b)
	ibuf, scratch := b.ibuf, b.scratch
	if f.ReadInode(dir, ibuf, scratch) != nil {
		return false
	}
	n := ondisk.Inode(ibuf)
	if !n.IsDir() {
		return false
	}
	if verify && c.inodeCsumFails(dir, n) {
		return false // ext2fs_check_directory's read fails
	}
	if n.Flags()&ondisk.FlagInlineData != 0 {
		ib := n.IBlock()
		if !fn(dir, []byte(".")) {
			return true
		}
		if !fn(leU32(ib), []byte("..")) {
			return true
		}
		area := ib[4:]
		if v, ok := ext2fs.FindInodeXattr(n, ondisk.XattrIndexSystem, "data"); ok && len(v) > 0 {
			if !walkEntries(area, f.BlockSize, fn) {
				return false
			}
			return walkEntries(v, f.BlockSize, fn)
		}
		return walkEntries(area, f.BlockSize, fn)
	}
	// Blocks in the library's iteration order; checksums are not
	// verified here (this only serves messages and read-only lookups).
	s, buf := b.s, b.buf
	ok, stop := true, false
	count := 0
	verify = verify && f.MetadataCsum
	gen := n.Generation()
	c.iterateBlocks(s, n, func(blk uint64, blockcnt int64) {
		if !ok || stop || blockcnt < 0 || blk == 0 {
			return
		}
		if count++; count > 1<<22 || c.readBlockIO(s, blk, buf) != nil {
			ok = false
			return
		}
		if verify && !dirBlockCsumOK(f.BlockSize, buf, f.CsumSeed, dir, gen) {
			ok = false
			return
		}
		ok = walkEntries(buf, f.BlockSize, func(ino uint32, name []byte) bool {
			if !fn(ino, name) {
				stop = true
				return false
			}
			return true
		})
	})
	return ok || stop
}

// iterBufs are iterateDir's buffers. Pass 1D and pass 3 look up many
// names, and a fresh set per lookup (a dozen blocks) made them slow.
type iterBufs struct {
	ibuf, scratch, buf []byte
	s                  *inodeScratch
}

// getIterBufs takes a set of buffers from the Checker's free list (the fn
// of iterateDir may itself iterate, so one set is not enough); the list
// belongs to one goroutine, shards start with their own.
func (c *Checker) getIterBufs() *iterBufs {
	if n := len(c.iterFree); n > 0 {
		b := c.iterFree[n-1]
		c.iterFree = c.iterFree[:n-1]
		return b
	}
	f := c.fs
	return &iterBufs{ibuf: make([]byte, f.InodeSize), scratch: make([]byte, f.BlockSize), buf: make([]byte, f.BlockSize), s: c.newScratch()}
}

func (c *Checker) putIterBufs(b *iterBufs) {
	if len(c.iterFree) < 8 {
		c.iterFree = append(c.iterFree, b)
	}
}

func leU32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// walkEntries visits the live entries of one directory block; it returns
// false on a corrupt entry.
func walkEntries(buf []byte, blockSize int, fn func(ino uint32, name []byte) bool) bool {
	for off := 0; off < len(buf); {
		d, ok := ondisk.DecodeDirent(buf, off, blockSize)
		if !ok || d.RecLen < 8 || d.RecLen%4 != 0 || off+d.RecLen > len(buf) || d.NameLen+8 > d.RecLen {
			return false
		}
		if d.Ino != 0 {
			name := buf[off+8 : off+8+d.NameLen]
			if !fn(d.Ino, name) {
				return true
			}
		}
		off += d.RecLen
	}
	return true
}

// hashEntry is one entry of a directory being examined in pass 3A.
type hashEntry struct {
	hash, minor uint32
	ino         uint32
	ft          uint8 // file type byte (kept by the rebuild)
	name        []byte
}

// reportDuplicateNames is the read-only part of e2fsck's directory rebuild:
// it sorts the entries as the rebuild would and reports duplicates.
func (c *Checker) reportDuplicateNames(dir uint32) {
	f := c.fs
	sb := c.sb
	ibuf := make([]byte, f.InodeSize)
	scratch := make([]byte, f.BlockSize)
	if f.ReadInode(dir, ibuf, scratch) != nil {
		return
	}
	n := ondisk.Inode(ibuf)
	if sb.HasIncompat(ondisk.IncompatInlineData) && n.Flags()&ondisk.FlagInlineData != 0 {
		return // e2fsck_rehash_dir leaves inline directories alone
	}
	compress := !sb.HasCompat(ondisk.CompatDirIndex) || n.Size()/uint64(f.BlockSize) < 2
	hv := dirhash.Version(sb.DefHashVersion())
	if hv <= dirhash.TEA && sb.Flags()&ondisk.FlagUnsignedHash != 0 {
		hv += 3
	}
	seed := sb.HashSeed()
	fo := c.rehashFolder(n) // nil unless names hash and compare casefolded
	var ents []hashEntry
	var ok bool
	var hashErr error
	hashed := hashInInode(n) // stored hashes, read as the rebuild reads them (enccasefold.go)
	if hashed {
		lblks, pblks := c.dirDataBlocks(n, 1<<22)
		ents, _, compress, hashErr = c.fillDir(n, lblks, pblks, compress, hv, &seed, fo)
		ok = true
	}
	for !hashed {
		ents = ents[:0]
		dirSize := 0 // the bytes the entries would take, as the rebuild counts them
		ok = c.iterateDir(dir, func(ino uint32, name []byte) bool {
			if len(name) == 0 {
				return false
			}
			if !compress && (string(name) == "." || string(name) == "..") {
				return true
			}
			e := hashEntry{ino: ino, name: append([]byte(nil), name...)}
			if !compress {
				var err error
				if e.hash, e.minor, err = hashName(fo, hv, name, &seed); errors.Is(err, errFoldFailed) {
					hashErr = err
					return false
				}
			}
			dirSize += (len(name) + 8 + 3) &^ 3
			ents = append(ents, e)
			return true
		})
		// Entries that fit in one block are not indexed: the rebuild
		// starts over in compress mode, which sorts by name.
		if !ok || compress || dirSize >= int(f.BlockSize)-24 {
			break
		}
		compress = true
	}
	if hashErr != nil {
		c.fix(problem.Problem{Code: problem.PR_3A_OPTIMIZE_DIR_ERR, Dir: dir, Err: hashErr.Error()})
		return
	}
	if !ok {
		c.fix(problem.Problem{Code: problem.PR_3A_OPTIMIZE_DIR_ERR, Dir: dir, Err: string(ext2fs.ErrDirCsumInvalid)})
		return
	}
	sortPart := ents
	if compress && len(ents) > 1 {
		sortPart = ents[2:]
	}
	sortRehash(sortPart, fo) // sort_r's order (enccasefold.go)
	// The rebuild's duplicate search, whose every question is answered
	// no in a read-only run.
	c.fixDuplicates(dir, n, ents, hv, &seed, fo)
}

// mutateName appends or bumps a "~N" suffix the way e2fsck renames
// duplicate entries, within 255 bytes.
func mutateName(s []byte) []byte {
	l := len(s)
	i := l - 1
	for ; i > 0; i-- {
		if s[i] < '0' || s[i] > '9' {
			break
		}
	}
	if i == l-1 || s[i] != '~' {
		if (l-1)&3 < 2 {
			l += 2
		} else {
			l = (l + 3) &^ 3
		}
		if l > ondisk.MaxNameLen {
			l = ondisk.MaxNameLen
		}
		for len(s) < l {
			s = append(s, 0)
		}
		s = s[:l]
		s[l-2] = '~'
		s[l-1] = '0'
		return s
	}
	for i = l - 1; i >= 0; i-- {
		if s[i] >= '0' && s[i] <= '9' {
			if s[i] == '9' {
				s[i] = '0'
			} else {
				s[i]++
				return s
			}
			continue
		}
		switch {
		case i == 1:
			switch s[0] {
			case 'z':
				s[0] = 'A'
			case 'Z':
				s[0], s[1] = '~', '0'
			default:
				s[0]++
			}
		case i > 0:
			s[i] = '1'
			s[i-1] = '~'
		default:
			if s[0] == '~' {
				s[0] = 'a'
			} else {
				s[0]++
			}
		}
		break
	}
	return s
}

func sortU32(v []uint32) { sort.Slice(v, func(i, j int) bool { return v[i] < v[j] }) }

// Path implements problem.Namer with the library's pathname lookup:
// Path(dir, 0) is the path of directory dir; Path(dir, ino) is the path of
// ino as found in dir. Lookups are bounded to 32 levels.
func (c *Checker) Path(dir, ino uint32) string {
	if dir == ino {
		ino = 0
	}
	s, err := c.pathname(dir, ino, 32)
	if err {
		return "???"
	}
	return s
}

func (c *Checker) pathname(dir, ino uint32, depth int) (string, bool) {
	if dir == ino {
		if dir == ondisk.RootIno {
			return "/", false
		}
		return ".", false
	}
	if dir == 0 || depth < 0 {
		return "...", false
	}
	var parent uint32
	var name []byte
	isDir, readable := c.isDirInode(dir)
	if !readable {
		return "", true
	}
	if !isDir {
		if ino != 0 {
			return "<" + utoa(dir) + ">/<" + utoa(ino) + ">", false
		}
		return "<" + utoa(dir) + ">", false
	}
	// Like the library, the whole directory is read: the last '..' and
	// the first entry naming ino win. The names of the directory read last
	// are kept, since messages often name many entries of one directory
	// (pass 1D lists every file sharing a block).
	nc := c.cachedNames(dir)
	if !nc.ok {
		// The library's read stops at the first entry naming ino: a
		// failure after it does not matter.
		if ino == 0 || !nc.complete {
			return "", true
		}
		if _, found := nc.idx[ino]; !found {
			return "", true
		}
	}
	parent = nc.parent
	if ino != 0 {
		if nc.complete {
			if v, found := nc.idx[ino]; found {
				// A copy: the lookup of the parents below may refill
				// this cache entry (a path deeper than the cache).
				name = append(name, nc.arena[v>>8:v>>8+v&0xFF]...)
			}
		} else {
			c.iterateDirOpt(dir, true, func(e uint32, nm []byte) bool {
				if e == ino {
					name = append(name[:0], nm...)
					return false
				}
				return true
			})
		}
	}
	pname, err := c.pathname(parent, dir, depth-1)
	if err {
		return "", true
	}
	if ino == 0 {
		return pname, false
	}
	ret := ""
	if len(pname) > 1 {
		ret = pname
	}
	ret += "/"
	if len(name) > 0 {
		ret += string(name)
	} else {
		ret += "???"
	}
	return ret, false
}

// maxCachedNames bounds the entries dirNames keeps (about 40 bytes each
// with the name); bigger directories are searched entry by entry.
const maxCachedNames = 1 << 16

// dirNames caches the names of the directory pathname read last. It is
// valid as long as the filesystem is not written (read-only checks).
type dirNames struct {
	valid    bool
	dir      uint32
	ok       bool // the directory could be read to its end
	complete bool // idx holds every entry (false: too many to keep)
	parent   uint32
	idx      map[uint32]uint64 // inode -> offset<<8 | length in arena
	arena    []byte
	writes   uint64 // the device's write count when filled (repair)
}

// devWrites is how many writes fixes have made so far: a cached name
// list is stale once a fix wrote (0 in a read-only check).
func (c *Checker) devWrites() uint64 {
	if !c.repairing() {
		return 0
	}
	return c.fs.Dev.Stats().WriteOps
}

// cachedNames returns the cache entry for dir, filling the least recently
// filled one when dir is not cached. A path lookup walks a chain of
// directories, so several are kept.
func (c *Checker) cachedNames(dir uint32) *dirNames {
	writes := c.devWrites()
	for i := range c.names {
		if c.names[i].valid && c.names[i].dir == dir && c.names[i].writes == writes {
			return &c.names[i]
		}
	}
	nc := &c.names[c.namesNext%uint32(len(c.names))]
	c.namesNext++
	nc.fill(c, dir)
	nc.writes = writes
	return nc
}

// fill reads dir's entries into the cache.
func (d *dirNames) fill(c *Checker, dir uint32) {
	d.valid, d.dir, d.parent, d.complete = true, dir, 0, true
	d.arena = d.arena[:0]
	if d.idx == nil {
		d.idx = map[uint32]uint64{}
	}
	clear(d.idx)
	d.ok = c.iterateDirOpt(dir, true, func(e uint32, nm []byte) bool {
		if string(nm) == ".." {
			d.parent = e
		}
		if !d.complete {
			return true
		}
		if len(d.idx) >= maxCachedNames {
			d.complete = false
			clear(d.idx)
			d.arena = d.arena[:0]
			return true
		}
		if _, seen := d.idx[e]; seen {
			return true // the library stops at the first entry naming ino
		}
		d.idx[e] = uint64(len(d.arena))<<8 | uint64(len(nm))
		d.arena = append(d.arena, nm...)
		return true
	})
}

// isDirInode reads ino's mode from disk (the library's check_directory).
// readable is false when the library's read fails: an inode that cannot
// be read, or whose checksum does not verify (the library checks it on
// every read outside the inode scan), which makes the path "???".
func (c *Checker) isDirInode(ino uint32) (isDir, readable bool) {
	f := c.fs
	if ino == 0 {
		return false, true
	}
	if ino > f.InodesCount {
		return false, false // EXT2_ET_BAD_INODE_NUM
	}
	b := c.getIterBufs()
	defer c.putIterBufs(b)
	if f.ReadInode(ino, b.ibuf, b.scratch) != nil {
		return false, true
	}
	n := ondisk.Inode(b.ibuf)
	if f.MetadataCsum && !n.ChecksumValid(f.CsumSeed, ino) {
		return false, false
	}
	return n.IsDir(), true
}

// utoa is v in decimal.
func utoa(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
