package casefold

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"gofsck/internal/dirhash"
	"gofsck/internal/testfs"
)

var fullSweep = flag.Bool("casefold.full", false,
	"compare every Unicode code point with libext2fs (debugfs dx_hash -c), not a sample")

// libHash is what debugfs's dx_hash -c -e utf8 -h half_md4 printed for a
// name: its hash, or failed when libext2fs's folding failed.
type libHash struct {
	major, minor uint32
	failed       bool
}

var dxHashLine = regexp.MustCompile(`^Hash of .* is 0x([0-9a-f]+) \(minor 0x([0-9a-f]+)\)$`)

// dxHash asks libext2fs (debugfs dx_hash, half-MD4, zero seed, casefolded
// with utf8-12.1) for the hash of every name, in one debugfs run. Names may
// not contain blanks, quotes, backslashes or control characters: debugfs
// splits its command lines on them.
func dxHash(t *testing.T, names [][]byte) []libHash {
	t.Helper()
	testfs.RequireE2fsprogs(t)
	debugfs, err := exec.LookPath("debugfs")
	if err != nil {
		for _, d := range []string{"/usr/sbin", "/sbin"} {
			if _, e := os.Stat(filepath.Join(d, "debugfs")); e == nil {
				debugfs, err = filepath.Join(d, "debugfs"), nil
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	var script bytes.Buffer
	for _, n := range names {
		script.WriteString("dx_hash -c -e utf8 -h half_md4 ")
		script.Write(n)
		script.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "cmds")
	if err := os.WriteFile(path, script.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(debugfs, "-f", path)
	cmd.Env = append(os.Environ(), "DEBUGFS_PAGER=__none__", "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("debugfs: %v\n%.2000s", err, out)
	}
	// Every command is echoed as "debugfs: dx_hash ..." and followed by
	// one result line.
	res := make([]libHash, 0, len(names))
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	expect := false
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "debugfs: dx_hash") {
			expect = true
			continue
		}
		if !expect {
			continue
		}
		expect = false
		if m := dxHashLine.FindStringSubmatch(l); m != nil {
			a, _ := strconv.ParseUint(m[1], 16, 32)
			b, _ := strconv.ParseUint(m[2], 16, 32)
			res = append(res, libHash{major: uint32(a), minor: uint32(b)})
		} else if strings.Contains(l, "while calculating hash") {
			res = append(res, libHash{failed: true})
		} else {
			t.Fatalf("unexpected debugfs line %q", l)
		}
	}
	if len(res) != len(names) {
		t.Fatalf("debugfs answered %d of %d names", len(res), len(names))
	}
	return res
}

// ourHash is libHash computed by this package and dirhash.
func ourHash(f *Folder, name []byte) libHash {
	folded, st := f.Fold(name)
	switch st {
	case Invalid:
		return libHash{failed: true}
	case Opaque:
		folded = name
	}
	a, b, _ := dirhash.Hash(dirhash.HalfMD4, folded, nil)
	return libHash{major: a, minor: b}
}

// compareWithLib checks names against libext2fs and reports at most a few
// differences per label.
func compareWithLib(t *testing.T, label string, names [][]byte) {
	t.Helper()
	lib := dxHash(t, names)
	var f Folder
	bad := 0
	for i, n := range names {
		if got := ourHash(&f, n); got != lib[i] {
			bad++
			if bad <= 20 {
				folded, st := f.Fold(n)
				t.Errorf("%s: %q (%s): libext2fs %+v, got %+v (status %d, folded %q)", label, n, runes(n), lib[i], got, st, folded)
			}
		}
	}
	if bad > 20 {
		t.Errorf("%s: %d differences in all", label, bad)
	}
}

func runes(b []byte) string {
	var s []string
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			s = append(s, fmt.Sprintf("%#02x", b[0]))
		} else {
			s = append(s, fmt.Sprintf("U+%04X", r))
		}
		b = b[n:]
	}
	return strings.Join(s, " ")
}

// TestCodePointsAgainstLibext2fs folds one name per code point ("a", the
// character, "z") and compares the hash with libext2fs's: this covers
// validity (assigned in 12.1), case folding, compatibility decomposition,
// ignorables and Hangul. The default run takes every code point of the
// BMP's busy blocks and a stride elsewhere; -casefold.full takes them all.
func TestCodePointsAgainstLibext2fs(t *testing.T) {
	var names [][]byte
	for r := rune(0x80); r <= 0x10FFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		if !*fullSweep && r > 0x3400 && r%97 != 0 {
			continue
		}
		names = append(names, []byte("a"+string(r)+"z"))
	}
	compareWithLib(t, "code point", names)
}

// TestSequencesAgainstLibext2fs compares combining sequences (canonical
// reordering, ignorables inside runs, decompositions followed by marks)
// and malformed UTF-8 with libext2fs.
func TestSequencesAgainstLibext2fs(t *testing.T) {
	var names [][]byte
	add := func(s string) { names = append(names, []byte(s)) }
	marks := []string{"\u0301", "\u0316", "\u0345", "\u05B0", "\u0F71", "\u0327", "\u1DCE", "\u0300"}
	bases := []string{"a", "A", "\u00C5", "\u1FB3", "\u03A9", "\u01C4", "\uAC00", "\u0130", "\u00DF", "\u1E9E", "\uFB01"}
	for _, b := range bases {
		for _, m1 := range marks {
			add("x" + b + m1)
			for _, m2 := range marks {
				add("x" + b + m1 + m2 + "y")
				add("x" + b + m1 + "\u00AD" + m2 + "y")
				add(b + m1 + m2)
			}
		}
	}
	for _, s := range []string{"ABC", "Straße", "STRASSE", "ΣΊΣΥΦΟΣ", "ǅ", "ﬃ", "İstanbul", "㎒", "Ⅻ", "①", "ｆｕｌｌ", "x\u200By", "\u200B", "\u00AD\u00AD"} {
		add(s)
	}
	// Malformed UTF-8: a bad byte at several places, truncated and
	// overlong sequences, surrogates, code points past U+10FFFF.
	for _, bad := range []string{"\xff", "\xfe", "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xe0\x9f\xbf", "\xed\xa0\x80", "\xed\xbf\xbf",
		"\xf0\x80\x80\x80", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xc3", "\xe2\x82", "\xf0\x9f\x98", "\x80", "\xbf", "\xc3\x41", "\xe2\x41\x41", "\xc3\xc3"} {
		add(bad)
		add("a" + bad)
		add("a" + bad + "b")
		add("\u00e9" + bad)
		add("e\u0301" + bad)
		add(bad + "abc")
	}
	for lead := 0xC2; lead <= 0xF4; lead++ {
		for c := 0x30; c <= 0xFF; c += 3 {
			if c == 0x5C || c == 0x22 || c == 0x27 {
				continue
			}
			add(string([]byte{'q', byte(lead), byte(c)}))
			add(string([]byte{'q', byte(lead), 0x80, byte(c)}))
			add(string([]byte{'q', byte(lead), 0x90, 0x80, byte(c)}))
		}
	}
	compareWithLib(t, "sequence", names)
}

// TestRandomNamesAgainstLibext2fs compares names made of random pieces:
// starters, marks of several classes, characters that decompose into
// runs of marks, ignorables, Hangul, and stray or broken UTF-8.
func TestRandomNamesAgainstLibext2fs(t *testing.T) {
	pieces := []string{"a", "Q", "\u00e9", "e\u0301", "\u0301", "\u0316", "\u0345", "\u00ad", "\uac01", "\u1e9e",
		"\u00df", "\x80", "\xbf", "\xc3", "\xff", "\u03a3", "\u1f88", "\u0f73", "\u0344", "\u212b", "\u0130",
		"\u05b0", "\u1dce", "\u0327", "\u200b", "\U000e0001", "\u0378", "\ufb03", "\u1fe3", "\u0390"}
	seed := uint64(0x9e3779b97f4a7c15)
	rnd := func(n int) int {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return int(seed % uint64(n))
	}
	n := 5000
	if *fullSweep {
		n = 200000
	}
	names := make([][]byte, 0, n)
	for range n {
		var b []byte
		for k := 1 + rnd(10); k > 0; k-- {
			b = append(b, pieces[rnd(len(pieces))]...)
		}
		names = append(names, b)
	}
	compareWithLib(t, "random", names)
}
