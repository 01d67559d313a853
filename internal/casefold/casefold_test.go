package casefold

import (
	"bytes"
	"testing"

	"gofsck/internal/dirhash"
)

// golden are hashes libext2fs 1.47.0 computed (debugfs dx_hash -c -e utf8
// -h half_md4, zero seed); failed marks a name whose folding fails.
var golden = []struct {
	name         string
	major, minor uint32
	failed       bool
}{
	{"README", 0xede2a39c, 0xa0b0e277, false},
	{"Straße", 0x7e099ecc, 0x63e35612, false},
	{"STRASSE", 0x7e099ecc, 0x63e35612, false},
	{"ΣΊΣΥΦΟΣ", 0xfa9ced48, 0x4aca887c, false},
	{"σίσυφος", 0xfa9ced48, 0x4aca887c, false},
	{"Ǆemal", 0x71821c0e, 0xb52592c5, false},
	{"ﬃx", 0x203462ba, 0xc564b90e, false},
	{"İstanbul", 0xc067bec, 0xcf5c8b90, false},
	{"\u00c5", 0x6fa90dea, 0x9d346e67, false},       // precomposed
	{"A\u030a", 0x6fa90dea, 0x9d346e67, false},      // decomposed
	{"\u212b", 0x6fa90dea, 0x9d346e67, false},       // ANGSTROM SIGN
	{"한국어", 0xb3d0c6d0, 0x58946f5b, false},          // Hangul syllables
	{"ẞig", 0x1bda6974, 0x93417405, false},          // capital sharp s: "ssig"
	{"x\u200by", 0xe5507286, 0x84b9ff64, false},     // ZERO WIDTH SPACE is ignored
	{"e\u0301\u0316", 0xd3df3c4, 0xf2a998f1, false}, // marks reordered
	{"e\u0316\u0301", 0xd3df3c4, 0xf2a998f1, false},
	{"a\u0345\u0301", 0x79ff6882, 0x13c49001, false}, // ypogegrammeni folds to a starter
	{"\u1fb3\u0301", 0x4bbb105a, 0x88070f2d, false},
	{"Ꭰᏸꭰ", 0x67a6cece, 0x735fc717, false}, // Cherokee folds to upper case
	{"\u0378abc", 0x54f50318, 0x4b41e140, false},
	{"a\x80b", 0xa69cb11c, 0x60100b3e, false},  // a stray continuation byte passes
	{"\x80abc", 0xad2e4f18, 0x9d857eb1, false}, // opaque: hashed raw
	{"a\xffb", 0, 0, true},
	{"\u00e9\x80", 0x8d8a997a, 0x6c7dd4f6, false}, // the stray byte comes out twice
	{"e\u0301\x80x", 0x5a336bdc, 0x446c7bcb, false},
}

func TestGoldenHashes(t *testing.T) {
	var f Folder
	for _, g := range golden {
		got := ourHash(&f, []byte(g.name))
		want := libHash{major: g.major, minor: g.minor, failed: g.failed}
		if got != want {
			folded, st := f.Fold([]byte(g.name))
			t.Errorf("%q: got %+v, want %+v (status %d, folded %q)", g.name, got, want, st, folded)
		}
	}
}

func TestFold(t *testing.T) {
	var f Folder
	for _, tc := range []struct {
		in, want string
		st       Status
	}{
		{"", "", OK},
		{"MixedCase.TXT", "mixedcase.txt", OK},
		{"nul\x00ignored", "nul", OK},
		{"Stra\u00dfe", "strasse", OK},
		{"\u00c9t\u00c9", "e\u0301te\u0301", OK},
		{"\u00ad", "", OK},
		{"\x80", "", Opaque},
		{"\xc3(", "", Invalid},
		{"\xed\xa0\x80", "", Invalid}, // a surrogate
	} {
		got, st := f.Fold([]byte(tc.in))
		if st != tc.st || string(got) != tc.want {
			t.Errorf("Fold(%q) = %q, %d; want %q, %d", tc.in, got, st, tc.want, tc.st)
		}
	}
}

func TestCompare(t *testing.T) {
	var f Folder
	for _, tc := range []struct {
		a, b string
		sign int
	}{
		{"abc", "ABC", 0},
		{"abc", "abd", -1},
		{"abd", "ABC", 1},
		{"ab", "abc", -1},
		{"Stra\u00dfe", "STRASSE", 0},
		{"\u00c5", "\u212b", 0},
		{"caf\u00e9", "CAFE\u0301", 0},
		{"x\u200by", "XY", 0},
		{"a\xff", "a\xff", -1},   // invalid names never match, not even themselves
		{"\x80a", "\x80a", -1},   // nor opaque ones
		{"c", "b\xff", 1},        // the streams differ before the bad byte
		{"b\xff", "c", -1},       //
		{"a\u0301\xff", "a", -1}, // the scan of the marks meets the bad byte first
		{"\u00e9\x80", "\u00c9\x80", 0},
	} {
		got := f.Compare([]byte(tc.a), []byte(tc.b))
		if sign(got) != tc.sign {
			t.Errorf("Compare(%q, %q) = %d, want sign %d", tc.a, tc.b, got, tc.sign)
		}
	}
	if !f.Equal([]byte("ΣΊΣΥΦΟΣ"), []byte("σίσυφος")) {
		t.Error("Equal: Greek names differ")
	}
}

func sign(v int) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}

func TestInvalidAt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"plain", -1},
		{"caf\u00e9", -1},
		{"\u0378", -1}, // unassigned but well formed
		{"ab\xffcd", 2},
		{"\x80", 0},
		{"ab\xc3", 2},
		{"ok\x00\xff", -1}, // checking stops at NUL
		{"\xe0\x80\x80", 0},
	} {
		if got := InvalidAt([]byte(tc.in)); got != tc.want {
			t.Errorf("InvalidAt(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestKnown(t *testing.T) {
	if !Known(UTF8_12_1) || Known(0) || Known(2) {
		t.Error("Known: only utf8-12.1 (1) is known")
	}
}

// TestNoAllocs: folding and comparing use the Folder's space only.
func TestNoAllocs(t *testing.T) {
	var f Folder
	ascii := []byte("Some-ASCII-File_Name.txt")
	uni := []byte("ΣΊΣΥΦΟΣ-Straße-한국어-e\u0316\u0301")
	n := testing.AllocsPerRun(100, func() {
		f.Fold(ascii)
		f.Fold(uni)
		f.Compare(uni, ascii)
		InvalidAt(uni)
	})
	if n != 0 {
		t.Errorf("%v allocations per run", n)
	}
}

func FuzzFold(f *testing.F) {
	for _, g := range golden {
		f.Add([]byte(g.name), []byte("x"))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var fo Folder
		out, st := fo.Fold(a)
		if st == OK && len(out) > MaxFolded {
			t.Fatalf("folded form of %d bytes", len(out))
		}
		c1 := fo.Compare(a, b)
		if c1 == 0 && fo.Compare(b, a) != 0 {
			t.Fatalf("Compare(%q, %q) == 0 but not the other way", a, b)
		}
		if c1 == 0 {
			x, _ := fo.Fold(a)
			x = bytes.Clone(x)
			y, _ := fo.Fold(b)
			if !bytes.Equal(x, y) {
				t.Fatalf("%q and %q compare equal but fold to %q and %q", a, b, x, y)
			}
		}
		InvalidAt(a)
	})
}

func BenchmarkFoldASCII(b *testing.B) {
	var f Folder
	name := []byte("entry-with-a-long-name-00007")
	for b.Loop() {
		f.Fold(name)
	}
}

func BenchmarkFoldUnicode(b *testing.B) {
	var f Folder
	name := []byte("Ünïcödé-ΣΊΣΥΦΟΣ-Straße-한국어")
	for b.Loop() {
		f.Fold(name)
	}
}

// BenchmarkHash folds and hashes, as pass 2 does per entry.
func BenchmarkHash(b *testing.B) {
	var f Folder
	name := []byte("Ünïcödé-ΣΊΣΥΦΟΣ-Straße-한국어")
	for b.Loop() {
		folded, _ := f.Fold(name)
		dirhash.Hash(dirhash.HalfMD4, folded, nil)
	}
}
