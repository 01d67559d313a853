package test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// Directories both encrypted and casefolded store each entry's hash and
// minor hash in 8 bytes after the name (the name is ciphertext, so the
// hash cannot be computed). Neither the kernel here (no CONFIG_UNICODE)
// nor debugfs can make them, so the images are built by hand: mke2fs -d
// makes plain directories of plain files, then raw writes give every file
// and directory an fscrypt context (an in-inode xattr of index 9, name
// "c") and ENCRYPT_FL, the two directories CASEFOLD_FL, and rewrite their
// entries with ciphertext-like names followed by stored hashes. /dx is
// then indexed by e2fsck -fyD (a SipHash htree over the stored hashes);
// /lin stays linear. Each case corrupts a copy, and gofsck must match
// e2fsck under -fn, -fy and -fyD: transcript, exit status and (for the
// repairs) the repaired image.

// ecSet is one feature set of the encrypted+casefolded images.
type ecSet struct {
	name   string
	bs     int
	csum   bool
	v2     bool // fscrypt context v2 (40 bytes) rather than v1 (28)
	dxEnts int  // entries of /dx (enough for an htree of a few leaves)
	// big: /dx needs an index level under the root (more leaves than
	// the root holds) and pass 2 checks its blocks in several units (256
	// blocks each) in parallel; only the cases in bigCases run.
	big bool
	// inline: inline_data, and /inl an encrypted+casefolded inline
	// directory (one entry); the inl- cases run only here.
	inline bool
}

var ecSets = []ecSet{
	{"4k", 4096, false, true, 220, false, false},
	{"4k-csum", 4096, true, false, 220, false, false},
	{"1k", 1024, false, false, 70, false, false},
	{"1k-csum", 1024, true, true, 70, false, false},
	{"1k-csum-2level", 1024, true, true, 7000, true, false},
	{"4k-csum-inline", 4096, true, true, 220, false, true},
}

// bigCases are the cases run on the big sets.
var bigCases = map[string]bool{"baseline": true, "dx-hash-high": true, "dx-dup-name": true, "dx-dup-name-hash": true,
	"dx-reclen-no-hash": true, "after-D": true}

// ecImg is an image being built or corrupted.
type ecImg struct {
	t    testing.TB
	img  string
	set  ecSet
	seed uint32 // metadata_csum seed
}

// ecEnt is a directory entry found in an image.
type ecEnt struct {
	blk    uint64 // physical block
	lblk   int
	off    int
	ino    uint32
	recLen int
	ft     uint8
	name   []byte
}

const (
	ecLinEnts = 7
	flagIndex = 0x1000
	flagsEC   = 0x40000800 // CASEFOLD | ENCRYPT
)

// ecName is a deterministic ciphertext-like name of n bytes (no NUL, no
// '/', so that only the corruptions show).
func ecName(i, n int) []byte {
	b := make([]byte, n)
	x := uint32(i)*2654435761 + 12345
	for j := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		c := byte(x)
		if c == 0 || c == '/' {
			c = 'A' + byte(j%26)
		}
		b[j] = c
	}
	return b
}

// ecHashes are the stored hashes of entry i: the major hash has its low
// bit clear, as the kernel's.
func ecHashes(i int) (uint32, uint32) {
	x := uint64(i+1) * 0x9E3779B97F4A7C15
	x ^= x >> 29
	return uint32(x>>32) &^ 1, uint32(x)
}

func (e *ecImg) bsz() int { return e.set.bs }

func (e *ecImg) readBlock(b uint64) []byte {
	return testfs.ReadAt(e.t, e.img, int64(b)*int64(e.bsz()), e.bsz())
}

func (e *ecImg) writeBlock(b uint64, buf []byte) {
	testfs.WriteAt(e.t, e.img, int64(b)*int64(e.bsz()), buf)
}

var imapRE = regexp.MustCompile(`Inode (\d+) is part of block group \d+\s+located at block (\d+), offset 0x([0-9a-f]+)`)

// inodeOffsets returns the byte offsets of the inodes (one debugfs run).
func (e *ecImg) inodeOffsets(inos []uint32) map[uint32]int64 {
	e.t.Helper()
	var cmds []string
	for _, ino := range inos {
		cmds = append(cmds, fmt.Sprintf("imap <%d>", ino))
	}
	out := testfs.DebugfsRO(e.t, e.img, cmds...)
	m := map[uint32]int64{}
	for _, s := range imapRE.FindAllStringSubmatch(out, -1) {
		ino, _ := strconv.ParseUint(s[1], 10, 32)
		blk, _ := strconv.ParseInt(s[2], 10, 64)
		off, _ := strconv.ParseInt(s[3], 16, 64)
		m[uint32(ino)] = blk*int64(e.bsz()) + off
	}
	for _, ino := range inos {
		if _, ok := m[ino]; !ok {
			e.t.Fatalf("no imap for inode %d:\n%s", ino, out)
		}
	}
	return m
}

func (e *ecImg) inode(ino uint32) (int64, ondisk.Inode) {
	off := e.inodeOffsets([]uint32{ino})[ino]
	return off, ondisk.Inode(testfs.ReadAt(e.t, e.img, off, 256))
}

// entries lists the live entries of directory p, block by block.
func (e *ecImg) entries(p string) []ecEnt {
	e.t.Helper()
	var out []ecEnt
	bs := e.bsz()
	for i, b := range testfs.Blocks(e.t, e.img, p).Data {
		buf := e.readBlock(b)
		for off := 0; off+8 <= bs; {
			rl := int(binary.LittleEndian.Uint16(buf[off+4:]))
			nl := int(buf[off+6])
			if rl < 8 || off+rl > bs || 8+nl > rl {
				break
			}
			if ino := binary.LittleEndian.Uint32(buf[off:]); ino != 0 {
				out = append(out, ecEnt{blk: b, lblk: i, off: off, ino: ino, recLen: rl, ft: buf[off+7], name: append([]byte(nil), buf[off+8:off+8+nl]...)})
			}
			off += rl
		}
	}
	return out
}

// encryptInodes gives each inode an fscrypt context in its in-inode xattr
// area (the same policy, a nonce of its own) and ENCRYPT_FL, plus extra
// flags for those in more.
func (e *ecImg) encryptInodes(inos []uint32, more map[uint32]uint32) {
	e.t.Helper()
	offs := e.inodeOffsets(inos)
	for _, ino := range inos {
		off := offs[ino]
		n := ondisk.Inode(testfs.ReadAt(e.t, e.img, off, 256))
		extra := int(binary.LittleEndian.Uint16(n[0x80:]))
		body := 128 + extra
		var ctx []byte
		if e.set.v2 {
			ctx = make([]byte, 40)
			ctx[0], ctx[1], ctx[2], ctx[3] = 2, 1, 4, 0
			copy(ctx[8:24], "0123456789abcdef")
			copy(ctx[24:], ecName(int(ino)+1000, 16))
		} else {
			ctx = make([]byte, 28)
			ctx[0], ctx[1], ctx[2], ctx[3] = 1, 1, 4, 0
			copy(ctx[4:12], "keydesc!")
			copy(ctx[12:], ecName(int(ino)+1000, 16))
		}
		// The entry goes after those already there (system.data of an
		// inline inode), its value right after the end marker.
		area := n[body:]
		first := area[4:]
		pos, valuesAt := 0, len(first)
		if binary.LittleEndian.Uint32(area) != ondisk.XattrMagic {
			clear(area)
			binary.LittleEndian.PutUint32(area, ondisk.XattrMagic)
		}
		for pos+4 <= len(first) && binary.LittleEndian.Uint32(first[pos:]) != 0 {
			if sz := binary.LittleEndian.Uint32(first[pos+8:]); sz > 0 {
				valuesAt = min(valuesAt, int(binary.LittleEndian.Uint16(first[pos+2:])))
			}
			pos += (16 + int(first[pos]) + 3) &^ 3
		}
		valueOffs := pos + 24 // entry (16) + "c" padded (4) + end marker (4)
		if valueOffs+len(ctx) > valuesAt {
			e.t.Fatalf("inode %d: no room for the encryption context", ino)
		}
		ent := first[pos:]
		ent[0], ent[1] = 1, 9 // name_len, name_index (encryption)
		binary.LittleEndian.PutUint16(ent[2:], uint16(valueOffs))
		binary.LittleEndian.PutUint32(ent[8:], uint32(len(ctx)))
		binary.LittleEndian.PutUint32(ent[12:], ondisk.XattrValueHash(ondisk.XattrNameHash([]byte("c"), false), ctx))
		ent[16] = 'c'
		clear(ent[20:24])
		copy(first[valueOffs:], ctx)
		binary.LittleEndian.PutUint32(n[0x20:], n.Flags()|0x800|more[ino])
		e.writeInode(ino, off, n)
	}
}

// writeInode writes inode ino at off with its checksum recomputed.
func (e *ecImg) writeInode(ino uint32, off int64, n ondisk.Inode) {
	if e.set.csum {
		n.SetChecksum(e.seed, ino)
	}
	testfs.WriteAt(e.t, e.img, off, n)
}

// setFlags sets the flags of directory p.
func (e *ecImg) setFlags(p string, flags uint32) {
	ino := testfs.Ino(e.t, e.img, p)
	off, n := e.inode(ino)
	binary.LittleEndian.PutUint32(n[0x20:], flags)
	e.writeInode(ino, off, n)
}

// fixLeaf recomputes the checksum tail of a leaf block of directory p.
func (e *ecImg) fixLeaf(p string, blk uint64, buf []byte) {
	if e.set.csum {
		ino := testfs.Ino(e.t, e.img, p)
		_, n := e.inode(ino)
		bs := e.bsz()
		binary.LittleEndian.PutUint32(buf[bs-4:], ondisk.DirLeafChecksum(buf, e.seed, ino, n.Generation()))
	}
	e.writeBlock(blk, buf)
}

// fixDx recomputes the checksum of an htree root (node false) or node.
func (e *ecImg) fixDx(p string, blk uint64, buf []byte, node bool) {
	if e.set.csum {
		ino := testfs.Ino(e.t, e.img, p)
		_, n := e.inode(ino)
		off := 32
		if node {
			off = 8
		}
		limit := int(binary.LittleEndian.Uint16(buf[off:]))
		count := int(binary.LittleEndian.Uint16(buf[off+2:]))
		sum, _, ok := ondisk.DxChecksum(buf, off, limit, count, e.seed, ino, n.Generation())
		if !ok {
			e.t.Fatalf("%s: no dx tail in block %d", p, blk)
		}
		binary.LittleEndian.PutUint32(buf[off+limit*8+4:], sum)
	}
	e.writeBlock(blk, buf)
}

// rewriteDir lays out the entries of directory p again in its blocks
// with the given names and stored hashes: '.' and '..' without hashes,
// every other entry 8 bytes longer, the last of each block taking the
// rest (up to the checksum tail).
func (e *ecImg) rewriteDir(p string, ents []ecEnt, base int) {
	e.t.Helper()
	bs := e.bsz()
	blocks := testfs.Blocks(e.t, e.img, p).Data
	tail := 0
	if e.set.csum {
		tail = 12
	}
	bufs := make([][]byte, len(blocks))
	for i := range bufs {
		bufs[i] = make([]byte, bs)
	}
	bi, off, last := 0, 0, -1
	put := func(ino uint32, ft uint8, name []byte, hashes bool, i int) {
		rl := ondisk.DirRecLen(len(name), 0)
		if hashes {
			rl += 8
		}
		if off+rl > bs-tail {
			binary.LittleEndian.PutUint16(bufs[bi][last+4:], uint16(bs-tail-last))
			bi, off = bi+1, 0
			if bi == len(bufs) {
				e.t.Fatalf("%s: the entries do not fit in %d blocks", p, len(blocks))
			}
		}
		b := bufs[bi]
		binary.LittleEndian.PutUint32(b[off:], ino)
		binary.LittleEndian.PutUint16(b[off+4:], uint16(rl))
		b[off+6], b[off+7] = byte(len(name)), ft
		copy(b[off+8:], name)
		if hashes {
			h, m := ecHashes(base + i)
			hp := off + 8 + (len(name)+3)&^3
			binary.LittleEndian.PutUint32(b[hp:], h)
			binary.LittleEndian.PutUint32(b[hp+4:], m)
		}
		last = off
		off += rl
	}
	for i, en := range ents {
		name := en.name
		if i >= 2 {
			n := 16
			if (base+i)%5 == 0 {
				n = 32
			}
			name = ecName(base+i, n)
		}
		put(en.ino, en.ft, name, i >= 2, i)
	}
	binary.LittleEndian.PutUint16(bufs[bi][last+4:], uint16(bs-tail-last))
	for i := bi + 1; i < len(bufs); i++ {
		binary.LittleEndian.PutUint16(bufs[i][4:], uint16(bs-tail))
	}
	for i, b := range bufs {
		if tail > 0 {
			binary.LittleEndian.PutUint16(b[bs-12+4:], 12)
			b[bs-12+7] = 0xDE
		}
		e.fixLeaf(p, blocks[i], b)
	}
}

// ecBase builds the base image of a set: /dx an encrypted+casefolded
// SipHash htree, /lin an encrypted+casefolded linear directory, /dx/sub
// an empty encrypted+casefolded directory; e2fsck -fn finds it clean.
func ecBase(t *testing.T, set ecSet) string {
	t.Helper()
	feat := "encrypt,casefold"
	if !set.csum {
		feat += ",^metadata_csum"
	}
	if set.inline {
		feat += ",inline_data"
	}
	long := strings.Repeat("n", 36)
	inodes, size := 0, int64(8*mib)
	if set.big {
		inodes, size = 8192, 16*mib
	}
	img := testfs.MkImage(t, testfs.Spec{Size: size, FSType: "ext4", BlockSize: set.bs, InodeSize: 256, Inodes: inodes, Features: feat,
		Populate: func(tr *testfs.Tree) {
			for i := range ecLinEnts {
				tr.File(fmt.Sprintf("lin/%s%03d", long, i), int64(i*10))
			}
			for i := range set.dxEnts {
				tr.File(fmt.Sprintf("dx/%s%03d", long, i), 0)
			}
			tr.Dir("dx/sub")
			if set.inline {
				tr.File("inl/"+long+"000", 0)
			}
			tr.File("plain/file", 10)
		}})
	e := &ecImg{t: t, img: img, set: set}
	sb, err := ondisk.NewSuperblock(testfs.ReadAt(t, img, 1024, 1024))
	if err != nil {
		t.Fatal(err)
	}
	e.seed = sb.CsumSeed()

	// /dx first, then the htree.
	dx := e.entries("/dx")
	var inos []uint32
	for _, en := range dx {
		if string(en.name) != ".." { // not the root
			inos = append(inos, en.ino)
		}
	}
	dxIno, subIno := testfs.Ino(t, img, "/dx"), testfs.Ino(t, img, "/dx/sub")
	e.encryptInodes(inos, map[uint32]uint32{dxIno: 0x40000000, subIno: 0x40000000})
	e.rewriteDir("/dx", dx, 0)
	if out, exit := testfs.E2fsckInPlace(t, img, "-fyD"); exit > 1 || strings.Contains(out, "?") {
		t.Fatalf("e2fsck -fyD on the base (exit %d):\n%s", exit, out)
	}

	lin := e.entries("/lin")
	inos = inos[:0]
	for _, en := range lin {
		if string(en.name) != ".." { // not the root
			inos = append(inos, en.ino)
		}
	}
	linIno := testfs.Ino(t, img, "/lin")
	e.encryptInodes(inos, map[uint32]uint32{linIno: 0x40000000})
	e.rewriteDir("/lin", lin, 1000)

	if set.inline {
		e.inlineDir()
	}

	_, n := e.inode(dxIno)
	if n.Flags()&flagIndex == 0 {
		t.Fatalf("/dx is not indexed after e2fsck -fyD")
	}
	if root := e.readBlock(testfs.Blocks(t, img, "/dx").Data[0]); (root[30] == 1) != set.big {
		t.Fatalf("/dx has %d index levels under its root", root[30])
	}
	if out, exit := testfs.E2fsck(t, img, "-fn"); exit != 0 {
		t.Fatalf("base image not clean (exit %d):\n%s", exit, out)
	}
	return img
}

// inlineDir makes /inl encrypted and casefolded: its one entry gets a
// ciphertext name and hashes (4 + 32 bytes), an empty entry the rest of
// i_block.
func (e *ecImg) inlineDir() {
	ino := testfs.Ino(e.t, e.img, "/inl")
	off, n := e.inode(ino)
	if n.Flags()&0x10000000 == 0 {
		e.t.Fatal("/inl is not inline")
	}
	ib := n[0x28 : 0x28+60]
	file := binary.LittleEndian.Uint32(ib[4:])
	ft := ib[4+7]
	e.encryptInodes([]uint32{ino, file}, map[uint32]uint32{ino: 0x40000000})
	off, n = e.inode(ino)
	ib = n[0x28 : 0x28+60]
	clear(ib[4:])
	binary.LittleEndian.PutUint32(ib[4:], file)
	binary.LittleEndian.PutUint16(ib[8:], 32)
	ib[10], ib[11] = 16, ft
	copy(ib[12:], ecName(2000, 16))
	h, m := ecHashes(2000)
	binary.LittleEndian.PutUint32(ib[28:], h)
	binary.LittleEndian.PutUint32(ib[32:], m)
	binary.LittleEndian.PutUint16(ib[36+4:], 24)
	e.writeInode(ino, off, n)
}

// editInl edits the i_block of /inl.
func (e *ecImg) editInl(edit func(ib []byte)) {
	ino := testfs.Ino(e.t, e.img, "/inl")
	off, n := e.inode(ino)
	edit(n[0x28 : 0x28+60])
	e.writeInode(ino, off, n)
}

// ecCase is one corruption of a copy of the base image.
type ecCase struct {
	name  string
	do    func(e *ecImg)
	modes []string // the runs compared; nil: -fn, -fy, -fyD and -fp
}

// setContext rewrites the fscrypt context of directory p (version byte
// and length), with the xattr entry's hash (over the value padded with
// zeros) and the inode checksum; pad sets the padding bytes to 0xAA
// afterwards.
func (e *ecImg) setContext(p string, version byte, size int, pad bool) {
	ino := testfs.Ino(e.t, e.img, p)
	off, n := e.inode(ino)
	body := 128 + int(binary.LittleEndian.Uint16(n[0x80:]))
	ent := n[body+4:]
	v := ent[24 : 24+size]
	v[0] = version
	clear(ent[24+size : 24+(size+3)&^3]) // the padding is hashed too
	binary.LittleEndian.PutUint32(ent[8:], uint32(size))
	binary.LittleEndian.PutUint32(ent[12:], ondisk.XattrValueHash(ondisk.XattrNameHash([]byte("c"), false), v))
	if pad {
		for i := 24 + size; i < 24+(size+3)&^3; i++ {
			ent[i] = 0xAA
		}
	}
	e.writeInode(ino, off, n)
}

// contextToBlock moves the fscrypt context of directory p into an EA
// block (which debugfs allocates, for a big user attribute, before the
// block is written again with the context alone); edit, if set, changes
// the block before its checksum is computed.
func (e *ecImg) contextToBlock(p string, edit func(b []byte)) {
	e.t.Helper()
	val := filepath.Join(e.t.TempDir(), "value")
	if err := os.WriteFile(val, bytes.Repeat([]byte("v"), 600), 0o644); err != nil {
		e.t.Fatal(err)
	}
	ino := testfs.Ino(e.t, e.img, p)
	_, n := e.inode(ino)
	body := 128 + int(binary.LittleEndian.Uint16(n[0x80:]))
	ent := n[body+4:]
	ctx := append([]byte(nil), ent[24:24+binary.LittleEndian.Uint32(ent[8:])]...)
	e.dbg(fmt.Sprintf("ea_set -f %s <%d> user.big", val, ino))
	off, n := e.inode(ino)
	blk := n.FileACL(true)
	if blk == 0 {
		e.t.Fatalf("%s has no EA block", p)
	}
	clear(n[body : body+4]) // no in-inode attributes
	e.writeInode(ino, off, n)
	bs := e.bsz()
	b := make([]byte, bs)
	binary.LittleEndian.PutUint32(b, ondisk.XattrMagic)
	binary.LittleEndian.PutUint32(b[4:], 1) // h_refcount
	binary.LittleEndian.PutUint32(b[8:], 1) // h_blocks
	offs := bs - (len(ctx)+3)&^3
	en := b[32:]
	en[0], en[1] = 1, 9
	binary.LittleEndian.PutUint16(en[2:], uint16(offs))
	binary.LittleEndian.PutUint32(en[8:], uint32(len(ctx)))
	h := ondisk.XattrValueHash(ondisk.XattrNameHash([]byte("c"), false), ctx)
	binary.LittleEndian.PutUint32(en[12:], h)
	en[16] = 'c'
	copy(b[offs:], ctx)
	binary.LittleEndian.PutUint32(b[12:], h) // h_hash of the one entry
	if edit != nil {
		edit(b)
	}
	if e.set.csum {
		binary.LittleEndian.PutUint32(b[16:], ondisk.XattrBlock(b).ComputeChecksum(e.seed, blk))
	}
	e.writeBlock(blk, b)
}

// dbg runs debugfs -w commands and fails if debugfs complained.
func (e *ecImg) dbg(cmds ...string) {
	e.t.Helper()
	(&cx{t: e.t, img: e.img}).dbg(cmds...)
}

// strict sets EXT4_ENC_STRICT_MODE_FL (names of casefolded directories
// are checked and compared folded in pass 2).
func (e *ecImg) strict() {
	e.editSuper(func(sb []byte) { binary.LittleEndian.PutUint16(sb[0x27E:], 1) })
}

// editSuper edits the primary superblock and recomputes its checksum.
func (e *ecImg) editSuper(edit func(sb []byte)) {
	sb, err := ondisk.NewSuperblock(testfs.ReadAt(e.t, e.img, 1024, 1024))
	if err != nil {
		e.t.Fatal(err)
	}
	edit(sb)
	if e.set.csum {
		sb.SetChecksum()
	}
	testfs.WriteAt(e.t, e.img, 1024, sb)
}

// linEnt returns entry i of /lin (0 '.', 1 '..').
func (e *ecImg) linEnt(i int) (ecEnt, []byte) {
	ents := e.entries("/lin")
	if i >= len(ents) {
		e.t.Fatalf("/lin has %d entries", len(ents))
	}
	return ents[i], e.readBlock(ents[i].blk)
}

// dxLeafEnts returns the entries of /dx in leaf blocks (lblk > 0).
func (e *ecImg) dxLeafEnts() []ecEnt {
	var out []ecEnt
	for _, en := range e.entries("/dx") {
		if en.lblk > 0 {
			out = append(out, en)
		}
	}
	if len(out) < 10 {
		e.t.Fatalf("/dx has %d leaf entries", len(out))
	}
	return out
}

// hashAt is the offset of the stored hash of en in its block.
func hashAt(en ecEnt) int { return en.off + 8 + (len(en.name)+3)&^3 }

func ecCases() []ecCase {
	return []ecCase{
		{"baseline", func(e *ecImg) {}, nil},
		// A name 4 bytes longer: it fits the rec_len, its hash does not.
		{"lin-name-over-hash", func(e *ecImg) {
			en, b := e.linEnt(3)
			b[en.off+6] += 4
			e.fixLeaf("/lin", en.blk, b)
		}, nil},
		// rec_len without room for the hash; the hash bytes follow as a
		// bogus entry.
		{"lin-reclen-no-hash", func(e *ecImg) {
			en, b := e.linEnt(4)
			binary.LittleEndian.PutUint16(b[en.off+4:], uint16(en.recLen-8))
			e.fixLeaf("/lin", en.blk, b)
		}, nil},
		// The last entry runs past the block: salvaged when its name and
		// hash fit what is left.
		{"lin-last-overrun", func(e *ecImg) {
			ents := e.entries("/lin")
			en := ents[len(ents)-1]
			b := e.readBlock(en.blk)
			binary.LittleEndian.PutUint16(b[en.off+4:], uint16(en.recLen+16))
			e.fixLeaf("/lin", en.blk, b)
		}, nil},
		// An 8-byte entry before the last.
		{"lin-8-byte-entry", func(e *ecImg) {
			en, b := e.linEnt(2)
			binary.LittleEndian.PutUint16(b[en.off+4:], 8)
			e.fixLeaf("/lin", en.blk, b)
		}, nil},
		{"lin-no-casefold", func(e *ecImg) {
			_, n := e.inode(testfs.Ino(e.t, e.img, "/lin"))
			e.setFlags("/lin", n.Flags()&^0x40000000)
		}, nil},
		{"lin-no-encrypt-xattr", func(e *ecImg) {
			off, n := e.inode(testfs.Ino(e.t, e.img, "/lin"))
			body := 128 + int64(binary.LittleEndian.Uint16(n[0x80:]))
			copy(n[body:], make([]byte, 4))
			e.writeInode(testfs.Ino(e.t, e.img, "/lin"), off, n)
		}, nil},
		// The inline directory's entry: a name over its hash, a rec_len
		// without the hash (the hash bytes then read as an entry).
		{"inl-name-over-hash", func(e *ecImg) { e.editInl(func(ib []byte) { ib[10] = 20 }) }, nil},
		{"inl-reclen-no-hash", func(e *ecImg) { e.editInl(func(ib []byte) { ib[8] = 24 }) }, nil},
		// Ciphertext shorter than a cipher block.
		{"lin-short-name", func(e *ecImg) {
			en, b := e.linEnt(3)
			b[en.off+6] = 8
			e.fixLeaf("/lin", en.blk, b)
		}, nil},
		// An entry with no name in a leaf: pass 2 clears it, a rebuild
		// that meets it fails.
		{"dx-zero-name-len", func(e *ecImg) {
			en := e.dxLeafEnts()[5]
			b := e.readBlock(en.blk)
			b[en.off+6] = 0
			e.fixLeaf("/dx", en.blk, b)
		}, nil},
		// A context e2fsck cannot use: the directory has no policy, its
		// entries are checked as plain ones.
		{"lin-corrupt-context", func(e *ecImg) { e.setContext("/lin", 0, 28, false) }, nil},
		{"lin-context-bad-size", func(e *ecImg) { e.setContext("/lin", 1, 27, false) }, nil},
		// The entry hash covers the padding after the value as it is
		// on disk: here not zero, so the hash is wrong.
		{"lin-context-padding", func(e *ecImg) { e.setContext("/lin", 1, 27, true) }, nil},
		// An encrypted file whose inode checksum fails: the library
		// refuses to read its attributes, so e2fsck finds no context.
		{"lin-file-inode-csum", func(e *ecImg) {
			en, _ := e.linEnt(3)
			off, n := e.inode(en.ino)
			n[8]++ // i_atime, the checksum left as it was
			testfs.WriteAt(e.t, e.img, off, n)
		}, nil},
		// The context in an EA block: found there; then the block's
		// entry hash wrong, and its checksum wrong (metadata_csum only):
		// the library reads no attribute at all.
		{"lin-context-in-block", func(e *ecImg) { e.contextToBlock("/lin", nil) }, nil},
		{"lin-context-block-hash", func(e *ecImg) {
			e.contextToBlock("/lin", func(b []byte) { b[32+12]++ })
		}, nil},
		{"lin-context-block-csum", func(e *ecImg) {
			e.contextToBlock("/lin", nil)
			if e.set.csum {
				blk := testfs.Blocks(e.t, e.img, "/lin").FileACL
				b := e.readBlock(blk)
				b[16]++
				e.writeBlock(blk, b)
			}
		}, nil},
		// An unknown version is a policy all the same.
		{"lin-context-v9", func(e *ecImg) { e.setContext("/lin", 9, 28, false) }, nil},
		// Both directories as e2fsck -fyD leaves them: /lin packed with '.'
		// and '..' 8 bytes longer, which the next rebuild reads '..' of
		// as an entry with a hash.
		{"after-D", func(e *ecImg) { testfs.E2fsckInPlace(e.t, e.img, "-fyD") }, nil},
		{"after-D-lin-reclen-no-hash", func(e *ecImg) {
			testfs.E2fsckInPlace(e.t, e.img, "-fyD")
			en, b := e.linEnt(4)
			binary.LittleEndian.PutUint16(b[en.off+4:], uint16(en.recLen-8))
			e.fixLeaf("/lin", en.blk, b)
		}, nil},
		{"lin-dup-name", func(e *ecImg) {
			a, b := e.linEnt(3)
			c, _ := e.linEnt(4)
			copy(b[c.off+8:], a.name)
			b[c.off+6] = byte(len(a.name))
			if len(a.name) != len(c.name) {
				e.t.Fatal("names of different lengths")
			}
			e.fixLeaf("/lin", a.blk, b)
		}, nil},
		// A stored hash outside its leaf's range.
		{"dx-hash-high", func(e *ecImg) {
			en := e.dxLeafEnts()[1]
			b := e.readBlock(en.blk)
			binary.LittleEndian.PutUint32(b[hashAt(en):], 0xfffffff0)
			e.fixLeaf("/dx", en.blk, b)
		}, nil},
		// The first entry of the last leaf with a zero hash.
		{"dx-hash-zero", func(e *ecImg) {
			ents := e.dxLeafEnts()
			lastLeaf := ents[len(ents)-1].lblk
			for _, en := range ents {
				if en.lblk == lastLeaf {
					b := e.readBlock(en.blk)
					binary.LittleEndian.PutUint32(b[hashAt(en):], 0)
					e.fixLeaf("/dx", en.blk, b)
					return
				}
			}
		}, nil},
		// Minor hashes changed: nothing checks them, the rebuild sorts by
		// them among equal hashes.
		{"dx-equal-hashes", func(e *ecImg) {
			ents := e.dxLeafEnts()
			a, c := ents[2], ents[3]
			b := e.readBlock(a.blk)
			h := binary.LittleEndian.Uint32(b[hashAt(a):])
			binary.LittleEndian.PutUint32(b[hashAt(c):], h)
			binary.LittleEndian.PutUint32(b[hashAt(c)+4:], 7)
			binary.LittleEndian.PutUint32(b[hashAt(a)+4:], 9)
			e.fixLeaf("/dx", a.blk, b)
		}, nil},
		// Not -fn: with the wrong hash kept, e2fsck hashes the ciphertext
		// with half-MD4 after folding it, and for a name that does not
		// fold it keeps its hash variable as it was (uninitialized on
		// entry to check_dir_block): what it then reports depends on the
		// stack.
		{"dx-root-not-siphash", func(e *ecImg) {
			blk := testfs.Blocks(e.t, e.img, "/dx").Data[0]
			b := e.readBlock(blk)
			b[28] = 1
			e.fixDx("/dx", blk, b, false)
		}, []string{"-fy", "-fyD"}},
		{"dx-no-index-flag", func(e *ecImg) {
			_, n := e.inode(testfs.Ino(e.t, e.img, "/dx"))
			e.setFlags("/dx", n.Flags()&^flagIndex)
		}, nil},
		{"dx-no-encrypt-flag", func(e *ecImg) {
			_, n := e.inode(testfs.Ino(e.t, e.img, "/dx"))
			e.setFlags("/dx", n.Flags()&^0x800)
		}, nil},
		// Two entries of a leaf with the same ciphertext name.
		{"dx-dup-name", func(e *ecImg) {
			ents := e.dxLeafEnts()
			for i := 1; i < len(ents); i++ {
				a, c := ents[i-1], ents[i]
				if a.blk == c.blk && len(a.name) == len(c.name) {
					b := e.readBlock(a.blk)
					copy(b[c.off+8:], a.name)
					e.fixLeaf("/dx", a.blk, b)
					return
				}
			}
			e.t.Fatal("no two names of one length in a leaf")
		}, nil},
		// Two entries of a leaf with the same name and stored hashes: the
		// rebuild cannot rename an encrypted name and drops the second.
		{"dx-dup-name-hash", func(e *ecImg) {
			ents := e.dxLeafEnts()
			for i := 1; i < len(ents); i++ {
				a, c := ents[i-1], ents[i]
				if a.blk == c.blk && len(a.name) == len(c.name) {
					b := e.readBlock(a.blk)
					copy(b[c.off+8:], b[a.off+8:a.off+a.recLen])
					e.fixLeaf("/dx", a.blk, b)
					return
				}
			}
			e.t.Fatal("no two names of one length in a leaf")
		}, nil},
		// In strict mode pass 2 compares names folded: ciphertext that
		// does not fold is never a duplicate.
		{"strict-dx-dup-name-hash", func(e *ecImg) {
			e.strict()
			ents := e.dxLeafEnts()
			for i := 1; i < len(ents); i++ {
				a, c := ents[i-1], ents[i]
				if a.blk == c.blk && len(a.name) == len(c.name) {
					b := e.readBlock(a.blk)
					copy(b[c.off+8:], b[a.off+8:a.off+a.recLen])
					e.fixLeaf("/dx", a.blk, b)
					return
				}
			}
			e.t.Fatal("no two names of one length in a leaf")
		}, nil},
		{"strict-baseline", func(e *ecImg) { e.strict() }, nil},
		// Without the casefold feature the flags are cleared (-y) or kept
		// (-n, where e2fsck still counts the directories as casefolded).
		{"no-casefold-feature", func(e *ecImg) {
			e.editSuper(func(sb []byte) {
				binary.LittleEndian.PutUint32(sb[0x60:], binary.LittleEndian.Uint32(sb[0x60:])&^0x20000)
			})
		}, nil},
		// Without the casefold feature names compare as bytes: the
		// rebuild finds the duplicate (and drops it, -y).
		{"no-casefold-feature-dup", func(e *ecImg) {
			e.editSuper(func(sb []byte) {
				binary.LittleEndian.PutUint32(sb[0x60:], binary.LittleEndian.Uint32(sb[0x60:])&^0x20000)
			})
			ents := e.dxLeafEnts()
			for i := 1; i < len(ents); i++ {
				a, c := ents[i-1], ents[i]
				if a.blk == c.blk && len(a.name) == len(c.name) {
					b := e.readBlock(a.blk)
					copy(b[c.off+8:], b[a.off+8:a.off+a.recLen])
					e.fixLeaf("/dx", a.blk, b)
					return
				}
			}
			e.t.Fatal("no two names of one length in a leaf")
		}, nil},
		// A plain casefolded directory of two blocks and more (indexed by
		// -D) with two names folding alike: the second is renamed, and
		// its new name ("abcde\xc3~0") does not fold, so it keeps its
		// hashes (the library's error is ignored there).
		{"cf-dup-rename-unfoldable", func(e *ecImg) {
			cmds := []string{"mkdir /cfd"}
			for i := range 250 {
				cmds = append(cmds, fmt.Sprintf("write /dev/null /cfd/file-name-number-%d", i))
			}
			cmds = append(cmds, "write /dev/null /cfd/abcde\u00e9", "write /dev/null /cfd/ABCDE\u00e9")
			e.dbg(cmds...)
			e.setFlags("/cfd", 0x40080000)
		}, nil},
		// The same in the linear directory, the copy in the last entry.
		{"lin-dup-name-hash", func(e *ecImg) {
			ents := e.entries("/lin")
			a, c := ents[2], ents[len(ents)-1]
			b := e.readBlock(a.blk)
			h := hashAt(a) + 8
			b[c.off+6] = byte(len(a.name))
			copy(b[c.off+8:], b[a.off+8:h])
			e.fixLeaf("/lin", a.blk, b)
		}, nil},
		// The htree's second leaf: every entry given the same hash and
		// minor hash as the first (collisions across the whole leaf).
		{"dx-leaf-one-hash", func(e *ecImg) {
			var first *ecEnt
			ents := e.dxLeafEnts()
			for i := range ents {
				en := ents[i]
				if en.lblk != 2 {
					continue
				}
				b := e.readBlock(en.blk)
				if first == nil {
					first = &ents[i]
					continue
				}
				copy(b[hashAt(en):hashAt(en)+8], b[hashAt(*first):hashAt(*first)+8])
				e.fixLeaf("/dx", en.blk, b)
			}
		}, nil},
		// An entry of a leaf whose rec_len leaves no room for its hash.
		{"dx-reclen-no-hash", func(e *ecImg) {
			en := e.dxLeafEnts()[4]
			b := e.readBlock(en.blk)
			binary.LittleEndian.PutUint16(b[en.off+4:], uint16(en.recLen-8))
			e.fixLeaf("/dx", en.blk, b)
		}, nil},
	}
}

// TestEncCasefold compares gofsck with e2fsck on encrypted+casefolded
// directories (see ecSet): -fn, -fy and -fyD must give the same
// transcript and exit status, and the repairs the same image.
func TestEncCasefold(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	testfs.GofsckPath(t)
	for _, set := range ecSets {
		t.Run(set.name, func(t *testing.T) {
			t.Parallel()
			base := ecBase(t, set)
			if *diffKeep != "" {
				copyTo(t, base, filepath.Join(*diffKeep, "enccf-"+set.name+".img"))
			}
			for _, cs := range ecCases() {
				if set.big && !bigCases[cs.name] || !set.inline && strings.HasPrefix(cs.name, "inl-") {
					continue
				}
				// The default tier: a fixed third of the cases, and the
				// baseline of every set.
				if cs.name != "baseline" && !testfs.InSample(set.name+"/"+cs.name, 3) {
					continue
				}
				t.Run(cs.name, func(t *testing.T) {
					img := testfs.CopyImage(t, base)
					e := &ecImg{t: t, img: img, set: set}
					sb, _ := ondisk.NewSuperblock(testfs.ReadAt(t, img, 1024, 1024))
					e.seed = sb.CsumSeed()
					cs.do(e)
					if *diffKeep != "" {
						copyTo(t, img, filepath.Join(*diffKeep, "enccf-"+set.name+"-"+cs.name+".img"))
					}
					modes := cs.modes
					if modes == nil {
						modes = []string{"-fn", "-fy", "-fyD", "-fp"}
					}
					for _, mode := range modes {
						why, bytesOnly := ecCompare(t, img, mode)
						if bytesOnly {
							why, _ = ecCompare(t, img, mode)
						}
						if why != "" {
							t.Errorf("%s: %s", mode, why)
						}
					}
				})
			}
		})
	}
}

// ecCompare runs gofsck and e2fsck with args on copies of img and returns
// how they disagree ("" when they do not), and whether only the repaired
// bytes differ.
func ecCompare(t *testing.T, img, args string) (string, bool) {
	gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
	gout, gexit, eout, eexit := checkPair(t, gimg, eimg, args)
	g, e := transcript(gout, gimg), transcript(eout, eimg)
	if gexit != eexit || g != e {
		return fmt.Sprintf("exit %d, e2fsck %d; %s\n--- e2fsck:\n%s--- gofsck:\n%s",
			gexit, eexit, firstDiffLine(e, g), e, g), false
	}
	if off, ok := sameRepairedBytes(t, gimg, eimg); !ok {
		return fmt.Sprintf("images differ first at byte %d (block %d)", off, off/int(testfs.BlockSize(t, img))), true
	}
	return "", false
}
