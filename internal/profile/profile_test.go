package profile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lookup is one query of a parse test and its expected answer.
type lookup struct {
	path  string // names joined by '/'
	value string
	found bool
}

func has(path, value string) lookup { return lookup{path, value, true} }
func hasNot(path string) lookup     { return lookup{path: path} }

// TestParse feeds the corner cases of e2fsprogs' profile parser and checks
// the tree through lookups. The expectations follow lib/support/profile.c
// as e2fsck 1.47 runs it (several were checked against e2fsck through a
// problem's description; see cmd/gofsck's TestConfigDescriptionQuoting).
func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []lookup
	}{
		{"basic", "[options]\n\tbroken_system_clock = true\n[problems]\n\t0x05000f = {\n\t\tforce_no = 1\n\t}\n",
			[]lookup{has("options/broken_system_clock", "true"), has("problems/0x05000f/force_no", "1"),
				hasNot("options/0x05000f"), hasNot("problems/0x05000f")}},
		{"text before the first section is a comment", "x = 1\njunk {{ = ]\n [a]\n\tindented = no\n[a]\ny = 2\n",
			[]lookup{hasNot("a/indented"), has("a/y", "2")}},
		{"comments", "[a]\n# x = 1\n; y = 2\n   # z = 3\nw = 4 # c\nv = 5;c\nu = 6#c\n",
			[]lookup{hasNot("a/x"), hasNot("a/y"), hasNot("a/z"), has("a/w", "4"), has("a/v", "5"), has("a/u", "6")}},
		{"a reopened section", "[a]\nx = 1\n[b]\ny = 2\n[a]\nz = 3\n",
			[]lookup{has("a/x", "1"), has("a/z", "3"), has("b/y", "2")}},
		{"the first relation of a name wins", "[a]\nx = 1\nx = 2\n", []lookup{has("a/x", "1")}},
		{"only the first subsection of a name is searched", "[a]\ns = {\nx = 1\n}\ns = {\ny = 2\n}\n",
			[]lookup{has("a/s/x", "1"), hasNot("a/s/y")}},
		{"a relation is not a subsection", "[a]\ns = 1\ns = {\nx = 2\n}\n", []lookup{has("a/s", "1"), has("a/s/x", "2")}},
		{"nested subsections", "[a]\ns = {\n t = {\n  x = deep\n }\n y = 1\n}\n",
			[]lookup{has("a/s/t/x", "deep"), has("a/s/y", "1")}},
		{"brace on the next line", "[a]\ns =\n  { anything here\nx = 1\n}\n", []lookup{has("a/s/x", "1")}},
		{"brace with a comment", "[a]\ns = { # c\nx = 1\n}   trailing junk\ny = 2\n",
			[]lookup{has("a/s/x", "1"), has("a/y", "2")}},
		{"quoted tag and value", "[a]\n\"two words\" = \"x y\"\n", []lookup{has("a/two words", "x y")}},
		{"escapes", "[a]\nx = \"t\\tn\\nb\\bq\\\"s\\\\z\\y\"\n", []lookup{has("a/x", "t\tn\nb\bq\"s\\zy")}},
		{"after the closing quote anything goes", "[a]\nx = \"v\" more words = here\n", []lookup{has("a/x", "v")}},
		{"an unclosed quote keeps the line end", "[a]\nx = \"abc\ny = \"def\r\nz = \"ghi", []lookup{
			has("a/x", "abc\n"), has("a/y", "def\r"), has("a/z", "ghi")}},
		{"CR LF lines", "[a]\r\nx = 1\r\ns = {\r\ny = 2\r\n}\r\n", []lookup{has("a/x", "1"), has("a/s/y", "2")}},
		{"empty quoted value", "[a]\nx = \"\"\n", []lookup{has("a/x", "")}},
		{"a quoted tag ends at '='", "[a]\n\"k\" junk = v\n", []lookup{has("a/k", "v")}},
		{"a comment character ends an unquoted tag", "[a]\nk; = v\n", []lookup{has("a/k", "v")}},
		{"'*' ends a tag", "[a]\nx* = 1\n\"y*z\" = 2\ns* = {\nw = 3\n}\n",
			[]lookup{has("a/x", "1"), has("a/y", "2"), hasNot("a/y*z"), has("a/s/w", "3")}},
		{"section names", "[ spaced  ]\nx = 1\n[\"quo ted\"]\ny = 2\n[\"\"]\nz = 3\n[u] anything\nw = 4\n",
			[]lookup{has("spaced/x", "1"), has("quo ted/y", "2"), has("/z", "3"), has("u/w", "4")}},
		{"a NUL ends the line", "[a]\nx = 1\x00 = junk\n", []lookup{has("a/x", "1")}},
		{"a long line is two lines", "[a]\nx = " + strings.Repeat("v", chunkSize-4) + "y = 2\n",
			[]lookup{has("a/x", strings.Repeat("v", chunkSize-4)), has("a/y", "2")}},
		{"unclosed subsection at the end", "[a]\ns = {\nx = 1\n", []lookup{has("a/s/x", "1")}},
		{"wanting a brace at the end", "[a]\ns =\n", []lookup{hasNot("a/s")}},
		{"a value with '='", "[a]\nx = a=b\n", []lookup{has("a/x", "a=b")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("test.conf", strings.NewReader(tc.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			for _, l := range tc.want {
				v, ok := p.Value(strings.Split(l.path, "/")...)
				if v != l.value || ok != l.found {
					t.Errorf("%s = %q, %v; want %q, %v", l.path, v, ok, l.value, l.found)
				}
			}
		})
	}
}

// TestParseErrors checks the syntax errors and the line they are
// reported on (the message e2fsck prints names both).
func TestParseErrors(t *testing.T) {
	tests := []struct {
		in   string
		line int
		code Code
	}{
		{"[options\n", 1, SectionSyntax},
		{"[]\n", 1, SectionSyntax},
		{"[ ]\n", 1, SectionSyntax},
		{"[\"a\"] junk\n", 1, SectionSyntax},
		{"[\"a]b\"]\n", 1, SectionSyntax},
		{"# c\n[a]\nfoo\n", 3, RelationSyntax},
		{"[a]\n= 1\n", 2, RelationSyntax},
		{"[a]\nx y = 1\n", 2, RelationSyntax},
		{"[a]\nx = y z\n", 2, RelationSyntax},
		{"[a]\nx = { y\n", 2, RelationSyntax},
		{"[a]\nk;x = v\n", 2, RelationSyntax},
		{"[a]\n}\n", 2, ExtraCBrace},
		{"[a]\ns = {\n}\n}\n", 4, ExtraCBrace},
		{"[a]\nx =\n\ny\n", 3, MissingOBrace},
		{"[a]\nx =\n# c\n{\n", 3, MissingOBrace},
		{"[a]\n x = {\n [b]\n", 3, SectionNotTop},
		// The first 2047 bytes are a good relation, the rest is a line
		// of its own.
		{"[a]\ny = " + strings.Repeat("v", chunkSize-4) + " junk\n", 3, RelationSyntax},
		{"[a]\n" + strings.Repeat("x", chunkSize) + " = 1\n", 2, RelationSyntax},
	}
	for _, tc := range tests {
		_, err := Parse("f.conf", strings.NewReader(tc.in))
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line != tc.line || se.Code != tc.code || se.File != "f.conf" {
			t.Errorf("%.40q: %v; want line %d: %s", tc.in, err, tc.line, tc.code.Message())
			continue
		}
		if !errors.Is(err, tc.code) {
			t.Errorf("%.40q: errors.Is(%v, %v) is false", tc.in, err, tc.code)
		}
	}
}

// TestTyped checks the boolean and integer readings.
func TestTyped(t *testing.T) {
	p, err := Parse("t", strings.NewReader(`[o]
	y1 = Yes
	y2 = T
	y3 = on
	n1 = NIL
	n2 = 0
	bad = maybe
	folded = yeſ
	hex = 0x1F
	oct = 010
	badoct = 08
	blank = " 5"
	trail = "5 "
	neg = -2147483648
	over = 2147483648
	plus = +7
	empty = ""
	x0 = 0x
	negzero = -0
	negone = -1
	umax = 4294967295
	uover = 4294967296
	huge = 99999999999999999999
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key string
		v   bool
		err error
	}{
		{"y1", true, nil}, {"y2", true, nil}, {"y3", true, nil}, {"n1", false, nil}, {"n2", false, nil},
		{"bad", true, BadBoolean}, {"folded", true, BadBoolean}, {"missing", true, nil},
	} {
		v, err := p.Bool(true, "o", tc.key)
		if v != tc.v || err != tc.err {
			t.Errorf("Bool %s = %v, %v; want %v, %v", tc.key, v, err, tc.v, tc.err)
		}
	}
	for _, tc := range []struct {
		key string
		v   int
		err error
	}{
		{"hex", 31, nil}, {"oct", 8, nil}, {"badoct", -9, BadInteger}, {"blank", 5, nil}, {"trail", -9, BadInteger},
		{"neg", -2147483648, nil}, {"over", -9, BadInteger}, {"plus", 7, nil}, {"empty", -9, BadInteger},
		{"x0", -9, BadInteger}, {"negone", -1, nil}, {"huge", -9, BadInteger}, {"missing", -9, nil},
	} {
		v, err := p.Int(-9, "o", tc.key)
		if v != tc.v || err != tc.err {
			t.Errorf("Int %s = %v, %v; want %v, %v", tc.key, v, err, tc.v, tc.err)
		}
	}
	for _, tc := range []struct {
		key string
		v   uint32
		err error
	}{
		{"negzero", 0, nil}, {"negone", 20, BadInteger}, {"umax", 4294967295, nil}, {"uover", 20, BadInteger},
		{"hex", 31, nil}, {"missing", 20, nil},
	} {
		v, err := p.Uint(20, "o", tc.key)
		if v != tc.v || err != tc.err {
			t.Errorf("Uint %s = %v, %v; want %v, %v", tc.key, v, err, tc.v, tc.err)
		}
	}
	if s := p.String("def", "o", "missing"); s != "def" {
		t.Errorf("String default: %q", s)
	}
	var none *Profile
	if v, err := none.Bool(true, "o", "y1"); !v || err != nil {
		t.Error("the nil profile must give the defaults")
	}
}

// TestLoad covers how the file is found: a missing or empty name, a
// directory of files searched in name order (the first file's relation
// wins, a final section stops the search), files the library does not
// read, the syntax error's file name, and "~/" expansion.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, path := range []string{"", filepath.Join(dir, "missing"), filepath.Join(dir, "missing", "x")} {
		if p, err := Load(path); p != nil || err != nil {
			t.Errorf("Load(%q) = %v, %v", path, p, err)
		}
	}

	confd := filepath.Join(dir, "conf.d")
	write("conf.d/b", "[o]\nx = from-b\ny = from-b\nz = from-b\n")
	write("conf.d/a-1", "[o]\nx = from-a\n[f]*\n")
	write("conf.d/skipped.conf", "[o]\ny = skipped\n")
	write("conf.d/sub/c", "[o]\ny = sub\n")
	p, err := Load(confd)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"x": "from-a", "y": "from-b", "z": "from-b"} {
		if v, _ := p.Value("o", key); v != want {
			t.Errorf("o.%s = %q, want %q", key, v, want)
		}
	}

	final := filepath.Join(dir, "final.d")
	write("final.d/a", "[\"o\"]*\nx = 1\n")
	write("final.d/b", "[o]\nx = 2\ny = 2\n")
	write("final.d/c", "[o]*\ny = 3\n")
	p, err = Load(final)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := p.Value("o", "y"); ok {
		t.Errorf("a final section let the search go on: o.y = %q", v)
	}

	// An unquoted name's '*' is cut off with its ']': not final.
	write("unquoted.d/a", "[o]*\nx = 1\n")
	write("unquoted.d/b", "[o]\ny = 2\n")
	p, err = Load(filepath.Join(dir, "unquoted.d"))
	if v, _ := p.Value("o", "y"); err != nil || v != "2" {
		t.Errorf("[o]* made the section final: o.y = %q, %v", v, err)
	}

	write("bad.d/a", "[o]\nx = 1\n")
	write("bad.d/b", "[o]\n}\n")
	_, err = Load(filepath.Join(dir, "bad.d"))
	var se *SyntaxError
	if !errors.As(err, &se) || se.File != filepath.Join(dir, "bad.d")+"/b" || se.Line != 2 || se.Code != ExtraCBrace {
		t.Errorf("syntax error in a directory: %v", err)
	}

	// "~/name" is looked for as written (relative to the working
	// directory) before the home directory's file is read.
	home := filepath.Join(dir, "home")
	write("home/e2fsck.conf", "[o]\nx = home\n")
	t.Setenv("HOME", home)
	t.Chdir(dir)
	if p, err := Load("~/e2fsck.conf"); p != nil || err != nil {
		t.Errorf("~/ without ./~: %v, %v", p, err)
	}
	write("~/e2fsck.conf", "[o]\nx = literal\n")
	p, err = Load("~/e2fsck.conf")
	if v, _ := p.Value("o", "x"); err != nil || v != "home" {
		t.Errorf("~/ expansion: %q, %v", v, err)
	}
}
