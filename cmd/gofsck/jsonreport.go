package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gofsck/internal/blockdev"
	"gofsck/internal/check"
	"gofsck/internal/problem"
)

// jsonSchemaID names the report format; docs/json-report.md describes it.
// The number changes only when a field is removed or changes meaning.
const jsonSchemaID = "gofsck-report/1"

// jsonReport collects what -E json=FILE writes: the findings as they are
// printed, the passes' resources and the summary. It is used from the
// reporting goroutine only.
type jsonReport struct {
	file    *os.File // the temporary file, renamed to path at the end
	inPlace bool     // file is path itself (not a regular file)
	path    string
	start   time.Time
	argv    []string
	device  string
	name    string
	uuid    string // the filesystem's UUID, once it is open
	dev     blockdev.Device
	stop    *jsonStop // why a run stopped before its summary, not by an error
	fields  map[problem.Code]problem.Field
	found   []foundProblem
	passes  []jsonPass
	pass    resources // at the start of the current pass
	summary *jsonSummary
	stderr  stderrTail // what the run printed on stderr, for "error"
}

// stderrTail keeps the first maxErrorText bytes written to it: the
// operational error's reason an exit-8 report carries.
type stderrTail struct{ b []byte }

const maxErrorText = 4096

func (s *stderrTail) Write(p []byte) (int, error) {
	if n := maxErrorText - len(s.b); n > 0 {
		s.b = append(s.b, p[:min(n, len(p))]...)
	}
	return len(p), nil
}

// foundProblem is one printed problem, kept small: Observe appends one per
// printed problem and the JSON is built only at the end.
type foundProblem struct {
	code       problem.Code
	ino, dir   uint32
	entryIno   uint32 // the directory entry's inode (%Di)
	group      uint32
	blk        uint64
	msg        string
	answerText string
	path       string
	asked, yes bool
}

// newJSONReport creates the report's temporary file, in the directory
// of path so that the final rename is atomic, at the start of the run:
// an unwritable directory fails before the check. path itself is left
// as it was until finish renames the complete report over it, so that
// a reader watching path never sees a partial report, and a run that is
// killed leaves the previous report (and a ".path.*.tmp" file) behind.
func newJSONReport(path string, argv []string, device string) (*jsonReport, error) {
	r := &jsonReport{path: path, start: time.Now(), argv: argv, device: device,
		fields: make(map[problem.Code]problem.Field)}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		// A pipe or a terminal (json=/dev/stdout): written in place,
		// nothing to rename.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		r.file, r.inPlace = f, true
	} else {
		dir, base := filepath.Split(path)
		if dir == "" {
			dir = "."
		}
		f, err := os.CreateTemp(dir, "."+base+".*.tmp")
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: unwrapPath(err)}
		}
		// The mode a plain create would give (0666 less the umask),
		// not CreateTemp's 0600.
		mask := syscall.Umask(0)
		syscall.Umask(mask)
		if err := f.Chmod(0o666 &^ os.FileMode(mask)); err != nil {
			f.Close()
			os.Remove(f.Name())
			return nil, err
		}
		r.file = f
	}
	for _, d := range problem.Defs() {
		r.fields[d.Code] = problem.Fields(d.Code)
	}
	return r, nil
}

// attach (nil-safe, like setSummary and setClean) records the device
// (for the passes' I/O), the name messages use for it and the
// filesystem's UUID.
func (r *jsonReport) attach(dev blockdev.Device, name string, uuid [16]byte) {
	if r == nil {
		return
	}
	r.dev, r.name, r.uuid = dev, name, formatUUID(uuid[:])
}

// setPreenHalt records that a preen run stopped at a problem it may not
// fix ("UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY"): the run's summary
// is null and its exit code 4, and the report says why. code is the
// problem that stopped it, 0 for a halt outside the problem table (a
// bad-block inode that cannot be read).
func (r *jsonReport) setPreenHalt(code problem.Code) {
	if r == nil {
		return
	}
	r.stop = &jsonStop{Reason: "preen_halt",
		Message: "UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY.\n\t(i.e., without -a or -p options)"}
	if code != 0 {
		r.stop.Code, r.stop.Name = fmt.Sprintf("0x%06x", uint32(code)), code.String()
	}
}

// observe is the reporter's problem.Options.Observe.
func (r *jsonReport) observe(rep problem.Report) {
	p := &rep.Problem
	if isPassHeader(p.Code) {
		return
	}
	fp := foundProblem{code: p.Code, ino: p.Ino, dir: p.Dir, group: p.Group, blk: p.Blk,
		msg: rep.Message, answerText: rep.AnswerText, path: rep.Path, asked: rep.Asked, yes: rep.Yes}
	if p.Dirent != nil {
		fp.entryIno = p.Dirent.Ino
	}
	r.found = append(r.found, fp)
}

// isPassHeader reports whether c is a pass header (PR_1_PASS_HEADER, ...,
// PR_1B_PASS_HEADER), which is printed through the reporter but is not a
// finding.
func isPassHeader(c problem.Code) bool {
	return c&0xfff == 0 && c>>16 >= 1 && c>>16 <= 5
}

// passObserver records each pass's resources and forwards to next (the
// -t timer) when set.
type passObserver struct {
	r    *jsonReport
	next check.PassObserver
}

// PassStart implements check.PassObserver.
func (o passObserver) PassStart(name string) {
	if o.next != nil {
		o.next.PassStart(name)
	}
	o.r.pass = snapshot(o.r.dev)
}

// PassEnd implements check.PassObserver.
func (o passObserver) PassEnd(name string) {
	now := snapshot(o.r.dev)
	if o.next != nil {
		o.next.PassEnd(name)
	}
	o.r.passes = append(o.r.passes, jsonPass{
		Name:          name,
		RealSeconds:   now.wall.Sub(o.r.pass.wall).Seconds(),
		UserSeconds:   (now.user - o.r.pass.user).Seconds(),
		SysSeconds:    (now.sys - o.r.pass.sys).Seconds(),
		SerialSeconds: (now.serial - o.r.pass.serial).Seconds(),
		ReadBytes:     now.read - o.r.pass.read,
		WriteBytes:    now.wrtn - o.r.pass.wrtn,
	})
}

// observer returns the check.PassObserver to use: one recording the
// passes for the report and then calling next.
func (r *jsonReport) observer(next check.PassObserver) check.PassObserver {
	return passObserver{r: r, next: next}
}

// setSummary records the final summary line of a full check.
func (r *jsonReport) setSummary(line string, st check.Stats) {
	if r == nil {
		return
	}
	frag := st.FragmentedFiles + st.FragmentedDirs
	pct := 0.0
	if st.UsedInodes > 0 {
		pct = float64((uint64(frag)*10000/uint64(st.UsedInodes)+5)/10) / 10
	}
	r.summary = &jsonSummary{
		Line: strings.TrimSuffix(line, "\n"), InodesUsed: uint64(st.UsedInodes), Inodes: uint64(st.Inodes),
		BlocksUsed: st.UsedBlocks, Blocks: st.Blocks, NonContiguousPercent: &pct,
		Counts: &jsonCounts{
			FragmentedFiles: st.FragmentedFiles, FragmentedDirs: st.FragmentedDirs,
			Directories: st.Dirs, RegularFiles: st.Regular, CharDevices: st.Chr, BlockDevices: st.Blk,
			Fifos: st.Fifo, Sockets: st.Sock, Symlinks: st.Symlinks, FastSymlinks: st.FastSymlinks,
			Links: st.Links, LargeFiles: st.LargeFiles, BadBlocks: st.BadBlocks,
		},
	}
	for n := 1; n <= 2; n++ {
		if st.Speculated&(1<<n) != 0 {
			r.summary.SpeculatedPasses = append(r.summary.SpeculatedPasses, n)
		}
	}
}

// setClean records the summary line of a check skipped as clean.
func (r *jsonReport) setClean(line string, inodesUsed, inodes, blocksUsed, blocks uint64) {
	if r == nil {
		return
	}
	r.summary = &jsonSummary{Line: strings.TrimSuffix(line, "\n"), Skipped: true,
		InodesUsed: inodesUsed, Inodes: inodes, BlocksUsed: blocksUsed, Blocks: blocks}
}

// finish writes the report for a run ending with exit code code and
// returns the exit code to use: code, with ExitError added when the
// report cannot be written. A nil report returns code.
func (r *jsonReport) finish(code int, prog string, stderr io.Writer) int {
	if r == nil {
		return code
	}
	err := r.write(code)
	if err == nil && !r.inPlace {
		err = r.file.Sync()
	}
	if cerr := r.file.Close(); err == nil {
		err = cerr
	}
	if err == nil && !r.inPlace {
		err = os.Rename(r.file.Name(), r.path)
	}
	if err != nil {
		if !r.inPlace {
			os.Remove(r.file.Name())
		}
		fmt.Fprintf(stderr, "%s: cannot write JSON report %s: %v\n", prog, r.path, err)
		return code | problem.ExitError
	}
	return code
}

func (r *jsonReport) write(code int) error {
	v := buildVersion()
	doc := jsonDoc{
		Schema:          jsonSchemaID,
		Tool:            jsonTool{Name: "gofsck", Version: v.version, Date: v.date},
		Device:          r.device,
		Name:            r.name,
		UUID:            r.uuid,
		Argv:            r.argv,
		StartTime:       r.start.UTC().Format(time.RFC3339Nano),
		DurationSeconds: time.Since(r.start).Seconds(),
		Findings:        make([]jsonFinding, len(r.found)),
		Passes:          r.passes,
		Summary:         r.summary,
		ExitCode:        code,
		Stop:            r.stop,
	}
	if code&problem.ExitError != 0 {
		// An operational error: its reason is on stderr ("No such file
		// or directory while trying to open ...", "aborted", ...).
		doc.Error = strings.TrimSpace(string(r.stderr.b))
		if doc.Error == "" {
			doc.Error = "operational error"
		}
	}
	if doc.Argv == nil {
		doc.Argv = []string{}
	}
	if doc.Passes == nil {
		doc.Passes = []jsonPass{}
	}
	for i := range r.found {
		doc.Findings[i] = r.finding(&r.found[i])
	}
	w := bufio.NewWriterSize(r.file, 1<<16)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&doc); err != nil {
		return err
	}
	return w.Flush()
}

// finding turns a recorded problem into its JSON form, keeping only the
// fields its message names.
func (r *jsonReport) finding(f *foundProblem) jsonFinding {
	c := f.code
	j := jsonFinding{
		Code:       fmt.Sprintf("0x%06x", uint32(c)),
		Name:       c.String(),
		Pass:       int(c >> 16),
		Phase:      strconv.Itoa(int(c >> 16)),
		Message:    f.msg,
		AnswerText: f.answerText,
	}
	if sub := int(c>>12) & 0xf; sub != 0 {
		// Pass 1's extra passes start at 1B (0x011000), pass 3's at 3A.
		if j.Pass == 1 {
			sub++
		}
		j.Phase += string(rune('A' + sub - 1))
	}
	if f.asked {
		j.Answer = "no"
		if f.yes {
			j.Answer = "yes"
		}
	}
	fl := r.fields[c]
	if fl&problem.FieldIno != 0 {
		j.Inode = &f.ino
	}
	if fl&problem.FieldDir != 0 {
		j.Dir = &f.dir
	}
	if fl&problem.FieldDirent != 0 {
		// The inode the directory entry points to (%Di), e.g. the
		// unused or bad inode of PR_2_UNUSED_INODE, PR_2_BAD_INO.
		j.EntryInode = &f.entryIno
	}
	if fl&problem.FieldBlk != 0 {
		j.Block = &f.blk
	}
	if fl&problem.FieldGroup != 0 {
		j.Group = &f.group
	}
	if fl&problem.FieldPath != 0 && f.msg != "" {
		j.Path = &f.path
	}
	return j
}

// The JSON document, as docs/json-report.md and json-report.schema.json
// describe it.
type (
	jsonDoc struct {
		Schema          string        `json:"schema"`
		Tool            jsonTool      `json:"tool"`
		Device          string        `json:"device"`
		Name            string        `json:"name"`
		UUID            string        `json:"uuid,omitempty"`
		Argv            []string      `json:"argv"`
		StartTime       string        `json:"start_time"`
		DurationSeconds float64       `json:"duration_seconds"`
		Findings        []jsonFinding `json:"findings"`
		Passes          []jsonPass    `json:"passes"`
		Summary         *jsonSummary  `json:"summary"`
		ExitCode        int           `json:"exit_code"`
		Error           string        `json:"error,omitempty"`
		Stop            *jsonStop     `json:"stop,omitempty"`
	}
	jsonStop struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
		Code    string `json:"code,omitempty"`
		Name    string `json:"name,omitempty"`
	}
	jsonTool struct {
		Name    string `json:"name"`
		Version string `json:"version"`
		Date    string `json:"date"`
	}
	jsonFinding struct {
		Code       string  `json:"code"`
		Name       string  `json:"name"`
		Pass       int     `json:"pass"`
		Phase      string  `json:"phase"`
		Inode      *uint32 `json:"inode,omitempty"`
		Dir        *uint32 `json:"dir,omitempty"`
		EntryInode *uint32 `json:"entry_inode,omitempty"`
		Block      *uint64 `json:"block,omitempty"`
		Group      *uint32 `json:"group,omitempty"`
		Path       *string `json:"path,omitempty"`
		Message    string  `json:"message"`
		Answer     string  `json:"answer"`
		AnswerText string  `json:"answer_text"`
	}
	jsonPass struct {
		Name        string  `json:"name"`
		RealSeconds float64 `json:"real_seconds"`
		UserSeconds float64 `json:"user_seconds"`
		SysSeconds  float64 `json:"sys_seconds"`
		// SerialSeconds is the CPU time of the goroutine that runs the
		// check (locked to its thread): the pass's serial part.
		SerialSeconds float64 `json:"serial_seconds"`
		ReadBytes     uint64  `json:"read_bytes"`
		WriteBytes    uint64  `json:"write_bytes"`
	}
	jsonSummary struct {
		Line                 string      `json:"line"`
		Skipped              bool        `json:"skipped"`
		InodesUsed           uint64      `json:"inodes_used"`
		Inodes               uint64      `json:"inodes"`
		BlocksUsed           uint64      `json:"blocks_used"`
		Blocks               uint64      `json:"blocks"`
		NonContiguousPercent *float64    `json:"non_contiguous_percent,omitempty"`
		Counts               *jsonCounts `json:"counts,omitempty"`
		SpeculatedPasses     []int       `json:"speculated_passes,omitempty"`
	}
	jsonCounts struct {
		FragmentedFiles uint32 `json:"fragmented_files"`
		FragmentedDirs  uint32 `json:"fragmented_dirs"`
		Directories     uint32 `json:"directories"`
		RegularFiles    uint32 `json:"regular_files"`
		CharDevices     uint32 `json:"char_devices"`
		BlockDevices    uint32 `json:"block_devices"`
		Fifos           uint32 `json:"fifos"`
		Sockets         uint32 `json:"sockets"`
		Symlinks        uint32 `json:"symlinks"`
		FastSymlinks    uint32 `json:"fast_symlinks"`
		Links           uint32 `json:"links"`
		LargeFiles      uint32 `json:"large_files"`
		BadBlocks       uint32 `json:"bad_blocks"`
	}
)
