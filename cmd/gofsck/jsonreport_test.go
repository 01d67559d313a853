package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"gofsck/internal/testfs"
)

// The report as docs/json-report.md describes it, written out again here
// (not shared with jsonreport.go) so that a field added, renamed or retyped
// on one side only fails the test.
type (
	reportDoc struct {
		Schema          string          `json:"schema"`
		Tool            reportTool      `json:"tool"`
		Device          string          `json:"device"`
		Name            string          `json:"name"`
		UUID            string          `json:"uuid"`
		Argv            []string        `json:"argv"`
		StartTime       string          `json:"start_time"`
		DurationSeconds float64         `json:"duration_seconds"`
		Findings        []reportFinding `json:"findings"`
		Passes          []reportPass    `json:"passes"`
		Summary         *reportSummary  `json:"summary"`
		ExitCode        int             `json:"exit_code"`
		Error           string          `json:"error"`
		Stop            *reportStop     `json:"stop"`
	}
	reportStop struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
		Code    string `json:"code"`
		Name    string `json:"name"`
	}
	reportTool struct {
		Name, Version, Date string
	}
	reportFinding struct {
		Code       string  `json:"code"`
		Name       string  `json:"name"`
		Pass       int     `json:"pass"`
		Phase      string  `json:"phase"`
		Inode      *uint32 `json:"inode"`
		Dir        *uint32 `json:"dir"`
		EntryInode *uint32 `json:"entry_inode"`
		Block      *uint64 `json:"block"`
		Group      *uint32 `json:"group"`
		Path       *string `json:"path"`
		Message    string  `json:"message"`
		Answer     string  `json:"answer"`
		AnswerText string  `json:"answer_text"`
	}
	reportPass struct {
		Name          string  `json:"name"`
		RealSeconds   float64 `json:"real_seconds"`
		UserSeconds   float64 `json:"user_seconds"`
		SysSeconds    float64 `json:"sys_seconds"`
		SerialSeconds float64 `json:"serial_seconds"`
		ReadBytes     uint64  `json:"read_bytes"`
		WriteBytes    uint64  `json:"write_bytes"`
	}
	reportSummary struct {
		Line                 string            `json:"line"`
		Skipped              bool              `json:"skipped"`
		InodesUsed           uint64            `json:"inodes_used"`
		Inodes               uint64            `json:"inodes"`
		BlocksUsed           uint64            `json:"blocks_used"`
		Blocks               uint64            `json:"blocks"`
		NonContiguousPercent *float64          `json:"non_contiguous_percent"`
		Counts               map[string]uint32 `json:"counts"`
		SpeculatedPasses     []int             `json:"speculated_passes"`
	}
)

// testCorpusDir finds e2fsprogs-tests as test/corpus_test.go does; it
// fails instead of skipping under CI.
func testCorpusDir(t *testing.T) string {
	t.Helper()
	var cands []string
	if env := os.Getenv("GOFSCK_SHARED"); env != "" {
		cands = append(cands, filepath.Join(env, "e2fsprogs-tests"), env)
	}
	if root, err := testfs.ModuleRoot(); err == nil {
		cands = append(cands, filepath.Join(root, "..", "shared", "e2fsprogs-tests"))
	}
	for _, c := range cands {
		if _, err := os.Stat(filepath.Join(c, "VERDICTS.tsv")); err == nil {
			return c
		}
	}
	msg := fmt.Sprintf("e2fsprogs-tests not found (tried %s; set GOFSCK_SHARED)", strings.Join(cands, ", "))
	if testfs.InCI() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// runJSON runs gofsck in process as main does (main exits with run's
// result) and returns stdout, stderr, the exit code and the report's bytes.
func runJSON(t *testing.T, img, report string, args ...string) (stdout, stderr string, code int, doc []byte) {
	t.Helper()
	var out, errb bytes.Buffer
	argv := append([]string{"gofsck"}, args...)
	argv = append(argv, "-E", "json="+report, img)
	code = run(argv, &out, &errb)
	if st, err := os.Stat(report); err == nil && st.Mode().IsRegular() {
		doc, _ = os.ReadFile(report)
	}
	return out.String(), errb.String(), code, doc
}

// decodeReport decodes strictly and validates against the schema file.
func decodeReport(t *testing.T, doc []byte) reportDoc {
	t.Helper()
	validateSchema(t, doc)
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	var r reportDoc
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("decoding the report: %v\n%s", err, doc)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value in the report")
	}
	return r
}

// nonProblem reports whether a whole stdout line is not a finding: pass
// headers, blank lines, the summary and trailers (testfs.ParseTranscript's
// rules), and the lines gofsck prints outside the problem table.
func nonProblem(line string) bool {
	tr := testfs.ParseTranscript(line)
	if len(tr.Headers) > 0 || len(tr.Problems) == 0 {
		return true
	}
	// The open sequence's library messages and gofsck's own notes are
	// not in the problem table (docs/json-report.md).
	return strings.HasSuffix(line, ", check forced.") ||
		strings.HasPrefix(line, "Warning: skipping journal recovery") ||
		strings.HasPrefix(line, "ext2fs_") || strings.HasPrefix(line, "gofsck: ")
}

// checkRoundTrip walks stdout: every finding's message and answer must
// appear in order, and everything between them must be whole non-problem
// lines. So the findings are exactly the problems printed, in order.
func checkRoundTrip(t *testing.T, stdout string, findings []reportFinding) {
	t.Helper()
	cur := 0
	gap := func(end int) {
		g := stdout[cur:end]
		if g == "" {
			return
		}
		lines := strings.Split(strings.TrimSuffix(g, "\n"), "\n")
		// The gap ends a line, and if it starts inside a finding's line
		// (a fatal message has no newline) it only ends that line.
		if !strings.HasSuffix(g, "\n") || (cur > 0 && stdout[cur-1] != '\n' && lines[0] != "") {
			t.Errorf("text not covered by a finding at offset %d: %q", cur, g)
			return
		}
		for _, l := range lines {
			if !nonProblem(l) {
				t.Errorf("problem line printed but not in the report: %q", l)
			}
		}
	}
	for i, f := range findings {
		text := f.Message + f.AnswerText
		if text == "" {
			t.Errorf("finding %d (%s) printed nothing", i, f.Name)
			continue
		}
		j := strings.Index(stdout[cur:], text)
		if j < 0 {
			t.Fatalf("finding %d (%s) %q not found in stdout after offset %d", i, f.Name, text, cur)
		}
		gap(cur + j)
		cur += j + len(text)
	}
	gap(len(stdout))

	// The problem lines of stdout and of the findings, by
	// testfs.ParseTranscript, are the same.
	var all strings.Builder
	for _, f := range findings {
		all.WriteString(f.Message + f.AnswerText)
	}
	if got, want := problemLines(all.String()), problemLines(stdout); !slices.Equal(got, want) {
		t.Errorf("problem lines from the findings:\n%q\nfrom stdout:\n%q", got, want)
	}
}

func problemLines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if !nonProblem(l) {
			ls = append(ls, strings.TrimRight(l, " \t"))
		}
	}
	return ls
}

// checkFinding checks a finding's fields against its code.
func checkFinding(t *testing.T, f reportFinding) {
	t.Helper()
	var code uint32
	if _, err := fmt.Sscanf(f.Code, "0x%06x", &code); err != nil {
		t.Errorf("finding code %q: %v", f.Code, err)
	}
	if f.Pass != int(code>>16) || !strings.HasPrefix(f.Phase, fmt.Sprint(f.Pass)) {
		t.Errorf("finding %s %s: pass %d phase %q", f.Code, f.Name, f.Pass, f.Phase)
	}
	if f.Inode != nil && f.Path == nil && strings.Contains(f.Message, "inode") &&
		!strings.Contains(f.Message, fmt.Sprint(*f.Inode)) {
		t.Errorf("finding %s: inode %d not in message %q", f.Name, *f.Inode, f.Message)
	}
	if f.Path != nil && *f.Path != "" && !strings.Contains(f.Message, *f.Path) {
		t.Errorf("finding %s: path %q not in message %q", f.Name, *f.Path, f.Message)
	}
	switch {
	case f.AnswerText == "" && f.Answer != "":
		t.Errorf("finding %s: answer %q without answer text", f.Name, f.Answer)
	case strings.HasSuffix(f.AnswerText, "? no\n\n") && f.Answer != "no":
		t.Errorf("finding %s: printed %q, answer %q", f.Name, f.AnswerText, f.Answer)
	}
}

// TestJSONReportCorpus checks the report of gofsck -fn on every image of
// e2fsprogs' test suite (about a second in all): problems in every pass,
// latch lists, paths, fatal and unopenable filesystems.
func TestJSONReportCorpus(t *testing.T) {
	dir := testCorpusDir(t)
	tmp := t.TempDir()
	m, _ := filepath.Glob(filepath.Join(dir, "*", "image.gz"))
	if len(m) < 100 {
		t.Fatalf("only %d images in %s", len(m), dir)
	}
	var images []string
	for _, p := range m {
		images = append(images, filepath.Base(filepath.Dir(p)))
	}
	for _, name := range images {
		t.Run(name, func(t *testing.T) {
			src := filepath.Join(dir, name, "image.gz")
			if _, err := os.Stat(src); err != nil {
				t.Fatalf("corpus image missing: %v", err)
			}
			img := filepath.Join(tmp, name+".img")
			testfs.Decompress(t, src, img)
			defer os.Remove(img)
			rep := filepath.Join(tmp, name+".json")
			stdout, stderr, code, raw := runJSON(t, img, rep, "-fn")
			r := decodeReport(t, raw)
			if r.ExitCode != code {
				t.Errorf("exit_code %d, exit status %d", r.ExitCode, code)
			}
			if r.Schema != "gofsck-report/1" || r.Tool.Name != "gofsck" || r.Tool.Version != buildVersion().version || r.Device != img {
				t.Errorf("header: %+v", r)
			}
			if !slices.Equal(r.Argv, []string{"gofsck", "-fn", "-E", "json=" + rep, img}) {
				t.Errorf("argv %q", r.Argv)
			}
			for _, f := range r.Findings {
				checkFinding(t, f)
			}
			if r.Name == "" {
				// The filesystem could not be opened: nothing was checked.
				if code != 8 || len(r.Findings) != 0 || r.Summary != nil || len(r.Passes) != 0 {
					t.Errorf("unopened filesystem: exit %d, report %+v", code, r)
				}
				return
			}
			// JSON strings are UTF-8: the report carries each invalid
			// byte of a printed name (a %s of raw bytes) as U+FFFD, which
			// is what a []rune conversion does to stdout.
			stdout = string([]rune(stdout))
			checkRoundTrip(t, stdout, r.Findings)
			if r.Summary != nil {
				if !strings.Contains(stdout, r.Summary.Line+"\n") {
					t.Errorf("summary line %q not printed", r.Summary.Line)
				}
				want := fmt.Sprintf("%d/%d files", r.Summary.InodesUsed, r.Summary.Inodes)
				if !strings.Contains(r.Summary.Line, want) || !strings.Contains(r.Summary.Line, fmt.Sprintf("%d/%d blocks", r.Summary.BlocksUsed, r.Summary.Blocks)) {
					t.Errorf("summary counts do not match %q", r.Summary.Line)
				}
				if len(r.Passes) < 5 {
					t.Errorf("a full check reports passes %+v", r.Passes)
				}
			}
			for _, p := range r.Passes {
				if p.RealSeconds < 0 || p.UserSeconds < 0 || p.SysSeconds < 0 || p.SerialSeconds < 0 {
					t.Errorf("pass %+v", p)
				}
			}
			if code != 0 && len(r.Findings) == 0 && stderr == "" && r.Summary != nil {
				t.Errorf("exit %d with no findings", code)
			}
			t.Logf("%s: exit %d, %d findings", name, code, len(r.Findings))
		})
	}
}

func TestJSONReportClean(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{})
	rep := filepath.Join(t.TempDir(), "r.json")
	stdout, _, code, raw := runJSON(t, img, rep, "-fn")
	r := decodeReport(t, raw)
	if code != 0 || r.ExitCode != 0 || len(r.Findings) != 0 {
		t.Fatalf("clean image: exit %d, report exit %d, findings %+v\n%s", code, r.ExitCode, r.Findings, stdout)
	}
	if r.Summary == nil || r.Summary.Skipped || r.Summary.Counts == nil || r.Summary.NonContiguousPercent == nil {
		t.Fatalf("summary %+v", r.Summary)
	}
	checkRoundTrip(t, stdout, r.Findings)

	// Without -f the clean filesystem is skipped; the report has the
	// clean line.
	stdout, _, code, raw = runJSON(t, img, rep, "-n")
	r = decodeReport(t, raw)
	if code != 0 || r.ExitCode != 0 || r.Summary == nil || !r.Summary.Skipped ||
		!strings.Contains(stdout, r.Summary.Line+"\n") || len(r.Passes) != 0 {
		t.Fatalf("skipped check: exit %d, report %+v\n%s", code, r, stdout)
	}
}

func TestJSONReportUnwritable(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{})
	for _, rep := range []string{
		filepath.Join(t.TempDir(), "missing", "r.json"), // no such directory
		t.TempDir(), // a directory
	} {
		stdout, stderr, code, _ := runJSON(t, img, rep, "-fn")
		// Documented: like e2fsck's other unusable output files, exit 8
		// before the check starts.
		if code != 8 || !strings.Contains(stderr, "gofsck: cannot create JSON report: ") ||
			!strings.Contains(stderr, rep) || strings.Contains(stdout, "Pass 1") {
			t.Errorf("%s: exit %d, stderr %q, stdout %q", rep, code, stderr, stdout)
		}
	}
	// A report that cannot be written at the end (/dev/full) adds 8 to the
	// check's exit code.
	if _, err := os.Stat("/dev/full"); err == nil {
		stdout, stderr, code, _ := runJSON(t, img, "/dev/full", "-fn")
		if code != 8 || !strings.Contains(stderr, "gofsck: cannot write JSON report /dev/full: ") || !strings.Contains(stdout, "Pass 5") {
			t.Errorf("/dev/full: exit %d, stderr %q", code, stderr)
		}
	}
}

func TestJSONReportOption(t *testing.T) {
	var out bytes.Buffer
	for _, arg := range []string{"json", "json="} {
		out.Reset()
		if code := run([]string{"gofsck", "-fn", "-E", arg, "x"}, &out, &out); code != 1 || !strings.Contains(out.String(), "Invalid json parameter") {
			t.Errorf("-E %s: exit %d, %q", arg, code, out.String())
		}
	}
}

// validateSchema checks doc against docs/json-report.schema.json twice,
// with a full JSON Schema 2020-12 validator (formats asserted): as
// published, and strictly, with every object schema closed
// (additionalProperties false), so that a field gofsck writes but the
// schema does not list fails.
func validateSchema(t *testing.T, doc []byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "json-report.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, doc)
	}
	for _, strict := range []bool{false, true} {
		schema, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("schema: %v", err)
		}
		if strict {
			closeObjects(schema)
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if err := c.AddResource("json-report.schema.json", schema); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile("json-report.schema.json")
		if err != nil {
			t.Fatalf("schema: %v", err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Fatalf("report (strict %v) fails the schema: %v\n%s", strict, err, doc)
		}
	}
}

// closeObjects sets additionalProperties false in every schema under v
// that describes an object with properties (not in the "if" of the
// exit-code rule, which has no type).
func closeObjects(v any) {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["properties"]; ok && x["type"] != nil {
			x["additionalProperties"] = false
		}
		for _, e := range x {
			closeObjects(e)
		}
	case []any:
		for _, e := range x {
			closeObjects(e)
		}
	}
}

// TestJSONReportModes validates real reports of every kind of run against
// the schema: a read-only check finding problems, a preen and a -y repair
// of the same damage, a writable check of a clean filesystem (which keeps
// its speculated passes) and a device that cannot be opened (exit 8 with
// its reason).
func TestJSONReportModes(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	damaged := testfs.MkImage(t, testfs.Spec{Populate: func(tr *testfs.Tree) {
		tr.Dir("d")
		tr.File("d/f", 5000)
	}})
	testfs.Debugfs(t, damaged, "sif /d/f links_count 5")
	clean := testfs.MkImage(t, testfs.Spec{})
	missing := filepath.Join(t.TempDir(), "no-such-device")
	cases := []struct {
		name, img string
		args      []string
		exit      int
		check     func(r reportDoc) string
	}{
		{"n", damaged, []string{"-fn"}, 4, func(r reportDoc) string {
			if len(r.Findings) == 0 || r.Findings[0].Answer != "no" {
				return "want a finding answered no"
			}
			return ""
		}},
		{"p", damaged, []string{"-fp"}, 1, func(r reportDoc) string {
			if len(r.Findings) == 0 || r.Findings[0].AnswerText != "FIXED.\n" || !strings.HasPrefix(r.Findings[0].Message, r.Name+": ") {
				return "want a preen finding, prefixed with the device and FIXED"
			}
			return ""
		}},
		{"y", damaged, []string{"-fy"}, 1, func(r reportDoc) string {
			if len(r.Findings) == 0 || r.Findings[0].Answer != "yes" {
				return "want a finding answered yes"
			}
			return ""
		}},
		{"y-clean", clean, []string{"-fy"}, 0, func(r reportDoc) string {
			if r.Summary == nil || len(r.Summary.SpeculatedPasses) == 0 {
				return "want speculated passes in the summary"
			}
			return ""
		}},
		{"no-device", missing, []string{"-fn"}, 8, func(r reportDoc) string {
			want := "gofsck: No such file or directory while trying to open " + missing
			if r.Error != want || r.Summary != nil {
				return fmt.Sprintf("want error %q and no summary", want)
			}
			return ""
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := c.img
			if img != missing {
				img = testfs.CopyImage(t, c.img)
			}
			rep := filepath.Join(t.TempDir(), "r.json")
			stdout, stderr, code, raw := runJSON(t, img, rep, c.args...)
			if code != c.exit {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.exit, stdout, stderr)
			}
			r := decodeReport(t, raw)
			if r.ExitCode != code {
				t.Errorf("report's exit_code %d, exit %d", r.ExitCode, code)
			}
			if code&8 == 0 && r.Error != "" {
				t.Errorf("error %q in a report of exit %d", r.Error, code)
			}
			if msg := c.check(r); msg != "" {
				t.Errorf("%s\n%s", msg, raw)
			}
		})
	}
}

// TestJSONReportAtomic: the report is written to a temporary file in the
// same directory and renamed over FILE at the end, so FILE keeps the
// previous report during the run (and after a run that is killed), and
// a reader never sees an empty or partial one.
func TestJSONReportAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	if err := os.WriteFile(path, []byte("previous\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := newJSONReport(path, []string{"gofsck"}, "dev")
	if err != nil {
		t.Fatal(err)
	}
	// The run is under way (or was killed here): FILE is untouched.
	if b, _ := os.ReadFile(path); string(b) != "previous\n" {
		t.Fatalf("during the run FILE holds %q", b)
	}
	var errb bytes.Buffer
	if code := r.finish(0, "gofsck", &errb); code != 0 {
		t.Fatalf("finish: %d %s", code, errb.String())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if rep := decodeReport(t, raw); rep.ExitCode != 0 || rep.Device != "dev" {
		t.Errorf("report %+v", rep)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm()&0o444 != 0o444 {
		t.Errorf("mode %v: not readable as a plain create makes it", fi.Mode())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("files left in the directory: %v", names)
	}
}

// TestJSONReportFields: the directory entry's inode of a %Di message
// (PR_2_UNUSED_INODE) is the finding's entry_inode; the report names the
// filesystem's UUID (as dumpe2fs prints it); and a preen run that stops
// at a problem it may not fix (exit 4, no summary, as e2fsck -p stops on
// the same image) says so in stop, naming that problem.
func TestJSONReportFields(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	base := testfs.MkImage(t, testfs.Spec{Populate: func(tr *testfs.Tree) {
		tr.Dir("d")
		tr.File("d/f", 5000)
		tr.File("d/g", 5000)
	}})
	unused := testfs.CopyImage(t, base)
	testfs.Debugfs(t, unused, "clri /d/f")
	rep := filepath.Join(t.TempDir(), "r.json")
	_, _, code, raw := runJSON(t, unused, rep, "-fn")
	r := decodeReport(t, raw)
	found := false
	for _, f := range r.Findings {
		if f.Name != "PR_2_UNUSED_INODE" {
			continue
		}
		found = true
		if f.EntryInode == nil || !strings.Contains(f.Message, fmt.Sprintf("deleted/unused inode %d.", *f.EntryInode)) {
			t.Errorf("entry_inode %v, message %q", f.EntryInode, f.Message)
		}
	}
	if code != 4 || !found {
		t.Errorf("exit %d, findings %+v", code, r.Findings)
	}
	out, err := exec.Command("dumpe2fs", "-h", base).CombinedOutput()
	if err != nil {
		t.Fatalf("dumpe2fs: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^Filesystem UUID:\s+(\S+)$`).FindSubmatch(out)
	if m == nil || r.UUID != string(m[1]) {
		t.Errorf("uuid %q, dumpe2fs says %q", r.UUID, m)
	}

	halt := testfs.CopyImage(t, base)
	testfs.Debugfs(t, halt, "sif /d/g mode 0")
	ehalt := testfs.CopyImage(t, halt)
	stdout, stderr, code, raw := runJSON(t, halt, rep, "-fp")
	r = decodeReport(t, raw)
	eout, ecode := runE2fsck(t, "-fp", ehalt)
	if code != 4 || ecode != 4 || !strings.Contains(eout, "UNEXPECTED INCONSISTENCY") {
		t.Fatalf("-fp: gofsck exit %d, e2fsck exit %d\n%s", code, ecode, eout)
	}
	if r.Summary != nil || r.Stop == nil || r.Stop.Reason != "preen_halt" ||
		!strings.Contains(stdout+stderr, r.Stop.Message) || len(r.Findings) == 0 ||
		r.Stop.Name != r.Findings[len(r.Findings)-1].Name || r.Stop.Name != "PR_2_BAD_MODE" {
		t.Errorf("stop %+v, summary %+v\n%s%s", r.Stop, r.Summary, stdout, stderr)
	}
	// A run that was not stopped has no stop.
	_, _, _, raw = runJSON(t, testfs.CopyImage(t, base), rep, "-fp")
	if r := decodeReport(t, raw); r.Stop != nil {
		t.Errorf("stop %+v in a run that finished", r.Stop)
	}
}
