package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"gofsck/internal/problem"
	"gofsck/internal/profile"
)

// defaultConfig is where e2fsck looks for its configuration when
// E2FSCK_CONFIG is not set.
const defaultConfig = "/etc/e2fsck.conf"

// config is what e2fsck.conf says to the run. gofsck reads the relations
// e2fsck reads; those naming something gofsck does not do (log files,
// verbose statistics, battery detection, scratch files, read-ahead sizes,
// bitmap back ends) are read by nobody and so accepted silently, as
// e2fsck accepts every relation it does not know.
type config struct {
	// settings are the [problems] entries, per code.
	settings map[problem.Code]problem.Setting
	// maxCount is [options] max_count_problems.
	maxCount int
	// allowCancellation: a run cancelled on a valid filesystem exits 0.
	allowCancellation bool
	// brokenClock is broken_system_clock: no time-based check.
	brokenClock bool
	// noTimeFudge is accept_time_fudge (or buggy_init_scripts) = false.
	noTimeFudge bool
	// keepTestFS is clear_test_fs_flag = false.
	keepTestFS bool
	// dirSlack is indexed_dir_slack_percentage, when given (else nil).
	dirSlack *uint32
}

// loadConfig reads the configuration where e2fsck reads it: the file (or
// directory) E2FSCK_CONFIG names, even an empty name, which means none,
// else /etc/e2fsck.conf; a file that does not exist is no configuration.
// A syntax error is reported as e2fsck reports it, and the run ends with
// exit 8 (ok false).
func loadConfig(stderr io.Writer) (*profile.Profile, bool) {
	path, set := os.LookupEnv("E2FSCK_CONFIG")
	if !set {
		path = defaultConfig
	}
	p, err := profile.Load(path)
	var se *profile.SyntaxError
	if errors.As(err, &se) {
		fmt.Fprintf(stderr, "Syntax error in e2fsck config file (%s, line #%d)\n\t%s\n", se.File, se.Line, se.Code.Message())
		return nil, false
	}
	return p, true
}

// applyConfig reads the configuration into o, as e2fsck's PRS and the
// places that consult the profile later do.
func applyConfig(o *options, p *profile.Profile) {
	// The command-line switches the profile can turn on. e2fsck reads
	// each into the variable that held getopt's last return (-1) or the
	// previous switch, and a value that is not a boolean leaves it as it
	// was: "report_time = maybe" is true.
	c := true
	c = boolOr(p, c, "report_time")
	if c && o.timing < 2 {
		o.timing = 2 // -t -t
	}
	c = boolOr(p, c, "report_verbose")
	if c && o.verbose == 0 {
		o.verbose = 1
	}
	c = boolOr(p, c, "no_optimize_extents")
	if c {
		o.ext.noOptimizeExtents = true
	}

	// For the others a value that is not a boolean leaves e2fsck's
	// variable uninitialised; gofsck takes the default.
	cf := &o.conf
	cf.allowCancellation, _ = p.Bool(false, "options", "allow_cancellation")
	cf.brokenClock, _ = p.Bool(false, "options", "broken_system_clock")
	fudge, _ := p.Bool(true, "options", "accept_time_fudge")
	fudge, _ = p.Bool(fudge, "options", "buggy_init_scripts")
	cf.noTimeFudge = !fudge
	clear, _ := p.Bool(true, "options", "clear_test_fs_flag")
	cf.keepTestFS = !clear
	if _, ok := p.Value("options", "indexed_dir_slack_percentage"); ok {
		v, _ := p.Uint(20, "options", "indexed_dir_slack_percentage")
		if v > 100 {
			v = 20
		}
		cf.dirSlack = &v
	}
	// A bad number is the default (profile_get_integer sets it first).
	cf.maxCount, _ = p.Int(0, "options", "max_count_problems")
	cf.settings = problemSettings(p, cf.maxCount)
}

// boolOr returns the [options] boolean name: false when absent, prev
// when the value is not a boolean.
func boolOr(p *profile.Profile, prev bool, name string) bool {
	v, err := p.Bool(false, "options", name)
	if err != nil {
		return prev
	}
	return v
}

// problemSettings reads the [problems] stanza for every code of the
// catalogue, as e2fsck's fix_problem reads it for a code the first time
// the code is reported: a description, the flags, max_count (default
// maxCount). Booleans that are not boolean words leave the flag as it is.
func problemSettings(p *profile.Profile, maxCount int) map[problem.Code]problem.Setting {
	if p == nil {
		return nil
	}
	var out map[problem.Code]problem.Setting
	for _, d := range problem.Defs() {
		key := problem.ConfigKey(d.Code)
		var s problem.Setting
		given := false
		if v, ok := p.Value("problems", key, "description"); ok {
			s.Msg, s.HasMsg, given = v, true, true
		}
		for _, f := range problem.ConfigFlags() {
			v, err := p.Bool(false, "problems", key, f.Name)
			if _, ok := p.Value("problems", key, f.Name); !ok || err != nil {
				continue
			}
			given = true
			if v {
				s.Set |= f.Flag
			} else {
				s.Clear |= f.Flag
			}
		}
		if _, ok := p.Value("problems", key, "max_count"); ok {
			s.MaxCount, _ = p.Int(maxCount, "problems", key, "max_count")
			s.HasMaxCount, given = true, true
		}
		if !given {
			continue
		}
		if out == nil {
			out = make(map[problem.Code]problem.Setting)
		}
		out[d.Code] = s
	}
	return out
}
