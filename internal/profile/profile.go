// Package profile reads e2fsprogs' configuration files (e2fsck.conf,
// mke2fs.conf): the "profile" format e2fsprogs took from MIT Kerberos,
// read the way its lib/support parser reads it, quirks included, so that
// a file means the same to gofsck as to e2fsck.
//
// The format, as that parser accepts it:
//
//   - Every line before the first one that starts with '[' in its first
//     column is a comment.
//   - "[name]" opens a top-level section (a second "[name]" reopens the
//     first). The name may be quoted ("[\"a b\"]"); an unquoted one loses
//     its trailing blanks, and whatever follows its ']' is ignored. After a
//     quoted name's ']' only a '*' (the final marker), blanks and a comment
//     may follow.
//   - "tag = value" is a relation. The tag is one word or a quoted string;
//     the value is one word (up to a blank, '#' or ';') or a quoted string,
//     after whose closing quote anything is ignored. In quoted strings \n,
//     \t and \b are newline, tab and backspace, and a backslash before any
//     other byte stands for that byte; a string without its closing quote
//     runs to the end of the line, line terminator included.
//   - "tag = {" (or "tag =" with the '{' on the next line) opens a
//     subsection, which "}" closes; anything after that '}' but a '*'
//     is ignored. Subsections nest; sections do not.
//   - A '*' in a tag ends it there and marks the relation or subsection
//     final; a final section stops lookups from going on to later files.
//   - '#' and ';' start comments where a word may end.
//   - The file is read in chunks of at most 2047 bytes, as fgets into
//     e2fsprogs' 2048-byte buffer reads it: a longer line is two lines (and
//     counts as two in error messages); a NUL byte ends the line's text.
//
// Lookups (Value and its typed forms) follow profile_get_value: in each
// file in turn, the first section of each name on the path and, in the
// last one, the first relation with the name asked.
package profile

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Code is one of the profile library's error codes.
type Code uint8

// The error codes a parse or a typed lookup returns.
const (
	// SectionNotTop: a "[section]" line inside a subsection.
	SectionNotTop Code = iota + 1
	// SectionSyntax: a malformed "[section]" line.
	SectionSyntax
	// RelationSyntax: a malformed "tag = value" line.
	RelationSyntax
	// ExtraCBrace: a '}' with no subsection open.
	ExtraCBrace
	// MissingOBrace: "tag =" not followed by a line starting with '{'.
	MissingOBrace
	// BadBoolean: a value that is not one of the boolean words.
	BadBoolean
	// BadInteger: a value that is not a number of the type asked for.
	BadInteger
	numCodes
)

// messages are the library's texts for its codes (prof_err.et), which
// e2fsck prints after a syntax error.
var messages = [numCodes]string{
	SectionNotTop:  "Profile section header not at top level",
	SectionSyntax:  "Syntax error in profile section header",
	RelationSyntax: "Syntax error in profile relation",
	ExtraCBrace:    "Extra closing brace in profile",
	MissingOBrace:  "Missing open brace in profile",
	BadBoolean:     "Invalid boolean value",
	BadInteger:     "Invalid integer value",
}

// Message returns the library's text for c, as e2fsck prints it.
func (c Code) Message() string {
	if c == 0 || c >= numCodes {
		return fmt.Sprintf("profile error %d", uint8(c))
	}
	return messages[c]
}

// Error makes a Code an error ("profile: Invalid boolean value").
func (c Code) Error() string { return "profile: " + c.Message() }

// SyntaxError is a file the parser refuses: e2fsck stops at the first one.
type SyntaxError struct {
	// File is the file's name as opened ("~/" expanded).
	File string
	// Line is the 1-based line (2047-byte chunk) the error is on.
	Line int
	Code Code
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("profile: %s, line %d: %s", e.File, e.Line, e.Code.Message())
}

// Unwrap lets errors.Is match the Code.
func (e *SyntaxError) Unwrap() error { return e.Code }

// node is a section (relation false) or a relation of the tree.
type node struct {
	name     string
	value    string
	relation bool
	final    bool
	parent   *node
	// children in file order: the first child of a name in this order is
	// the first one of the library's name-sorted list too.
	children []*node
}

func (n *node) add(c *node) *node {
	c.parent = n
	n.children = append(n.children, c)
	return c
}

// section returns n's first subsection called name, or nil.
func (n *node) section(name string) *node {
	for _, c := range n.children {
		if !c.relation && c.name == name {
			return c
		}
	}
	return nil
}

// Profile is a set of parsed files, searched in order. The nil *Profile is
// the empty one (e2fsck without a configuration file).
type Profile struct {
	files []*node
}

// chunkSize is the most a line read may return: fgets into a 2048-byte
// buffer.
const chunkSize = 2047

// Parse reads one file. name is what a SyntaxError reports.
func Parse(name string, r io.Reader) (*Profile, error) {
	root, err := parseFile(name, r)
	if err != nil {
		return nil, err
	}
	return &Profile{files: []*node{root}}, nil
}

func parseFile(name string, r io.Reader) (*node, error) {
	br := bufio.NewReaderSize(r, 4096)
	ps := parser{root: &node{name: "(root)"}}
	buf := make([]byte, 0, chunkSize+1)
	for {
		buf = buf[:0]
		for len(buf) < chunkSize {
			c, err := br.ReadByte()
			if err != nil {
				// End of file, or a read error, which fgets takes as
				// the end too.
				break
			}
			buf = append(buf, c)
			if c == '\n' {
				break
			}
		}
		if len(buf) == 0 {
			return ps.root, nil
		}
		if code := ps.line(buf); code != 0 {
			return nil, &SyntaxError{File: name, Line: ps.lineNum, Code: code}
		}
	}
}

// The parser's states between lines.
const (
	stateComment   = iota // before the first "[" line
	stateLine             // ordinary lines
	stateWantBrace        // after "tag =": the next line must open with '{'
)

type parser struct {
	state   int
	level   int // subsection depth
	lineNum int
	root    *node
	cur     *node
}

func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// ends reports whether c ends a word: the end of the text or a comment.
func ends(c byte) bool { return c == 0 || c == '#' || c == ';' }

// The line is worked on as the C parser works on its buffer: a byte slice
// ending in a 0 byte, cut and unquoted in place, because where a later
// step reads can depend on what an earlier one wrote.

func skipBlanks(b []byte, i int) int {
	for b[i] != 0 && isSpace(b[i]) {
		i++
	}
	return i
}

func skipWord(b []byte, i int) int {
	for !ends(b[i]) && !isSpace(b[i]) {
		i++
	}
	return i
}

// text returns the 0-terminated string at i.
func text(b []byte, i int) string {
	j := i
	for b[j] != 0 {
		j++
	}
	return string(b[i:j])
}

// indexText returns the position of c in the 0-terminated string at i, or
// -1.
func indexText(b []byte, i int, c byte) int {
	for ; b[i] != 0; i++ {
		if b[i] == c {
			return i
		}
	}
	return -1
}

// unquote decodes the quoted string starting at i (after its opening
// quote) in place, up to its closing quote or the end of the text, and
// 0-terminates it.
func unquote(b []byte, i int) {
	to, from := i, i
	for b[from] != 0 && b[from] != '"' {
		c := b[from]
		if c == '\\' {
			from++
			switch b[from] {
			case 'n':
				c = '\n'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 0:
				// A backslash ending the text: the string ends there
				// (the C parser reads on past its buffer's terminator,
				// which changes nothing before it).
				b[to] = 0
				return
			default:
				c = b[from]
			}
		}
		b[to] = c
		to++
		from++
	}
	b[to] = 0
}

// line parses one chunk; it returns 0 or the error's code.
func (ps *parser) line(chunk []byte) Code {
	ps.lineNum++
	n := len(chunk)
	for i, c := range chunk {
		if c == 0 {
			n = i
			break
		}
	}
	b := make([]byte, n+1)
	copy(b, chunk[:n])

	if ps.state == stateWantBrace {
		if b[skipBlanks(b, 0)] != '{' {
			return MissingOBrace
		}
		ps.state = stateLine
		return 0
	}
	if ps.state == stateComment {
		if b[0] != '[' {
			return 0
		}
		ps.state = stateLine
	}
	// e2fsprogs' line-end stripping leaves the first of the trailing CR and
	// LF bytes in place (white space everywhere but in an unterminated
	// quoted string): drop the others.
	end := n
	for end > 0 && (b[end-1] == '\n' || b[end-1] == '\r') {
		end--
	}
	if end < n {
		b[end+1] = 0
	}
	i := skipBlanks(b, 0)
	switch c := b[i]; {
	case ends(c):
		return 0
	case c == '[':
		return ps.sectionLine(b, i)
	case c == '}':
		if ps.level == 0 {
			return ExtraCBrace
		}
		if b[i+1] == '*' {
			ps.cur.final = true
		}
		ps.cur = ps.cur.parent
		ps.level--
		return 0
	}
	return ps.relationLine(b, i)
}

// sectionLine parses "[name]" at b[i].
func (ps *parser) sectionLine(b []byte, i int) Code {
	if ps.level > 0 {
		return SectionNotTop
	}
	i = skipBlanks(b, i+1)
	p := indexText(b, i, ']')
	if p < 0 {
		return SectionSyntax
	}
	var name string
	if b[i] == '"' {
		unquote(b, i+1)
		name = text(b, i+1)
	} else {
		// The ']' and the blanks before it are cut off, and the rest of
		// the line is read from the cut: nothing after the ']' counts.
		b[p] = 0
		p--
		for isSpace(b[p]) && p > i {
			b[p] = 0
			p--
		}
		if b[i] == 0 {
			return SectionSyntax
		}
		name = text(b, i)
	}
	sec := ps.root.section(name)
	if sec == nil {
		sec = ps.root.add(&node{name: name})
	}
	ps.cur = sec
	j := p + 1
	if b[j] == '*' {
		sec.final = true
		j++
	}
	if !ends(b[skipBlanks(b, j)]) {
		return SectionSyntax
	}
	return 0
}

// relationLine parses "tag = value" or "tag = {" at b[i].
func (ps *parser) relationLine(b []byte, i int) Code {
	tag := i
	eq := indexText(b, i, '=')
	if eq <= tag {
		return RelationSyntax
	}
	b[eq] = 0
	if b[tag] == '"' {
		tag++
		unquote(b, tag)
	} else {
		p := skipWord(b, tag)
		if b[p] != 0 {
			b[p] = 0
			p++
		}
		if b[skipBlanks(b, p)] != 0 {
			return RelationSyntax
		}
	}
	v := skipBlanks(b, eq+1)
	sub := false
	switch c := b[v]; {
	case c == '"':
		v++
		unquote(b, v)
	case ends(c):
		sub = true
		ps.state = stateWantBrace
	case c == '{':
		if !ends(b[skipBlanks(b, v+1)]) {
			return RelationSyntax
		}
		sub = true
	default:
		w := skipWord(b, v)
		after := b[skipBlanks(b, w)]
		b[w] = 0
		if !ends(after) {
			return RelationSyntax
		}
	}
	name, final := text(b, tag), false
	if k := strings.IndexByte(name, '*'); k >= 0 {
		name, final = name[:k], true
	}
	if sub {
		ps.cur = ps.cur.add(&node{name: name, final: final})
		ps.level++
		return 0
	}
	ps.cur.add(&node{name: name, value: text(b, v), relation: true, final: final})
	return 0
}

// Value returns the value of the relation at the path names (sections,
// then the relation's tag: "options", "broken_system_clock"), and whether
// there is one. It needs at least two names.
func (p *Profile) Value(names ...string) (string, bool) {
	if p == nil || len(names) < 2 {
		return "", false
	}
	last := names[len(names)-1]
	for _, root := range p.files {
		sec, final := root, false
		for _, name := range names[:len(names)-1] {
			if sec = sec.section(name); sec == nil {
				break
			}
			final = final || sec.final
		}
		if sec != nil {
			for _, c := range sec.children {
				if c.relation && c.name == last {
					return c.value, true
				}
			}
		}
		if final {
			break
		}
	}
	return "", false
}

// String returns the value at names, or def when there is none.
func (p *Profile) String(def string, names ...string) string {
	if v, ok := p.Value(names...); ok {
		return v
	}
	return def
}

// The boolean words, matched without regard to case.
var (
	yesWords = []string{"y", "yes", "true", "t", "1", "on"}
	noWords  = []string{"n", "no", "false", "nil", "0", "off"}
)

// Bool returns the boolean at names: def when there is none, and def with
// BadBoolean when the value is not a boolean word.
func (p *Profile) Bool(def bool, names ...string) (bool, error) {
	v, ok := p.Value(names...)
	if !ok {
		return def, nil
	}
	for _, w := range yesWords {
		if asciiFold(v, w) {
			return true, nil
		}
	}
	for _, w := range noWords {
		if asciiFold(v, w) {
			return false, nil
		}
	}
	return def, BadBoolean
}

// asciiFold is strcasecmp's equality: ASCII letters only (strings.EqualFold
// would also take the Kelvin sign for a k).
func asciiFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Int returns the integer at names (strtol's syntax: blanks, a sign, then
// decimal, 0x hex or 0 octal digits, and nothing after them), in the range
// of a C int: def when there is none, def with BadInteger when the value
// is not such a number.
func (p *Profile) Int(def int, names ...string) (int, error) {
	v, ok := p.Value(names...)
	if !ok {
		return def, nil
	}
	neg, mag, ok := parseNumber(v)
	switch {
	case !ok:
		return def, BadInteger
	case neg && mag <= 1<<31:
		return -int(mag), nil
	case !neg && mag < 1<<31:
		return int(mag), nil
	}
	return def, BadInteger
}

// Uint returns the unsigned integer at names, as strtoul reads it and in
// the range of a C unsigned int: a negative number other than -0 is out of
// range. def when there is none, def with BadInteger when it is not one.
func (p *Profile) Uint(def uint32, names ...string) (uint32, error) {
	v, ok := p.Value(names...)
	if !ok {
		return def, nil
	}
	neg, mag, ok := parseNumber(v)
	if !ok || mag > 1<<32-1 || neg && mag != 0 {
		return def, BadInteger
	}
	return uint32(mag), nil
}

// parseNumber reads s whole as strtol with base 0 does: leading blanks, a
// sign, and digits in the base their prefix says. It returns the sign and
// the magnitude; ok is false for anything else, and for a magnitude past
// 2^63 (where strtol and strtoul report overflow either way).
func parseNumber(s string) (neg bool, mag uint64, ok bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := uint64(10)
	switch {
	case i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X'):
		base = 16
		i += 2
	case i < len(s) && s[i] == '0':
		base = 8
	}
	if i == len(s) {
		return false, 0, false
	}
	for ; i < len(s); i++ {
		d := uint64(digit(s[i]))
		if d >= base {
			return false, 0, false
		}
		if mag > (1<<63-d)/base {
			return false, 0, false
		}
		mag = mag*base + d
	}
	return neg, mag, true
}

func digit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}
