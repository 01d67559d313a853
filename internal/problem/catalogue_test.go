package problem

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const specPath = "../../../shared/spec/e2fsck-checks.md"

// specRow is one row of the catalogue tables in section 3 of the spec:
// | Code | Hex | Trigger | On "yes" | Prompt | Flags | Preen |
type specRow struct {
	name   string
	code   Code
	prompt string
	flags  string
	preen  string
}

var specRowRE = regexp.MustCompile(`^\| (PR_[0-9A-Z_]+) \| (0x[0-9a-fA-F]{6}) \|`)

func readSpec(t *testing.T) []specRow {
	t.Helper()
	f, err := os.Open(specPath)
	if err != nil {
		t.Skipf("spec not available: %v", err)
	}
	defer f.Close()
	var rows []specRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		m := specRowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v, err := strconv.ParseUint(m[2][2:], 16, 32)
		if err != nil {
			t.Fatalf("bad hex in %q", line)
		}
		cols := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), " | ")
		if len(cols) != 7 {
			t.Fatalf("row has %d columns: %q", len(cols), line)
		}
		rows = append(rows, specRow{
			name:   m[1],
			code:   Code(v),
			prompt: strings.TrimSpace(cols[4]),
			flags:  strings.TrimSpace(cols[5]),
			preen:  strings.TrimSpace(cols[6]),
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestSpecCatalogue checks that every code of the spec tables is in the
// catalogue exactly once, with the spec's value, name, prompt, flags,
// latch and chained code, and that the catalogue has nothing else.
func TestSpecCatalogue(t *testing.T) {
	rows := readSpec(t)
	if len(rows) != 414 {
		t.Errorf("spec has %d rows, want 414", len(rows))
	}
	if len(defs) != len(rows) {
		t.Errorf("catalogue has %d entries, spec %d", len(defs), len(rows))
	}
	seen := map[string]bool{}
	byName := map[string]Code{}
	for i := range defs {
		byName[defs[i].Name] = defs[i].Code
	}
	for _, r := range rows {
		if seen[r.name] {
			t.Errorf("%s appears twice in the spec", r.name)
		}
		seen[r.name] = true
		d, ok := Lookup(r.code)
		if !ok {
			t.Errorf("%s (%#06x) not in the catalogue", r.name, uint32(r.code))
			continue
		}
		if d.Name != r.name {
			t.Errorf("%#06x is %s in the catalogue, %s in the spec", uint32(r.code), d.Name, r.name)
		}
		if got := r.code.String(); got != r.name {
			t.Errorf("Code(%#06x).String() = %q, want %q", uint32(r.code), got, r.name)
		}
		wantPrompt := r.prompt
		switch wantPrompt {
		case "-":
			wantPrompt = PromptNone.String()
		case "(null)":
			wantPrompt = ""
		}
		if d.Prompt.String() != wantPrompt {
			t.Errorf("%s: prompt %q, spec %q", r.name, d.Prompt, r.prompt)
		}
		var flags Flags
		var latch string
		var chain string
		words := strings.Fields(r.flags)
		for i := 0; i < len(words); i++ {
			w := words[i]
			switch {
			case w == "-":
			case strings.HasPrefix(w, "latch:"):
				latch = strings.TrimPrefix(w, "latch:")
			case w == "then" && i+1 < len(words):
				chain = words[i+1]
				flags |= FlagAfterCode
				i++
			default:
				f, ok := flagByName(w)
				if !ok {
					t.Errorf("%s: unknown flag %q in spec", r.name, w)
				}
				flags |= f
			}
		}
		flags &^= notIn1470[r.name]
		if d.Flags != flags {
			t.Errorf("%s: flags %v, spec %v (%q)", r.name, d.Flags, flags, r.flags)
		}
		if got := d.Latch; (latch == "" && got != LatchNone) || (latch != "" && got.String() != latch) {
			t.Errorf("%s: latch %v, spec %q", r.name, got, latch)
		}
		if chain != "" {
			if c, ok := byName[chain]; !ok || d.Chain != c {
				t.Errorf("%s: chains to %v, spec %s", r.name, d.Chain, chain)
			}
		} else if d.Chain != 0 {
			t.Errorf("%s: chains to %v, spec none", r.name, d.Chain)
		}
		preen := r.preen
		if notIn1470[r.name]&FlagPreenNoMsg != 0 {
			preen = strings.TrimSuffix(preen, " (silent)")
		}
		checkPreenClass(t, d, preen)
	}
	for i := range defs {
		if !seen[defs[i].Name] {
			t.Errorf("%s is in the catalogue but not in the spec", defs[i].Name)
		}
	}
}

// notIn1470 lists flags the spec gives a problem that the installed
// e2fsck 1.47.0, the oracle, does not have; the catalogue follows the
// oracle. PR_6_ORPHAN_PRESENT_CLEAN_FILE is printed when preening
// (differential case orphan/orphan-present-set).
var notIn1470 = map[string]Flags{
	"PR_6_ORPHAN_PRESENT_CLEAN_FILE": FlagPreenNoMsg,
}

func flagByName(s string) (Flags, bool) {
	for i, n := range flagNames {
		if n == s {
			return 1 << i, true
		}
	}
	return 0, false
}

// checkPreenClass checks the spec's "Preen" column against what the
// engine derives from the flags.
func checkPreenClass(t *testing.T, d *Def, class string) {
	t.Helper()
	silent := strings.HasSuffix(class, " (silent)")
	class = strings.TrimSuffix(class, " (silent)")
	var want string
	switch {
	case d.Flags&FlagHeader != 0:
		want = "header"
	case d.Prompt != PromptNone && d.Flags&FlagPreenOK == 0 && d.Flags&FlagFatal != 0:
		want = "HALT/FATAL"
	case d.Flags&FlagFatal != 0:
		want = "FATAL"
	case d.Prompt == PromptNone:
		want = "msg"
	case d.Flags&FlagPreenOK == 0:
		want = "HALT"
	case d.Flags&FlagPreenNo != 0:
		want = "auto-no"
	default:
		want = "auto-yes"
	}
	if class != want {
		t.Errorf("%s: preen class %q, spec %q", d.Name, want, class)
	}
	// A halting problem with FlagPreenNoMsg is silent, then halts; the
	// spec only marks the classes that go on.
	halts := want == "HALT" || want == "HALT/FATAL" || want == "header"
	if got := d.Flags&FlagPreenNoMsg != 0; !halts && got != silent {
		t.Errorf("%s: silent in preen = %v, spec %v", d.Name, got, silent)
	}
}

func TestCatalogueSorted(t *testing.T) {
	for i := 1; i < len(defs); i++ {
		if defs[i-1].Code >= defs[i].Code {
			t.Errorf("catalogue not sorted at %s, %s", defs[i-1].Name, defs[i].Name)
		}
	}
}

func TestLatchDefs(t *testing.T) {
	for l := LatchNone + 1; l < numLatches; l++ {
		q := l.Question()
		if _, ok := Lookup(q); !ok {
			t.Errorf("latch %v: question %v not in catalogue", l, q)
		}
		if d, _ := Lookup(q); d != nil && d.Latch != LatchNone {
			t.Errorf("latch %v: question %v is itself latched", l, q)
		}
		if e := l.End(); e != 0 {
			if _, ok := Lookup(e); !ok {
				t.Errorf("latch %v: end %v not in catalogue", l, e)
			}
		}
	}
	if got := Latch(200).String(); got != "Latch(200)" {
		t.Errorf("Latch(200).String() = %q", got)
	}
}

func TestCodeString(t *testing.T) {
	tests := []struct {
		c    Code
		want string
	}{
		{PR_1_BAD_I_SIZE, "PR_1_BAD_I_SIZE"},
		{PR_0_SB_CORRUPT, "PR_0_SB_CORRUPT"},
		{PR_2_DIR_CORRUPTED, "PR_2_DIR_CORRUPTED"},
		{PR_5_BLOCK_BITMAP_HEADER, "PR_5_BLOCK_BITMAP_HEADER"},
		{PR_1_ALLOCATE_CASEFOLDED_DIRLIST, "PR_1_ALLOCATE_CASEFOLDED_DIRLIST"},
		{0x7fffff, "PR_0x7fffff"},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("%#x.String() = %q, want %q", uint32(tt.c), got, tt.want)
		}
	}
	if PR_1_BAD_I_SIZE != 0x01000c {
		t.Errorf("PR_1_BAD_I_SIZE = %#x", uint32(PR_1_BAD_I_SIZE))
	}
}

func TestFlagsString(t *testing.T) {
	tests := []struct {
		f    Flags
		want string
	}{
		{0, "0"},
		{FlagPreenOK | FlagNoOK, "PREEN_OK|NO_OK"},
		{FlagHeader | 1<<30, "HEADER|0x40000000"},
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("Flags(%#x).String() = %q, want %q", uint32(tt.f), got, tt.want)
		}
	}
}

// TestTemplatesExpand checks that every template expands with only known
// abbreviations and fields.
func TestTemplatesExpand(t *testing.T) {
	p := Problem{Inode: &InodeInfo{}, Dirent: &DirentInfo{}}
	r := NewReporter(nil, Options{})
	for i := range defs {
		p.Code = defs[i].Code
		got := r.Message(p)
		if strings.Contains(got, "@") {
			t.Errorf("%s: unexpanded @ in %q", defs[i].Name, got)
		}
		for _, bad := range []string{"%I", "%D"} {
			if strings.Contains(got, bad) {
				t.Errorf("%s: unexpanded %s in %q", defs[i].Name, bad, got)
			}
		}
	}
}
