package problem

import (
	"bufio"
	"fmt"
	"io"
	"time"
)

// Mode is how questions are answered.
type Mode uint8

// The answering modes. The zero value is ModeNo, the safe one.
const (
	// ModeNo answers every question no (-n).
	ModeNo Mode = iota
	// ModeYes answers every question yes (-y).
	ModeYes
	// ModePreen fixes what is safe without asking and halts on anything
	// else (-p, -a).
	ModePreen
	// ModeInteractive asks and reads single-character answers from
	// Options.In.
	ModeInteractive
)

// Options configure a Reporter.
type Options struct {
	Mode Mode
	// In supplies the answers in ModeInteractive; it is read one byte at a
	// time, as e2fsck reads the terminal: y/Y yes, n/N no, a/A yes to all,
	// Enter, space or Escape the default; other bytes are ignored. End of
	// input takes the default.
	In io.Reader
	// AnswerMode, if set, is called before each interactive question's
	// prompt is printed and the function it returns once the answer is
	// read, as e2fsck's ask_yn switches the terminal out of canonical mode
	// and echo before it prints the prompt: a key typed as soon as the
	// prompt shows (Ctrl-C included) is then never echoed by the terminal.
	AnswerMode func() (restore func())
	// Err receives the preen-halt message (stderr). Nil discards it.
	Err io.Writer
	// Device is the name printed in front of messages when preening
	// ("test.img: ") and in the preen-halt message.
	Device string
	// BackupSuper is the backup superblock %S names (e2fsck's
	// get_backup_sb: s_blocks_per_group + s_first_data_block of the open
	// filesystem); 0 prints 8193.
	BackupSuper uint64
	// Namer resolves %p, %P, %q and %Q path names. Nil prints "???".
	Namer Namer
	// Now returns the current time for %T. Nil uses time.Now.
	Now func() time.Time
	// Location is the time zone for %t, %T and %IM (e2fsck uses the local
	// time zone, TZ). Nil uses time.Local.
	Location *time.Location
	// MaxCount, when not 0, is e2fsck.conf's max_count_problems: after a
	// code has been reported MaxCount times further reports of it are not
	// printed (in -n/-y mode, for preen-safe problems when preening, and
	// for latch members whose latch is answered), and "...problem 0x%06x
	// suppressed" is printed once. A negative count, as in e2fsck,
	// suppresses every report without that line.
	MaxCount int
	// Settings are e2fsck.conf's [problems] entries (see Setting); codes
	// not in the catalogue, or of the I/O channel's questions, are
	// ignored.
	Settings map[Code]Setting
	// BeforePrint, if set, is called before anything is printed (to clear
	// a progress bar).
	BeforePrint func()
	// Observe, if set, is called for every problem the Reporter prints
	// (pass headers included), once its message and answer are printed
	// and before any chained problem is reported, so calls come in output
	// order. A problem that prints nothing (suppressed) is not observed.
	Observe func(Report)
	// CanFix, when set and the mode may answer yes, says whether the
	// checker implements the fix of a prompted problem. A problem it
	// cannot fix and would answer yes to is not printed: the run stops
	// instead (Status.Unsupported), so that gofsck never claims a fix it
	// does not make. Nil means every fix is implemented.
	CanFix func(Code) bool
	// Answers carries what interactive questions asked by an earlier
	// Reporter of the run left (e2fsck's ask_yn keeps its count of yes
	// answers for the whole run, and 'a' answers yes from then on).
	Answers Answers
}

// Answers is the state interactive answers leave for later questions.
type Answers struct {
	yesStreak int  // consecutive yes answers (the "'a' enables" hint)
	yesToAll  bool // 'a' was typed: every later question is answered yes
}

// Report is one printed problem, as passed to Options.Observe. Message
// followed by AnswerText is exactly what was printed for it.
type Report struct {
	// Problem is the context; Problem.Code is the code printed (a latch
	// question or chained problem has its own Report).
	Problem Problem
	// Message is the text printed before the answer, with the preen
	// prefix ("dev: ") when preening.
	Message string
	// AnswerText is what was printed after the message: the question and
	// answer ("Fix? no\n\n"), or a latched or forced answer ("IGNORED.\n",
	// "CLEARED.\n"); empty for message-only problems.
	AnswerText string
	// Asked is true for problems with a question (Prompt != PromptNone).
	Asked bool
	// Yes is the answer: true when the fix is accepted. For message-only
	// problems it is the value Fix returns.
	Yes bool
	// Path is the first path name in the message (%p, %P, %q or %Q as
	// printed), "" when the message has none.
	Path string
}

// LatchState is the state of a latch group, e2fsck's PRL_* flags.
type LatchState uint8

// The latch states.
const (
	LatchStateYes      LatchState = 1 << iota // the group's answer is yes
	LatchStateNo                              // the group's answer is no
	LatchStateLatched                         // the question has been asked
	LatchStateSuppress                        // members are not printed
	latchStateAll      = LatchStateYes | LatchStateNo | LatchStateLatched | LatchStateSuppress
)

// Status is what a run's answers mean for its outcome.
type Status struct {
	// Invalid: a prompted problem without FlagNoOK was answered no (or the
	// checker called MarkInvalid); the file system still has errors.
	Invalid bool
	// Fixed: a prompted problem without FlagNotAFix was answered yes
	// (e2fsck's E2F_FLAG_PROBLEMS_FIXED).
	Fixed bool
	// Aborted: a FlagFatal problem was reported, or an Abort prompt was
	// answered yes. The checker must stop; the exit status gets bit 8.
	Aborted bool
	// Halted: preen mode met a problem it may not fix. The checker must
	// stop; the exit status is 4.
	Halted bool
	// Cancelled: the user typed Ctrl-C at a prompt.
	Cancelled bool
	// Unsupported is the first problem whose fix would have been accepted
	// but is not implemented (Options.CanFix); the run is then Aborted
	// too. Zero when none.
	Unsupported Code
}

// Reporter prints problems exactly as e2fsck's fix_problem does, decides
// their answers and keeps the run's Status. It implements Fixer.
//
// A Reporter is for one goroutine. The parallel passes buffer the
// Problems of each work unit and replay them into the Reporter in the
// order e2fsck would have reported them; this gives the same output
// because what Fix prints and answers depends only on the Problem, the
// Options, and the earlier calls (counts, latch states, status). A
// checker that needs the answer before it can go on (most repairs do)
// must therefore either report from the ordering goroutine or run under
// ModeNo/ModeYes/ModePreen, where the answer can be computed ahead with
// Answer.
type Reporter struct {
	out  io.Writer
	opts Options
	// haltCode is the problem that halted preen mode (HaltCode).
	haltCode Code
	in       *bufio.Reader
	// defs is the catalogue with Options.Settings applied (the shared one
	// without settings); max the per-code MaxCount then (nil without).
	defs *[len(all)]Def
	max  *[len(all)]int

	yesToAll  bool // interactive 'a' switched answering to yes
	yesStreak int  // consecutive interactive yes answers
	counts    [len(all)]int
	latches   [numLatches]LatchState
	status    Status
	depth     int    // nesting of latch questions and chained problems
	answered  string // the answer text ask printed last (for Observe)

	// lastAll: the current problem's question was answered 'a' (e2fsck's
	// ask_yn returns 2 then, which some callers do not take as yes).
	lastAll bool
	// inRun: a pass header was reported, so the passes run (e2fsck_run,
	// whose abort jump an interrupted question takes).
	inRun bool
}

var _ Fixer = (*Reporter)(nil)

// NewReporter returns a Reporter printing to out (stdout).
func NewReporter(out io.Writer, opts Options) *Reporter {
	if out == nil {
		out = io.Discard
	}
	r := &Reporter{out: out, opts: opts, yesStreak: opts.Answers.yesStreak, yesToAll: opts.Answers.yesToAll}
	r.defs, r.max = configure(opts)
	if opts.In != nil {
		r.in = bufio.NewReaderSize(opts.In, 16)
	}
	return r
}

// Status returns the run's status so far.
func (r *Reporter) Status() Status { return r.status }

// Aborted reports whether a fatal problem stopped the run.
func (r *Reporter) Aborted() bool { return r.status.Aborted }

// HaltCode is the problem that halted preen mode; zero when there was no
// halt or it came from outside the problem table (PreenHalt).
func (r *Reporter) HaltCode() Code { return r.haltCode }

// Halted reports whether preen mode stopped the run.
func (r *Reporter) Halted() bool { return r.status.Halted }

// Stopped reports whether the checker must stop: the run was aborted,
// halted, or cancelled at a prompt. Once stopped, Fix prints nothing and
// answers no.
func (r *Reporter) Stopped() bool {
	return r.status.Aborted || r.status.Halted || r.status.Cancelled
}

// MarkInvalid records that the file system still has errors without a
// problem being declined (e2fsck's ext2fs_unmark_valid).
func (r *Reporter) MarkInvalid() { r.status.Invalid = true }

// Abort marks the run aborted, as a fatal problem does, for the library
// errors after which e2fsck calls fatal_error.
func (r *Reporter) Abort() { r.status.Aborted = true }

// Unsupported stops the run at a fix the checker cannot make although its
// problem asks no question (the checker's own guard, as Options.CanFix is
// for prompted problems): Status.Unsupported is set and the run aborted.
// A read-only run never gets here.
func (r *Reporter) Unsupported(c Code) {
	if r.status.Unsupported == 0 {
		r.status.Unsupported = c
	}
	r.status.Aborted = true
}

// Log prints a line e2fsck prints outside the problem table (printf or
// log_out between problems, such as "*** journal has been deleted ***").
func (r *Reporter) Log(s string) { r.print(s) }

// MarkFixed records a fix made without a question, as e2fsck code that
// sets E2F_FLAG_PROBLEMS_FIXED itself does (the run then exits 1 when it
// changed the filesystem).
func (r *Reporter) MarkFixed() { r.status.Fixed = true }

// MarkValid clears the Invalid status, as e2fsck does when it restarts
// the check from the beginning.
func (r *Reporter) MarkValid() { r.status.Invalid = false }

// ContinueCounts carries on prev's count of reports of every code, for a
// check that restarts from the beginning: e2fsck's counts live in its
// static problem table, so max_count (Options.MaxCount, Setting.MaxCount)
// goes on counting after the restart, pass headers included. A nil prev
// changes nothing.
func (r *Reporter) ContinueCounts(prev *Reporter) {
	if prev != nil {
		r.counts = prev.counts
	}
}

// Count returns how many times c has been reported.
func (r *Reporter) Count(c Code) int {
	if i, ok := index(c); ok {
		return r.counts[i]
	}
	return 0
}

// Header prints a pass header (PR_1_PASS_HEADER, ...). Headers are not
// printed when preening.
func (r *Reporter) Header(c Code) {
	r.inRun = true
	if r.opts.Mode == ModePreen {
		return
	}
	r.Fix(Problem{Code: c})
}

// SetLatchState sets and clears state bits of latch l, e2fsck's
// set_latch_flags. The command uses it to pre-answer a latch (LatchReloc
// is marked LatchStateLatched when a backup superblock was given with -b).
func (r *Reporter) SetLatchState(l Latch, set, clear LatchState) {
	if l == LatchNone || l >= numLatches {
		return
	}
	r.latches[l] = (r.latches[l] | set) &^ clear
}

// LatchState returns latch l's state bits.
func (r *Reporter) LatchState(l Latch) LatchState {
	if l >= numLatches {
		return 0
	}
	return r.latches[l]
}

// EndLatch closes latch l, e2fsck's end_problem_latch: if the latch was
// used and has an end message (the pass-5 difference lists, the pass-1B
// block list, the 1E/3A lists), that message is reported and its answer
// returned with asked true. The latch is then reset so that the next
// member asks the question again. The checker ends LatchBlock and
// LatchTooBig after every inode, LatchDBlock after every inode's list,
// and the others where e2fsck does.
func (r *Reporter) EndLatch(l Latch) (fix, asked bool) {
	if l == LatchNone || l >= numLatches {
		return false, false
	}
	if end := latchDefs[l].end; end != 0 && r.latches[l]&LatchStateLatched != 0 {
		asked = true
		fix = r.fix(Problem{Code: end}) != 0
	}
	r.latches[l] = 0
	return fix, asked
}

// Fix reports p and returns whether its fix should be applied. It prints
// the message and the answer as e2fsck does; for message-only problems it
// returns the default answer (yes, except under -n), so code that e2fsck
// guards with such a problem runs in the same modes.
func (r *Reporter) Fix(p Problem) bool {
	return r.fix(p) != 0
}

// Message returns p's message as Fix would print it, without the preen
// prefix or answer and without counting it.
func (r *Reporter) Message(p Problem) string {
	i, ok := index(p.Code)
	if !ok {
		return fmt.Sprintf("Unhandled error code (0x%x)!\n", uint32(p.Code))
	}
	return r.expand(r.defs[i].Msg, &p)
}

// Answer returns what Fix would answer for p in a non-interactive mode,
// without printing or recording anything. In ModeInteractive, and for
// members of a latch whose question has not been answered yet, it returns
// the default answer. Problems that stop the run (fatal ones, Abort
// prompts, those that halt preen) answer no.
func (r *Reporter) Answer(p Problem) bool {
	i, ok := index(p.Code)
	if !ok || r.Stopped() {
		return false
	}
	d := &r.defs[i]
	if d.Flags&FlagFatal != 0 || d.Prompt == PromptAbort {
		// Fix stops the run and answers no.
		return false
	}
	if d.Flags&FlagAfterCode != 0 && d.Chain != p.Code {
		return r.Answer(Problem{Code: d.Chain})
	}
	def := r.defaultAnswer(d)
	if d.Prompt == PromptNone {
		return def || d.Flags&FlagNoCollate != 0
	}
	if d.Flags&FlagForceNo != 0 || r.wouldFixUnsupported(d, def) {
		return false
	}
	if r.opts.Mode == ModePreen {
		return def && d.Flags&FlagPreenOK != 0
	}
	if d.Latch != LatchNone {
		if st := r.latches[d.Latch]; st&(LatchStateYes|LatchStateNo) != 0 {
			return st&LatchStateYes != 0
		}
	}
	switch {
	case r.opts.Mode == ModeNo:
		return false
	case r.opts.Mode == ModeYes || r.yesToAll:
		return true
	}
	return def
}

func (r *Reporter) expand(msg string, p *Problem) string {
	e := expander{p: p, namer: r.opts.Namer, loc: r.opts.Location, now: r.opts.Now, backup: r.opts.BackupSuper}
	e.expand(msg, true, 0)
	return e.b.String()
}

func (r *Reporter) print(s string) {
	if r.opts.BeforePrint != nil {
		r.opts.BeforePrint()
	}
	io.WriteString(r.out, s)
}

// maxCount is the code at index i's max_count (0: no limit).
func (r *Reporter) maxCount(i int) int {
	if r.max != nil {
		return r.max[i]
	}
	return r.opts.MaxCount
}

// defaultAnswer is e2fsck's def_yn.
func (r *Reporter) defaultAnswer(d *Def) bool {
	return d.Flags&FlagNoDefault == 0 &&
		!(d.Flags&FlagPreenNo != 0 && r.opts.Mode == ModePreen) &&
		r.opts.Mode != ModeNo
}

// maxChain bounds the latch-question and AFTER_CODE recursion; the
// catalogue needs two levels.
const maxChain = 8

// fix is fix_problem. It returns 1 (yes), 0 (no) or -1 (a NOCOLLATE
// message, which counts as yes for the caller but does not decide a
// latch).
func (r *Reporter) fix(p Problem) int {
	if r.Stopped() {
		return 0
	}
	i, ok := index(p.Code)
	if !ok {
		r.print(fmt.Sprintf("Unhandled error code (0x%x)!\n", uint32(p.Code)))
		return 0
	}
	if r.depth > maxChain {
		return 0
	}
	r.depth++
	defer func() { r.depth-- }()

	d := &r.defs[i]
	r.counts[i]++
	r.lastAll = false
	preen := r.opts.Mode == ModePreen
	def := r.defaultAnswer(d)
	if r.wouldFixUnsupported(d, def) {
		r.status.Unsupported = d.Code
		r.status.Aborted = true
		return 0
	}

	// The latch question is asked before the first member.
	suppress := false
	var latch *LatchState
	if d.Latch != LatchNone && d.Latch < numLatches {
		latch = &r.latches[d.Latch]
		if q := latchDefs[d.Latch].question; q != 0 && *latch&LatchStateLatched == 0 {
			ans := r.fixAs(q, p)
			if r.Stopped() {
				return 0
			}
			switch ans {
			case 1:
				*latch |= LatchStateYes
			case 0:
				*latch |= LatchStateNo
			}
			*latch |= LatchStateLatched
		}
		if *latch&LatchStateSuppress != 0 {
			suppress = true
		}
	}
	if d.Flags&FlagPreenNoMsg != 0 && preen {
		suppress = true
	}
	if d.Flags&FlagNoNoMsg != 0 && (r.opts.Mode == ModeNo || d.Flags&FlagForceNo != 0) {
		suppress = true
	}
	if max := r.maxCount(i); max != 0 && r.counts[i] > max {
		if r.opts.Mode == ModeNo || r.opts.Mode == ModeYes || r.yesToAll {
			suppress = true
		}
		if preen && d.Flags&FlagPreenOK != 0 {
			suppress = true
		}
		if latch != nil && *latch&(LatchStateYes|LatchStateNo) != 0 {
			suppress = true
		}
		if r.counts[i] == max+1 {
			r.print(fmt.Sprintf("...problem 0x%06x suppressed\n", uint32(d.Code)))
		}
	}
	var msg, path string
	if !suppress {
		var s string
		if preen && d.Flags&FlagPreenNoHdr == 0 {
			s = r.opts.Device + ": "
		}
		if d.Msg != "" {
			e := expander{p: &p, namer: r.opts.Namer, loc: r.opts.Location, now: r.opts.Now, backup: r.opts.BackupSuper}
			e.expand(d.Msg, true, 0)
			n := len(s)
			s += e.b.String()
			if e.hasPath {
				path = s[n+e.pathStart : n+e.pathEnd]
			}
		}
		if s != "" {
			r.print(s)
		}
		msg = s
	}
	observe := r.opts.Observe != nil
	if d.Flags&FlagPreenOK == 0 && d.Prompt != PromptNone && preen {
		if observe && msg != "" {
			r.opts.Observe(Report{Problem: p, Message: msg, Asked: true, Path: path})
		}
		r.haltCode = p.Code
		r.preenHalt()
		return 0
	}
	if d.Flags&FlagFatal != 0 {
		if observe && msg != "" {
			r.opts.Observe(Report{Problem: p, Message: msg, Asked: d.Prompt != PromptNone, Path: path})
		}
		r.status.Aborted = true
		return 0
	}

	answer := 0
	answerText := ""
	if d.Prompt == PromptNone {
		if d.Flags&FlagNoCollate != 0 {
			answer = -1
		} else if def {
			answer = 1
		}
	} else {
		printAnswer := false
		switch {
		case d.Flags&FlagForceNo != 0:
			printAnswer = true
		case preen:
			answer = b2i(def)
			printAnswer = d.Flags&FlagPreenNoMsg == 0
		case latch != nil && *latch&(LatchStateYes|LatchStateNo) != 0:
			printAnswer = true
			answer = b2i(*latch&LatchStateYes != 0)
		default:
			r.answered = ""
			answer = b2i(r.ask(d.Prompt.String(), def))
			answerText = r.answered
		}
		if answer == 0 && d.Flags&FlagNoOK == 0 && !(r.status.Cancelled && r.inRun) {
			r.status.Invalid = true
		}
		if printAnswer && !suppress {
			answerText = "IGNORED.\n"
			if answer != 0 {
				answerText = d.Prompt.Done() + ".\n"
			}
			r.print(answerText)
		}
	}
	if observe && (msg != "" || answerText != "") {
		r.opts.Observe(Report{Problem: p, Message: msg, AnswerText: answerText,
			Asked: d.Prompt != PromptNone, Yes: answer != 0, Path: path})
	}
	if d.Prompt == PromptAbort && answer != 0 {
		r.status.Aborted = true
		return 0
	}
	if d.Code == PR_1_SUPPRESS_MESSAGES && answer != 0 {
		// The user chose to silence the rest of this inode's illegal
		// blocks, as e2fsck's pass 1 then sets PRL_SUPPRESS on the block
		// latch; EndLatch clears it with the latch's other state.
		r.latches[LatchBlock] |= LatchStateSuppress
	}
	if r.status.Cancelled {
		return 0
	}
	if d.Flags&FlagAfterCode != 0 && d.Chain != 0 {
		answer = r.fixAs(d.Chain, p)
	}
	if answer != 0 && d.Prompt != PromptNone && d.Flags&FlagNotAFix == 0 {
		r.status.Fixed = true
	}
	return answer
}

// wouldFixUnsupported reports whether d is a prompted problem whose fix
// is not implemented (Options.CanFix) and that this run might answer yes:
// always under -y and interactively (the question is not even asked), for
// preen-safe problems when preening. Preen halts on the others as usual.
func (r *Reporter) wouldFixUnsupported(d *Def, def bool) bool {
	if r.opts.CanFix == nil || r.opts.Mode == ModeNo || d.Prompt == PromptNone ||
		d.Prompt == PromptAbort || d.Flags&(FlagFatal|FlagForceNo) != 0 || r.opts.CanFix(d.Code) {
		return false
	}
	if r.opts.Mode == ModePreen {
		return def && d.Flags&FlagPreenOK != 0
	}
	return true
}

// fixAs reports code with p's context.
func (r *Reporter) fixAs(code Code, p Problem) int {
	p.Code = code
	return r.fix(p)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ask is e2fsck's ask: print the question and get an answer.
func (r *Reporter) ask(prompt string, def bool) bool {
	switch {
	case r.opts.Mode == ModeNo:
		r.answered = prompt + "? no\n\n"
		r.print(r.answered)
		return false
	case r.opts.Mode == ModeYes || r.yesToAll:
		r.answered = prompt + "? yes\n\n"
		r.print(r.answered)
		return true
	}
	return r.askYN(prompt, def)
}

// AskYN asks an interactive question outside the problem table, as
// e2fsck's ask_yn: "prompt<y>? " (or "<n>"), one key read from In. A
// Reporter that shares In with a later one should share a *bufio.Reader
// of at least 16 bytes, so that no typed-ahead key is lost between them.
func (r *Reporter) AskYN(prompt string, def bool) bool { return r.askYN(prompt, def) }

// Answers returns the state interactive answers left, for Options.Answers
// of a later Reporter.
func (r *Reporter) Answers() Answers { return Answers{yesStreak: r.yesStreak, yesToAll: r.yesToAll} }

// askYN is e2fsck's interactive ask_yn, reading single bytes from In.
func (r *Reporter) askYN(prompt string, def bool) bool {
	extra := ""
	if r.yesStreak > 12 {
		r.yesStreak = -1
	} else if r.yesStreak > 8 {
		extra = " ('a' enables 'yes' to all) "
	}
	defStr := "<n>"
	if def {
		defStr = "<y>"
	}
	q := prompt + extra + defStr + "? "
	if r.opts.AnswerMode != nil {
		defer r.opts.AnswerMode()()
	}
	r.print(q)
	answer, all := def, false
	for r.in != nil {
		c, err := r.in.ReadByte()
		if err != nil {
			break
		}
		switch c {
		case 3: // Ctrl-C
			word := "cancelled!\n"
			if r.inRun {
				// In the passes e2fsck jumps out of the question: a bare
				// newline, and the run ends as cancelled.
				word = "\n"
			}
			r.print(word)
			r.answered = q + word
			r.yesStreak = 0
			r.status.Cancelled = true
			return false
		case 'y', 'Y':
			answer = true
			if r.yesStreak >= 0 {
				r.yesStreak++
			}
		case 'n', 'N':
			answer = false
			r.yesStreak = -1
		case 'a', 'A':
			answer, all = true, true
			r.yesStreak = -1
			r.yesToAll = true
			r.lastAll = true
		case 27, ' ', '\n':
			r.yesStreak = -1
		default:
			continue
		}
		break
	}
	word := "no\n"
	switch {
	case all:
		word = "yes to all\n"
	case answer:
		word = "yes\n"
	}
	r.print(word)
	r.answered = q + word
	return answer
}

// AnsweredAll reports whether the last problem reported was answered 'a'
// (yes to all) at its interactive question. e2fsck's fix_problem returns 2
// for that answer, and pass 5 applies a bitmap fix only on 1.
func (r *Reporter) AnsweredAll() bool { return r.lastAll }

// PreenHalt is preenHalt for checks outside the problem table (the
// command's reading of the bad-block inode).
func (r *Reporter) PreenHalt() { r.preenHalt() }

// preenHalt is e2fsck's preenhalt: stop a preen run that met a problem it
// may not fix.
func (r *Reporter) preenHalt() {
	r.status.Halted = true
	if r.opts.Err != nil {
		fmt.Fprintf(r.opts.Err, "\n\n%s: UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY.\n\t(i.e., without -a or -p options)\n", r.opts.Device)
	}
}
