// Package casefold folds file names the way ext4's casefold feature does
// (s_encoding utf8-12.1, EXT4_CASEFOLD_FL directories), as libext2fs
// 1.47.0 folds them for e2fsck: names in a casefolded directory are hashed
// and compared after this folding.
//
// The folding is the one the kernel and libext2fs call "nfdicf", computed
// per character and applied to a fixed point: a character with a full case
// folding (CaseFolding.txt status C or F, so "ß" and "ẞ" become "ss" and
// "ﬁ" "fi") becomes its folding, any other character its canonical
// decomposition (NFD, not NFKD: "ª" and "²" stay), Hangul syllables their
// jamo, Default_Ignorable_Code_Point characters nothing. Code points Unicode
// 12.1 does not assign stay themselves, starters.
//
// The folded bytes are what libext2fs's cursor (utf8byte) yields, which
// this package reproduces rather than a textbook normalization: each run
// of non-starters comes out sorted, stably, by canonical combining class,
// an ignorable character ends such a run although it leaves nothing, and
// a continuation byte that follows a character is copied out as it is,
// wherever the cursor meets it (so after a decomposed character it may
// come out twice). Folding fails (Invalid) when a byte that starts a
// sequence does not start a well-formed UTF-8 encoding of a code point
// (overlong forms, surrogates, values past U+10FFFF, truncated sequences);
// a name whose first byte is a continuation byte is Opaque: libext2fs
// hashes it unfolded. Checking a name (InvalidAt, strict mode) looks up
// every character, stray continuation bytes included.
//
// Unicode versions: the tables come from golang.org/x/text (cases.Fold,
// unicode/norm, rangetable.Assigned("12.0.0") plus U+32FF, the one
// character 12.1 added). They are newer than 12.1 (15.0 with this Go), so
// characters assigned later are kept out before any lookup, and Unicode's
// stability policies keep the foldings, decompositions and combining
// classes of older ones. x/text's Fold lowers the Cherokee letters, which
// CaseFolding.txt folds to upper case: they are folded here. The
// Default_Ignorable_Code_Point list is 12.1's (below). The tests compare
// the hash of every code point, and of random sequences of marks,
// ignorables, decomposable characters and broken UTF-8, with libext2fs's
// (debugfs dx_hash -c).
package casefold

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"
)

// Encoding numbers (s_encoding) and flags (s_encoding_flags).
const (
	UTF8_12_1  = 1      // EXT4_ENC_UTF8_12_1
	FlagStrict = 0x0001 // EXT4_ENC_STRICT_MODE_FL: reject invalid names
)

// Known reports whether libext2fs can load encoding enc; e2fsck refuses a
// casefold filesystem whose s_encoding it does not know.
func Known(enc uint16) bool { return enc == UTF8_12_1 }

// MaxFolded is the longest folded name: libext2fs folds into a PATH_MAX
// buffer that must also hold the terminating NUL.
const MaxFolded = 4095

// Status says how a name folded.
type Status uint8

const (
	// OK: the name folded.
	OK Status = iota
	// Opaque: the name starts with a UTF-8 continuation byte. libext2fs
	// treats it as an opaque byte sequence and hashes it unfolded.
	Opaque
	// Invalid: the name holds a byte sequence that is not a character of
	// the encoding (or its folded form exceeds MaxFolded, or the name
	// MaxName). libext2fs's hash function fails for it.
	Invalid
)

// MaxName is the longest name handled: a directory entry's name_len is
// one byte.
const MaxName = 255

// Canonical combining classes with a meaning to the cursor.
const (
	stopper = 0   // a starter: ends a run of characters to reorder
	maxCCC  = 254 // the highest class a character can have
)

// leaf is what the folding table says about the character at one offset
// of a name: its class, or that it is replaced by a string (its folded,
// decomposed form; empty for an ignorable character).
type leaf struct {
	state     uint8 // 0 not looked up yet, 1 found, 2 no such character
	ccc       uint8
	decompose bool
	size      uint8  // bytes of the character's UTF-8 sequence
	off       uint16 // the replacement string in cursor.arena, NUL-terminated
}

// arenaSize bounds the replacement strings of one name: at most MaxName
// characters, each replaced by a few characters.
const arenaSize = 8192

// cursor yields the folded form of a name one byte at a time, as
// libext2fs's utf8byte does. Its positions are offsets into the name, or,
// while p >= 0, into arena (p is then where the name resumes). Runs of
// non-starters come out sorted by class through repeated scans: the first
// finds the lowest class, each later one emits a class and finds the next;
// ss/sp/sn save where the run starts.
type cursor struct {
	name      []byte
	n         int // name bytes left
	s, p      int
	ss, sp    int
	sn        int
	ccc, nccc int
	leaves    [MaxName]leaf
	arena     [arenaSize]byte
	used      int
	x         scratch
	cache     *cache
}

// start sets the cursor on name; it returns false for an opaque name.
func (c *cursor) start(name []byte) bool {
	if len(name) > 0 && name[0]&0xC0 == 0x80 {
		return false
	}
	c.name = name
	c.n = len(name)
	c.s, c.p, c.ss, c.sp, c.sn = 0, -1, -1, -1, 0
	c.ccc, c.nccc = stopper, stopper
	c.used = 0
	clear(c.leaves[:min(len(name), MaxName)])
	return true
}

// at returns the byte at position s (in arena while p >= 0).
func (c *cursor) at(s int, inArena bool) byte {
	if inArena {
		return c.arena[s]
	}
	return c.name[s]
}

// seqLen is the length of the UTF-8 sequence a lead byte announces
// (libext2fs's utf8clen, which does not check the byte).
func seqLen(b byte) int {
	n := 1
	if b >= 0xC0 {
		n++
	}
	if b >= 0xE0 {
		n++
	}
	if b >= 0xF0 {
		n++
	}
	return n
}

// lookupName returns the leaf of the character at offset s of the name,
// whose sequence must end within n bytes; ok is false when the bytes are
// not a character.
func (c *cursor) lookupName(s, n int) (*leaf, bool) {
	if s >= MaxName {
		return nil, false
	}
	l := &c.leaves[s]
	if l.state == 0 {
		l.state = 2
		r, size := utf8.DecodeRune(c.name[s : s+n])
		if r != utf8.RuneError || size > 1 {
			exp, ccc, ok := c.cache.expansion(r, &c.x)
			if ok && c.store(l, exp) {
				l.state = 1
				l.ccc = ccc
				l.size = uint8(size)
			}
		}
	}
	return l, l.state == 1
}

// store records the leaf's replacement string, if any, in the arena.
func (c *cursor) store(l *leaf, exp []rune) bool {
	if exp == nil {
		return true
	}
	l.decompose = true
	l.off = uint16(c.used)
	for _, r := range exp {
		if c.used+utf8.UTFMax+1 > len(c.arena) {
			return false
		}
		c.used += utf8.EncodeRune(c.arena[c.used:], r)
	}
	c.arena[c.used] = 0
	c.used++
	return true
}

// arenaCCC is the class of the character at offset s of the arena: a
// character of a replacement string is its own folded form.
func (c *cursor) arenaCCC(s int) uint8 {
	r, _ := utf8.DecodeRune(c.arena[s:])
	return class(r)
}

// next returns the next byte of the folded name, 0 at its end, or -1 when
// the name holds something that is not a character.
func (c *cursor) next() int {
	for steps := 0; steps < 1<<16; steps++ {
		var cc int
		if c.p >= 0 && c.arena[c.s] == 0 {
			c.s, c.p = c.p, -1 // end of a replacement string
		}
		inArena := c.p >= 0
		if !inArena && (c.n == 0 || c.name[c.s] == 0) {
			if c.ccc == stopper {
				return 0
			}
			cc = stopper // the end of the name ends a scan
			goto mismatch
		}
		if b := c.at(c.s, inArena); b&0xC0 == 0x80 {
			// A continuation byte goes out as it is, wherever it is.
			if !inArena {
				c.n--
			}
			c.s++
			return int(b)
		}
		if inArena {
			cc = int(c.arenaCCC(c.s))
		} else {
			l, ok := c.lookupName(c.s, c.n)
			if !ok {
				return -1
			}
			cc = int(l.ccc)
			if l.decompose {
				size := int(l.size)
				c.n -= size
				c.p = c.s + size
				c.s = int(l.off)
				inArena = true
				if c.arena[c.s] == 0 {
					// An ignorable character: nothing, but a stopper.
					if c.ccc == stopper {
						continue
					}
					cc = stopper
					goto mismatch
				}
				cc = int(c.arenaCCC(c.s))
			}
		}
		if cc != stopper && c.ccc < cc && cc < c.nccc {
			c.nccc = cc
		}
		if cc == c.ccc {
			b := c.at(c.s, inArena)
			if !inArena {
				c.n--
			}
			c.s++
			return int(b)
		}
	mismatch:
		inArena = c.p >= 0
		switch {
		case c.nccc == stopper:
			// Start scanning a run: find its lowest class first.
			c.ccc = -1
			c.nccc = cc
			c.sp, c.ss, c.sn = c.p, c.s, c.n
			size := seqLen(c.at(c.s, inArena))
			if !inArena {
				c.n -= size
			}
			c.s += size
		case cc != stopper:
			// Not the class being emitted: skip it.
			size := seqLen(c.at(c.s, inArena))
			if !inArena {
				c.n -= size
			}
			c.s += size
		case c.nccc != maxCCC+1:
			// End of the run: go back and emit the next class.
			c.ccc, c.nccc = c.nccc, maxCCC+1
			c.s, c.p, c.n = c.ss, c.sp, c.sn
		default:
			// Every class emitted: go on after the run.
			c.ccc, c.nccc = stopper, stopper
			c.sp, c.ss, c.sn = -1, -1, 0
		}
	}
	return -1
}

// Folder folds and compares names. It owns the scratch space, so neither
// allocates; the zero value is ready to use. A Folder is not safe for
// concurrent use.
type Folder struct {
	cur   [2]cursor
	out   [MaxFolded + 1]byte
	cache cache
}

// Fold returns the folded form of name and how it folded (libext2fs's
// utf8_casefold). The result is valid until the next call; it is nil
// unless the status is OK. Names of ASCII characters fold without looking
// anything up.
func (f *Folder) Fold(name []byte) ([]byte, Status) {
	if len(name) > 0 && name[0]&0xC0 == 0x80 {
		return nil, Opaque
	}
	if len(name) > MaxName {
		return nil, Invalid
	}
	out := f.out[:0]
	if isASCII(name) {
		for _, b := range name {
			if b == 0 {
				break
			}
			out = append(out, lower(b))
		}
		return out, OK
	}
	c := &f.cur[0]
	c.cache = &f.cache
	c.start(name)
	for len(out) <= MaxFolded {
		switch b := c.next(); {
		case b < 0:
			return nil, Invalid
		case b == 0:
			return out, OK
		default:
			out = append(out, byte(b))
		}
	}
	return nil, Invalid
}

// Compare is libext2fs's ext2fs_casefold_cmp: the byte order of the folded
// forms of a and b, compared as streams. It returns -1 as soon as either
// stream fails (an opaque name at once, an invalid one where its folding
// meets the bad bytes), so two names compare equal only when both are
// valid and fold to the same bytes.
func (f *Folder) Compare(a, b []byte) int {
	if len(a) > MaxName || len(b) > MaxName {
		return -1
	}
	if isASCII(a) && isASCII(b) && (len(a) == 0 || a[0] != 0) {
		for i := 0; ; i++ {
			x, y := 0, 0
			if i < len(a) {
				x = int(lower(a[i]))
			}
			if i < len(b) {
				y = int(lower(b[i]))
			}
			if x != y {
				return x - y
			}
			if x == 0 {
				return 0
			}
		}
	}
	ca, cb := &f.cur[0], &f.cur[1]
	ca.cache, cb.cache = &f.cache, &f.cache
	if !ca.start(a) || !cb.start(b) {
		return -1
	}
	for {
		x, y := ca.next(), cb.next()
		if x < 0 || y < 0 {
			return -1
		}
		if x != y {
			return x - y
		}
		if x == 0 {
			return 0
		}
	}
}

// Equal reports whether a and b are both valid and fold to the same bytes.
func (f *Folder) Equal(a, b []byte) bool { return f.Compare(a, b) == 0 }

// InvalidAt returns the offset of the first byte of name that does not
// start a character of the encoding, or -1 when the name is valid
// (libext2fs's utf8_validate). Checking stops at a NUL byte.
func InvalidAt(name []byte) int {
	for i := 0; i < len(name) && name[i] != 0; {
		b := name[i]
		if b < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(name[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return -1
}

func isASCII(name []byte) bool {
	for _, b := range name {
		if b >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// maxExpansion bounds the characters one character folds to.
const maxExpansion = 32

// cache remembers the expansions of recently seen characters (the names
// of one directory tend to share them), direct-mapped by code point.
type cache struct {
	slot [256]cached
}

type cached struct {
	r    rune // the character + 1; 0: empty slot
	ccc  uint8
	kind uint8 // 0 itself, 1 replaced by exp[:n]
	n    uint8
	exp  [6]rune
}

// expansion is scratch.expansion through the cache; the returned slice
// stays valid until the next call.
func (k *cache) expansion(r rune, x *scratch) ([]rune, uint8, bool) {
	e := &k.slot[uint32(r)%uint32(len(k.slot))]
	if e.r == r+1 {
		if e.kind == 0 {
			return nil, e.ccc, true
		}
		n := copy(x.runes[:], e.exp[:e.n])
		return x.runes[:n], 0, true
	}
	exp, ccc, ok := x.expansion(r)
	if ok && len(exp) <= len(e.exp) {
		e.r, e.ccc, e.kind, e.n = r+1, ccc, 0, 0
		if exp != nil {
			e.kind, e.n = 1, uint8(copy(e.exp[:], exp))
		}
	}
	return exp, ccc, ok
}

// maxDepth bounds the nesting of mappings: they reach a fixed point in
// two or three steps.
const maxDepth = 8

// scratch is the working space of expansion; it lives in the cursor (the
// case folder's interface would move stack buffers to the heap).
type scratch struct {
	runes [maxExpansion]rune
	enc   [maxDepth + 1][utf8.UTFMax]byte
	fold  [maxDepth + 1][4 * utf8.UTFMax]byte
}

// expansion returns what character r folds to: nil when it stays itself
// (ccc is then its class), an empty non-nil slice for an ignorable
// character. ok is false if the expansion is too long.
func (x *scratch) expansion(r rune) (exp []rune, ccc uint8, ok bool) {
	buf := x.runes[:0]
	switch {
	case r < utf8.RuneSelf:
		if 'A' <= r && r <= 'Z' {
			return append(buf, r+'a'-'A'), 0, true
		}
		return nil, 0, true
	case ignorable(r):
		return buf, 0, true
	case !assigned(r):
		return nil, 0, true // unassigned in 12.1: itself, a starter
	}
	exp, ok = x.expand(r, buf, 0)
	if !ok {
		return nil, 0, false
	}
	if len(exp) == 1 && exp[0] == r {
		return nil, class(r), true
	}
	return exp, 0, true
}

// expand appends the fixed point of r's mappings to buf: the full case
// folding if r has one, else its canonical decomposition (Hangul
// syllables: their jamo), each character of the result mapped again;
// ignorable characters vanish.
func (x *scratch) expand(r rune, buf []rune, depth int) ([]rune, bool) {
	if depth > maxDepth || len(buf) >= cap(buf) {
		return buf, false
	}
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(buf, r), true
	}
	if ignorable(r) {
		return buf, true
	}
	src := x.enc[depth][:utf8.EncodeRune(x.enc[depth][:], r)]
	if f, ok := cherokee(r); ok {
		if f != r {
			return append(buf, f), true
		}
	} else {
		folded := x.fold[depth][:]
		nd, _, err := caseFolding.Transform(folded, src, true)
		if err == nil && string(folded[:nd]) != string(src) {
			return x.expandString(folded[:nd], buf, depth)
		}
	}
	if hangulFirst <= r && r <= hangulLast {
		if cap(buf)-len(buf) < 3 {
			return buf, false
		}
		s := r - hangulFirst
		buf = append(buf, jamoL+s/(jamoV*jamoT), jamoV0+s%(jamoV*jamoT)/jamoT)
		if t := s % jamoT; t != 0 {
			buf = append(buf, jamoT0+t)
		}
		return buf, true
	}
	if d := norm.NFD.Properties(src).Decomposition(); d != nil {
		return x.expandString(d, buf, depth)
	}
	return append(buf, r), true
}

func (x *scratch) expandString(s []byte, buf []rune, depth int) ([]rune, bool) {
	for len(s) > 0 {
		c, size := utf8.DecodeRune(s)
		var ok bool
		if buf, ok = x.expand(c, buf, depth+1); !ok {
			return buf, false
		}
		s = s[size:]
	}
	return buf, true
}

// cherokee folds the Cherokee letters, the one script whose case folding
// maps lower case to upper case (CaseFolding.txt: AB70..ABBF to
// 13A0..13EF, 13F8..13FD to 13F0..13F5). x/text's Fold lowers them
// instead. ok is false for other characters.
func cherokee(r rune) (rune, bool) {
	switch {
	case r >= 0x13A0 && r <= 0x13F5:
		return r, true
	case r >= 0x13F8 && r <= 0x13FD:
		return r - 8, true
	case r >= 0xAB70 && r <= 0xABBF:
		return r - 0xAB70 + 0x13A0, true
	}
	return 0, false
}

// class is a character's canonical combining class.
func class(r rune) uint8 {
	if r < utf8.RuneSelf || !assigned(r) {
		return 0
	}
	var enc [utf8.UTFMax]byte
	return norm.NFD.Properties(enc[:utf8.EncodeRune(enc[:], r)]).CCC()
}

// caseFolding is full case folding (C+F, not the Turkic T mappings). It
// keeps no state, so one serves every Folder.
var caseFolding = cases.Fold()

// Hangul syllable decomposition (Unicode section 3.12).
const (
	hangulFirst = 0xAC00
	hangulLast  = 0xD7A3
	jamoL       = 0x1100
	jamoV0      = 0x1161
	jamoT0      = 0x11A7
	jamoV       = 21
	jamoT       = 28
)

// assigned12 is the set of code points Unicode 12.0 assigns; 12.1 added
// U+32FF. Noncharacters count as assigned (DerivedAge lists them).
var assigned12 = rangetable.Assigned("12.0.0")

// assigned reports whether r (not a surrogate: UTF-8 decoding rejects
// those) has a character in Unicode 12.1.
func assigned(r rune) bool {
	switch {
	case r == 0x32FF:
		return true
	case r >= 0xFDD0 && r <= 0xFDEF, r&0xFFFE == 0xFFFE:
		return true
	}
	return unicode.Is(assigned12, r)
}

// defaultIgnorable is Default_Ignorable_Code_Point of Unicode 12.1
// (DerivedCoreProperties.txt). Its unassigned parts never get here.
var defaultIgnorable = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x00AD, Hi: 0x00AD, Stride: 1},
		{Lo: 0x034F, Hi: 0x034F, Stride: 1},
		{Lo: 0x061C, Hi: 0x061C, Stride: 1},
		{Lo: 0x115F, Hi: 0x1160, Stride: 1},
		{Lo: 0x17B4, Hi: 0x17B5, Stride: 1},
		{Lo: 0x180B, Hi: 0x180E, Stride: 1},
		{Lo: 0x200B, Hi: 0x200F, Stride: 1},
		{Lo: 0x202A, Hi: 0x202E, Stride: 1},
		{Lo: 0x2060, Hi: 0x206F, Stride: 1},
		{Lo: 0x3164, Hi: 0x3164, Stride: 1},
		{Lo: 0xFE00, Hi: 0xFE0F, Stride: 1},
		{Lo: 0xFEFF, Hi: 0xFEFF, Stride: 1},
		{Lo: 0xFFA0, Hi: 0xFFA0, Stride: 1},
		{Lo: 0xFFF0, Hi: 0xFFF8, Stride: 1},
	},
	R32: []unicode.Range32{
		{Lo: 0x1BCA0, Hi: 0x1BCA3, Stride: 1},
		{Lo: 0x1D173, Hi: 0x1D17A, Stride: 1},
		{Lo: 0xE0000, Hi: 0xE0FFF, Stride: 1},
	},
}

func ignorable(r rune) bool { return unicode.Is(defaultIgnorable, r) }
