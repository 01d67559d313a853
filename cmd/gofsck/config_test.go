package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gofsck/internal/problem"
	"gofsck/internal/profile"
	"gofsck/internal/testfs"
)

// TestMain gives the in-process runs the empty e2fsck.conf the oracle
// runs get (testfs.Env), whatever /etc/e2fsck.conf the machine has.
func TestMain(m *testing.M) {
	os.Setenv("E2FSCK_CONFIG", "/dev/null")
	testfs.Main(m)
}

// writeConf writes an e2fsck.conf for a test and returns its path.
func writeConf(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "e2fsck.conf")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// confRun runs gofsck (in process) and e2fsck on their own copies of img
// with E2FSCK_CONFIG=conf and args, and returns both transcripts
// (normalised with norm, the copy's path as IMG) and exit codes.
func confRun(t *testing.T, conf, img string, args ...string) (gout string, gcode int, eout string, ecode int) {
	t.Helper()
	gout, gcode, _, eout, ecode, _ = confRunImages(t, conf, img, args...)
	return gout, gcode, eout, ecode
}

// confRunImages is confRun that returns the copies too.
func confRunImages(t *testing.T, conf, img string, args ...string) (gout string, gcode int, gimg, eout string, ecode int, eimg string) {
	t.Helper()
	gimg, eimg = testfs.CopyImage(t, img), testfs.CopyImage(t, img)
	t.Setenv("E2FSCK_CONFIG", conf)
	g, gc := runGofsck(append(args, gimg)...)
	e, ec := runE2fsckEnv(t, []string{"E2FSCK_CONFIG=" + conf}, append(args, eimg)...)
	return norm(g, gimg), gc, gimg, norm(e, eimg), ec, eimg
}

// futureNow masks the clock e2fsck prints in PR_0_FUTURE_SB_LAST_*
// ("now = ..."), which the two runs read at different moments.
var futureNow = regexp.MustCompile(`now = [^)]*\)`)

// TestConfigMatchesE2fsck runs gofsck and e2fsck on the same damaged
// images with the same e2fsck.conf and requires the same transcript and
// exit code; each setting must also have changed e2fsck's transcript or
// exit code from the run without configuration (want names what must
// appear then), so that every case tests something.
func TestConfigMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	ext4 := testfs.Spec{FSType: "ext4", Size: 16 << 20, Populate: populate}
	// Blocks that are not blocks, in a block-mapped file: pass 1's
	// illegal-block latch (PR_1_INODE_BLOCK_LATCH, then one
	// PR_1_ILLEGAL_BLOCK_NUM per block).
	ext3 := testfs.Spec{FSType: "ext3", Size: 16 << 20, Populate: populate}
	illegal := []string{"sif /a/two block[0] 4000000000", "sif /a/two block[1] 4000000001", "sif /a/two block[3] 4000000003"}
	// Five link counts wrong (PR_4_BAD_REF_COUNT, 0x040003).
	var refs []string
	for i := 1; i <= 5; i++ {
		refs = append(refs, fmt.Sprintf("sif /many/entry-with-a-long-name-%05d links_count 5", i))
	}
	soon := time.Now().Add(2 * time.Hour).UTC().Format("20060102150405")
	later := time.Now().Add(30 * 24 * time.Hour).UTC().Format("20060102150405")
	// (debugfs stamps s_wtime itself when it closes the image: only the
	// mount time can be set in the future.)

	cases := []struct {
		name   string
		spec   testfs.Spec
		damage []string
		conf   string
		args   []string
		want   string // in e2fsck's transcript with the configuration
	}{
		// PR_5_FREE_BLOCK_COUNT answered no whatever the mode; it is
		// NO_OK, so the run is clean.
		{"force_no -fy", ext4, []string{"ssv free_blocks_count 12"},
			"[problems]\n\t0x05000f = {\n\t\tforce_no = true\n\t}\n", []string{"-fy"}, "IGNORED."},
		{"force_no -p", ext4, []string{"ssv free_blocks_count 12", "sif /a/one links_count 5"},
			"[problems]\n\t0x040003 = {\n\t\tforce_no = true\n\t}\n", []string{"-fp"}, "IGNORED."},
		// Not NO_OK: the declined fix leaves the filesystem with errors.
		{"force_no not no_ok", ext4, refs[:1],
			"[problems]\n0x040003 = {\nforce_no = yes\n}\n", []string{"-fy"}, "still has errors"},
		{"no_ok", ext4, refs[:2],
			"[problems]\n0x040003 = {\nno_ok = true\n}\n", []string{"-fn"}, "Fix? no"},
		{"no_ok cleared", ext4, []string{"ssv free_blocks_count 12"},
			"[problems]\n0x05000f = {\n no_ok = false\n}\n", []string{"-fn"}, "still has errors"},
		// preen may fix what it would halt on.
		{"preen_ok", ext3, illegal,
			"[problems]\n0x010010 = {\npreen_ok = true\n}\n0x01000e = {\npreen_ok = true\n}\n", []string{"-fp"}, "CLEARED."},
		{"preen_ok cleared", ext4, refs[:1],
			"[problems]\n0x040003 = {\npreen_ok = false\n}\n", []string{"-fp"}, "UNEXPECTED INCONSISTENCY"},
		{"preen_nomessage", ext4, refs[:2],
			"[problems]\n0x040003 = {\npreen_nomessage = true\n}\n", []string{"-fp"}, "files"},
		{"preen_noheader", ext4, refs[:2],
			"[problems]\n0x040003 = {\npreen_noheader = on\n}\n", []string{"-fp"}, "\nInode"},
		{"no_nomsg", ext4, refs[:2],
			"[problems]\n0x040003 = {\nno_nomsg = 1\n}\n", []string{"-fn"}, "Fix? no"},
		{"no_nomsg with force_no", ext4, refs[:2],
			"[problems]\n0x040003 = {\nforce_no = 1\nno_nomsg = t\n}\n", []string{"-fy"}, "Pass 5"},
		{"no_default -p", ext4, refs[:2],
			"[problems]\n0x040003 = {\nno_default = true\n}\n", []string{"-fp"}, "IGNORED."},
		{"not_a_fix", ext4, refs[:1],
			"[problems]\n0x040003 = {\nnot_a_fix = true\n}\n", []string{"-fy"}, "Fix? yes"},
		{"description", ext4, refs[:2],
			"[problems]\n0x040003 = {\ndescription = \"@i %i has %Il links, counted %N.  \"\n}\n", []string{"-fn"},
			"Inode 17 has 5 links, counted 1.  Fix? no"},
		// max_count_problems and a code's own max_count.
		{"max_count_problems", ext4, refs,
			"[options]\nmax_count_problems = 2\n", []string{"-fn"}, "...problem 0x040003 suppressed"},
		{"max_count", ext4, refs,
			"[options]\nmax_count_problems = 1\n[problems]\n0x040003 = {\nmax_count = 3\n}\n", []string{"-fy"}, "...problem 0x040003 suppressed"},
		// The counts go on after "Restarting e2fsck from the
		// beginning", pass headers included.
		{"max_count across a restart", testfs.Spec{FSType: "ext4", Size: 8 << 20, Features: "inline_data", Populate: populate},
			[]string{"rmdir lost+found", "mkdir lost+found"},
			"[options]\nmax_count_problems = 1\n", []string{"-fy"}, "Restarting e2fsck from the beginning...\n...problem 0x010000 suppressed"},
		{"max_count negative", ext4, refs,
			"[problems]\n0x040003 = {\nmax_count = -1\n}\n", []string{"-fy"}, "Fix? yes"},
		{"max_count bad number", ext4, refs,
			"[options]\nmax_count_problems = 2\n[problems]\n0x040003 = {\nmax_count = two\n}\n", []string{"-fn"}, "suppressed"},
		// Latches: the latch question is a problem code of its own. A no
		// to it answers every member; max_count then silences members.
		{"latch force_no", ext3, illegal,
			"[problems]\n0x010010 = {\nforce_no = true\n}\n", []string{"-fy"}, "IGNORED."},
		{"latch member max_count", ext3, illegal,
			"[problems]\n0x01000e = {\nmax_count = 1\n}\n", []string{"-fn"}, "suppressed"},
		{"latch end force_no", ext4, []string{"freeb 300 4", "freeb 400 2"},
			"[problems]\n0x050006 = {\nforce_no = true\n}\n", []string{"-fy"}, "IGNORED."},
		// [options] that change what is checked.
		{"broken_system_clock -f", ext4, []string{"ssv mtime " + later},
			"[options]\nbroken_system_clock = true\n", []string{"-fn"}, "Pass 1"},
		{"broken_system_clock skip", ext4, []string{"ssv checkinterval 86400", "ssv lastcheck 20000101"},
			"[options]\nbroken_system_clock = 1\n", []string{"-n"}, "ignoring check interval, broken_system_clock set"},
		{"accept_time_fudge false", ext4, []string{"ssv mtime " + soon},
			"[options]\naccept_time_fudge = false\n", []string{"-fn"}, "is in the future.\n"},
		{"buggy_init_scripts false", ext4, []string{"ssv mtime " + soon},
			"[options]\nbuggy_init_scripts = false\n", []string{"-fn"}, "is in the future.\n"},
		{"lastcheck in the future without fudge", ext4, []string{"ssv checkinterval 86400", "ssv lastcheck " + soon},
			"[options]\naccept_time_fudge = 0\n", []string{"-n"}, "last checked time in the future"},
		{"clear_test_fs_flag false", ext4, []string{"ssv flags 4"},
			"[options]\nclear_test_fs_flag = false\n", []string{"-fy"}, "Pass 5"},
		{"no_optimize_extents", testfs.Spec{Size: 16 << 20, FSType: "ext4", BlockSize: 1024, Features: "^metadata_csum",
			Populate: func(tr *testfs.Tree) { tr.Sparse("d/big", 3000*1024, 1024, 2048) }},
			[]string{"punch /d/big 0 1", "punch /d/big 8 11", "punch /d/big 16 19", "punch /d/big 24 27", "punch /d/big 32 1999"},
			"[options]\nno_optimize_extents = true\n", []string{"-fn"}, "Pass 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img := testfs.MkImage(t, tc.spec)
			testfs.Debugfs(t, img, tc.damage...)
			conf := writeConf(t, tc.conf)
			gout, gcode, eout, ecode := confRun(t, conf, img, tc.args...)
			gout, eout = futureNow.ReplaceAllString(gout, "now = NOW)"), futureNow.ReplaceAllString(eout, "now = NOW)")
			if gout != eout || gcode != ecode {
				t.Errorf("exit %d, e2fsck %d; transcripts differ:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, eout, gout)
			}
			if !strings.Contains(eout, tc.want) {
				t.Errorf("e2fsck's transcript lacks %q:\n%s", tc.want, eout)
			}
			_, _, plain, pcode := confRun(t, "/dev/null", img, tc.args...)
			if plain = futureNow.ReplaceAllString(plain, "now = NOW)"); plain == eout && pcode == ecode {
				t.Errorf("the configuration changed nothing in e2fsck's run:\n%s", eout)
			}
		})
	}
}

// TestConfigFilesMatchE2fsck: where the configuration comes from and
// what a bad one does, against e2fsck: a syntax error (message on stderr,
// exit 8, nothing checked), a missing file and an empty E2FSCK_CONFIG (no
// configuration), a directory of files, and options after which the check
// goes on as without them.
func TestConfigFilesMatchE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 8 << 20, Populate: populate})
	testfs.Debugfs(t, img, "ssv free_blocks_count 12")
	dir := t.TempDir()
	confd := filepath.Join(dir, "conf.d")
	os.Mkdir(confd, 0o755)
	os.WriteFile(filepath.Join(confd, "10-first"), []byte("[problems]\n0x05000f = {\ndescription = \"first %b\\n\"\n}\n"), 0o644)
	os.WriteFile(filepath.Join(confd, "20-second"), []byte("[problems]\n0x05000f = {\nforce_no = true\ndescription = second\n}\n"), 0o644)
	os.WriteFile(filepath.Join(confd, "skip.conf"), []byte("[problems]\n0x05000f = {\nno_nomsg = true\n}\n"), 0o644)
	badd := filepath.Join(dir, "bad.d")
	os.Mkdir(badd, 0o755)
	os.WriteFile(filepath.Join(badd, "a"), []byte("[options]\n"), 0o644)
	os.WriteFile(filepath.Join(badd, "b"), []byte("[options]\n  x = {\n[problems]\n"), 0o644)

	cases := []struct {
		name string
		conf string // the file's text, or a path when path is set
		path bool
		args []string
		want string
	}{
		{name: "section syntax", conf: "[options\nfoo = 1\n", args: []string{"-fn"}, want: "Syntax error in profile section header"},
		{name: "relation syntax", conf: "# comment\n[options]\n\tno_such_thing\n", args: []string{"-fy"}, want: "line #3"},
		{name: "extra brace", conf: "[options]\n}\n", args: []string{"-p"}, want: "Extra closing brace"},
		{name: "missing brace", conf: "[problems]\n0x05000f =\n\n{\n", args: []string{"-fn"}, want: "Missing open brace"},
		{name: "section not at top", conf: "[problems]\n0x05000f = {\n[options]\n", args: []string{"-fn"}, want: "not at top level"},
		{name: "error in a directory's file", conf: badd, path: true, args: []string{"-fn"}, want: "bad.d/b, line #3"},
		// Command-line errors come first, as e2fsck reads its
		// configuration at the end of its option parsing.
		{name: "-E before the syntax error", conf: "[options\n", args: []string{"-fyD", "-E", "fixes_only"}, want: "incompatible"},
		{name: "-n -D before the syntax error", conf: "}\n[o\n", args: []string{"-fnD"}, want: "incompatible"},
		{name: "missing file", conf: filepath.Join(dir, "none"), path: true, args: []string{"-fy"}, want: "Fix? yes"},
		{name: "empty name", conf: "", path: true, args: []string{"-fy"}, want: "Fix? yes"},
		{name: "directory", conf: confd, path: true, args: []string{"-fy"}, want: "first 12\nIGNORED."},
		{name: "unknown options and stanzas", args: []string{"-fy"}, want: "Fix? yes",
			conf: "[options]\nlog_filename = /nonexistent/log\nreport_features = true\nreadahead_kb = 12\ninode_count_fullmap = 1\n" +
				"defer_check_on_battery = false\nundo_dir = none\nold_bitmaps = 0\n[scratch_files]\ndirectory = /nonexistent\n" +
				"numdirs_threshold = 1\n[defaults]\nundo_dir = /nonexistent\n[bitmaps]\nall = 2\n[whatever]\nx = y\n"},
		{name: "bad booleans", args: []string{"-fy"}, want: "Fix? yes",
			conf: "[problems]\n0x05000f = {\nforce_no = maybe\npreen_ok = \"\"\n}\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conf := tc.conf
			if !tc.path {
				conf = writeConf(t, tc.conf)
			}
			gout, gcode, eout, ecode := confRun(t, conf, img, tc.args...)
			gout, eout = strings.ReplaceAll(gout, dir, "DIR"), strings.ReplaceAll(eout, dir, "DIR")
			if gout != eout || gcode != ecode {
				t.Errorf("exit %d, e2fsck %d; transcripts differ:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, eout, gout)
			}
			if !strings.Contains(eout, tc.want) {
				t.Errorf("e2fsck's transcript lacks %q:\n%s", tc.want, eout)
			}
		})
	}
}

// TestConfigDescriptionQuoting puts tricky values in a problem's
// description, where e2fsck prints them, to check that gofsck's parser
// reads every one as e2fsprogs' does: escapes, unclosed quotes (which keep
// the line's end), comments, '*' in tags, CR LF lines, long lines.
func TestConfigDescriptionQuoting(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 8 << 20, Populate: populate})
	testfs.Debugfs(t, img, "ssv free_blocks_count 12")
	values := []string{
		`"tab\there, newline\nbackslash\\ quote\" back\bspace \q"`,
		`"unclosed`,
		"\"unclosed with CR LF\r",
		`word#comment`,
		`word ; comment`,
		`"quoted" and then anything = here`,
		`"%b is not %c: @f @b@c"`,
		`""`,
		`"` + strings.Repeat("long ", 300) + `"`,
	}
	for i, v := range values {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			text := "leading text = is a comment\n[problems]\n\t0x05000f* = {\n\t\tdescription = " + v + "\n\t}\r\n"
			conf := writeConf(t, text)
			gout, gcode, eout, ecode := confRun(t, conf, img, "-fn")
			if gout != eout || gcode != ecode {
				t.Errorf("%q: exit %d, e2fsck %d; transcripts differ:\n--- e2fsck\n%s--- gofsck\n%s", v, gcode, ecode, eout, gout)
			}
			if strings.Contains(eout, "Free blocks count wrong") {
				t.Errorf("%q: e2fsck did not take the description:\n%s", v, eout)
			}
		})
	}
}

// TestConfigAllowCancellation: Ctrl-C at a question on a terminal cancels
// the run (exit 32); with allow_cancellation, a filesystem the run has
// not found invalid exits 0, as e2fsck's does.
func TestConfigAllowCancellation(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	base := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 16 << 20, Populate: populate})
	testfs.Debugfs(t, base, "sif /a/one links_count 5", "freeb 300 4")
	for _, conf := range []string{"", "[options]\nallow_cancellation = true\n"} {
		path := writeConf(t, conf)
		env := []string{"E2FSCK_CONFIG=" + path}
		for _, answers := range []string{"\x03", "n\x03"} {
			gimg, eimg := testfs.CopyImage(t, base), testfs.CopyImage(t, base)
			gout, gcode, gleft := runOnPTYEnv(t, testfs.GofsckPath(t), answers, env, "-f", gimg)
			eout, ecode, eleft := runOnPTYEnv(t, lookE2fsck(), answers, env, "-f", eimg)
			if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode || gleft != eleft {
				t.Errorf("%q %q: exit %d vs e2fsck %d, answers left %q vs %q; terminal differs:\n--- e2fsck\n%s--- gofsck\n%s",
					conf, answers, gcode, ecode, gleft, eleft, e, g)
			}
			if conf != "" && answers == "\x03" && ecode != 0 {
				t.Errorf("allow_cancellation: e2fsck exited %d", ecode)
			}
		}
	}
}

// TestConfigDirSlackMatchesE2fsck: indexed_dir_slack_percentage sets how
// full pass 3A packs a rebuilt htree directory's leaves; gofsck -fyD must
// write e2fsck's blocks for each value (out of range means 20).
func TestConfigDirSlackMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 16 << 20,
		Populate: func(tr *testfs.Tree) { tr.ManyFiles("big", 900) }})
	summaries := map[string]string{}
	for _, v := range []string{"0", "50", "100", "101", "bad"} {
		conf := writeConf(t, "[options]\n\tindexed_dir_slack_percentage = "+v+"\n")
		gout, gcode, gimg, eout, ecode, eimg := confRunImages(t, conf, img, "-fyD")
		if gout != eout || gcode != ecode {
			t.Errorf("%s: exit %d, e2fsck %d; transcripts differ:\n--- e2fsck\n%s--- gofsck\n%s", v, gcode, ecode, eout, gout)
			continue
		}
		compareImages(t, "slack "+v, gimg, eimg)
		lines := strings.Split(strings.TrimSpace(eout), "\n")
		summaries[v] = lines[len(lines)-1]
	}
	if summaries["0"] == summaries["50"] || summaries["101"] != summaries["bad"] {
		t.Errorf("the slack did not change e2fsck's result as expected: %v", summaries)
	}
}

// TestApplyConfig checks how [options] values reach the run, including
// e2fsck's reading of a value that is not a boolean: for the switches PRS
// reads one after another it keeps the previous one's value (getopt's -1,
// true, for the first).
func TestApplyConfig(t *testing.T) {
	u := func(v uint32) *uint32 { return &v }
	tests := []struct {
		conf              string
		timing, verbose   int
		noOptimizeExtents bool
		want              config
	}{
		{conf: "", want: config{}},
		{conf: "[options]\nreport_time = maybe\n", timing: 2},
		{conf: "[options]\nreport_time = maybe\nreport_verbose = maybe\nno_optimize_extents = maybe\n",
			timing: 2, verbose: 1, noOptimizeExtents: true},
		{conf: "[options]\nreport_time = no\nreport_verbose = maybe\nno_optimize_extents = true\n",
			noOptimizeExtents: true},
		{conf: "[options]\nreport_verbose = yes\n", verbose: 1},
		{conf: "[options]\nallow_cancellation = true\nbroken_system_clock = on\naccept_time_fudge = off\n" +
			"clear_test_fs_flag = false\nmax_count_problems = 0x10\nindexed_dir_slack_percentage = 5\n",
			want: config{allowCancellation: true, brokenClock: true, noTimeFudge: true, keepTestFS: true,
				maxCount: 16, dirSlack: u(5)}},
		{conf: "[options]\naccept_time_fudge = false\nbuggy_init_scripts = true\n", want: config{}},
		{conf: "[options]\nbuggy_init_scripts = 0\n", want: config{noTimeFudge: true}},
		{conf: "[options]\nallow_cancellation = maybe\nclear_test_fs_flag = maybe\nmax_count_problems = x\n" +
			"indexed_dir_slack_percentage = 101\n", want: config{dirSlack: u(20)}},
		{conf: "[options]\nindexed_dir_slack_percentage = -1\n", want: config{dirSlack: u(20)}},
	}
	for _, tc := range tests {
		p, err := profile.Parse("t", strings.NewReader(tc.conf))
		if err != nil {
			t.Fatal(err)
		}
		o := &options{}
		applyConfig(o, p)
		got := o.conf
		got.settings = nil
		if o.timing != tc.timing || o.verbose != tc.verbose || o.ext.noOptimizeExtents != tc.noOptimizeExtents ||
			fmt.Sprint(derefConfig(got)) != fmt.Sprint(derefConfig(tc.want)) {
			t.Errorf("%q: timing %d verbose %d no_optimize_extents %v %+v; want %d %d %v %+v", tc.conf,
				o.timing, o.verbose, o.ext.noOptimizeExtents, derefConfig(got), tc.timing, tc.verbose, tc.noOptimizeExtents, derefConfig(tc.want))
		}
	}
}

// derefConfig prints a config's slack by value.
func derefConfig(c config) string {
	slack := "nil"
	if c.dirSlack != nil {
		slack = fmt.Sprint(*c.dirSlack)
	}
	c.dirSlack = nil
	return fmt.Sprintf("%+v slack=%s", c, slack)
}

// TestProblemSettings reads a [problems] stanza into settings.
func TestProblemSettings(t *testing.T) {
	p, err := profile.Parse("t", strings.NewReader(`[problems]
	0x05000f = {
		force_no = true
		preen_ok = false
		no_ok = maybe
		description = "text %b"
		max_count = 4
	}
	0x040003 = {
		max_count = bad
	}
	0x999999 = {
		force_no = true
	}
	0x05000F = {
		no_nomsg = true
	}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := problemSettings(p, 7)
	want := map[problem.Code]problem.Setting{
		problem.PR_5_FREE_BLOCK_COUNT: {Set: problem.FlagForceNo, Clear: problem.FlagPreenOK, Msg: "text %b", HasMsg: true,
			MaxCount: 4, HasMaxCount: true},
		problem.PR_4_BAD_REF_COUNT: {MaxCount: 7, HasMaxCount: true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("settings %+v\nwant %+v", got, want)
	}
	if problemSettings(nil, 0) != nil {
		t.Error("no profile, some settings")
	}
}

// TestConfigSuperCorruptMatchesE2fsck: the hint printed when no
// superblock can be read is a problem (PR_0_SB_CORRUPT) whose description
// and preen header e2fsck.conf may change.
func TestConfigSuperCorruptMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 8 << 20})
	testfs.WriteAt(t, img, 1024+56, testfs.Le16(0)) // s_magic
	conf := writeConf(t, "[problems]\n0x000004 = {\n\tdescription = \"@S is bad on @v.\\n\"\n\tpreen_noheader = true\n}\n")
	for _, args := range [][]string{{"-fn"}, {"-p"}} {
		gout, gcode, eout, ecode := confRun(t, conf, img, args...)
		if gout != eout || gcode != ecode {
			t.Errorf("%v: exit %d, e2fsck %d; transcripts differ:\n--- e2fsck\n%s--- gofsck\n%s", args, gcode, ecode, eout, gout)
		}
		if !strings.Contains(eout, "\nSuperblock is bad on device.\n") {
			t.Errorf("%v: e2fsck did not take the description:\n%s", args, eout)
		}
	}
}
