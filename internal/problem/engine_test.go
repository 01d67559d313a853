package problem

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func newTestReporter(mode Mode, in string) (*Reporter, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	r := NewReporter(&out, Options{
		Mode:     mode,
		In:       strings.NewReader(in),
		Err:      &errOut,
		Device:   "dev",
		Location: time.UTC,
	})
	return r, &out, &errOut
}

// TestAnswers checks the printed answer, the returned answer and the
// status for one problem in each mode.
func TestAnswers(t *testing.T) {
	badSize := Problem{Code: PR_1_BAD_I_SIZE, Ino: 12, Num: 1024, Inode: &InodeInfo{Size: 182}}
	const badSizeMsg = "Inode 12, i_size is 182, should be 1024.  "
	freeInodes := Problem{Code: PR_5_FREE_INODE_COUNT, Ino: 5, Ino2: 4}
	const freeInodesMsg = "Free inodes count wrong (5, counted=4).\n"
	immutable := Problem{Code: PR_1_SET_IMMUTABLE, Ino: 14}
	const immutableMsg = "Special (device/socket/fifo/symlink) file (inode 14) has immutable\nor append-only flag set.  "
	collapse := Problem{Code: PR_1E_CAN_COLLAPSE_EXTENT_TREE, Ino: 15, Blk: 1}
	const collapseMsg = "Inode 15 extent tree (at level 1) could be shorter.  "
	setType := Problem{Code: PR_2_SET_FILETYPE, Ino: 2, Num: 1, Dirent: &DirentInfo{Ino: 12, Name: name("f"), NameLen: 1}}
	const setTypeMsg = "Setting filetype for entry 'f' in ??? (2) to 1.\n"
	uuid := Problem{Code: PR_0_ADD_UUID}
	const uuidMsg = "Filesystem did not have a UUID; generating one.\n\n"

	tests := []struct {
		name    string
		mode    Mode
		in      string
		p       Problem
		out     string
		errOut  string
		answer  bool
		status  Status
		stopped bool
	}{
		// Prompted problems.
		{name: "-n prompted", mode: ModeNo, p: badSize,
			out: badSizeMsg + "Fix? no\n\n", status: Status{Invalid: true}},
		{name: "-y prompted", mode: ModeYes, p: badSize,
			out: badSizeMsg + "Fix? yes\n\n", answer: true, status: Status{Fixed: true}},
		{name: "-p PREEN_OK prompted", mode: ModePreen, p: badSize,
			out: "dev: " + badSizeMsg + "FIXED.\n", answer: true, status: Status{Fixed: true}},
		{name: "-p not PREEN_OK halts", mode: ModePreen, p: Problem{Code: PR_4_UNATTACHED_INODE, Ino: 12},
			out:    "dev: Unattached inode 12\n",
			errOut: "\n\ndev: UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY.\n\t(i.e., without -a or -p options)\n",
			status: Status{Halted: true}, stopped: true},
		{name: "-n NO_OK", mode: ModeNo, p: freeInodes,
			out: freeInodesMsg + "Fix? no\n\n"},
		{name: "-p PREEN_NOMSG fixes silently", mode: ModePreen, p: freeInodes,
			answer: true, status: Status{Fixed: true}},
		{name: "-p PREEN_NO", mode: ModePreen, p: immutable,
			out: "dev: " + immutableMsg + "IGNORED.\n"},
		{name: "-y NOT_A_FIX", mode: ModeYes, p: collapse,
			out: collapseMsg + "Optimize? yes\n\n", answer: true},
		{name: "-p NOT_A_FIX is preen-no", mode: ModePreen, p: collapse,
			out: "dev: " + collapseMsg + "IGNORED.\n"},
		{name: "interactive default yes", mode: ModeInteractive, in: "\n", p: badSize,
			out: badSizeMsg + "Fix<y>? yes\n", answer: true, status: Status{Fixed: true}},
		{name: "interactive no", mode: ModeInteractive, in: "xN", p: badSize,
			out: badSizeMsg + "Fix<y>? no\n", status: Status{Invalid: true}},
		{name: "interactive EOF takes default", mode: ModeInteractive, p: badSize,
			out: badSizeMsg + "Fix<y>? yes\n", answer: true, status: Status{Fixed: true}},
		{name: "interactive Ctrl-C", mode: ModeInteractive, in: "\x03", p: badSize,
			out: badSizeMsg + "Fix<y>? cancelled!\n", status: Status{Invalid: true, Cancelled: true}, stopped: true},
		{name: "interactive yes to all", mode: ModeInteractive, in: "a", p: badSize,
			out: badSizeMsg + "Fix<y>? yes to all\n", answer: true, status: Status{Fixed: true}},
		{name: "interactive PROMPT_NULL", mode: ModeInteractive, in: "y",
			p: Problem{Code: PR_6_UPDATE_QUOTAS, Num: 1}, out: "Update quota info for quota type 1<y>? yes\n",
			answer: true, status: Status{Fixed: true}},

		// Message-only problems: default answer, nothing asked.
		{name: "-y message", mode: ModeYes, p: uuid, out: uuidMsg, answer: true},
		{name: "-n message", mode: ModeNo, p: uuid, out: uuidMsg},
		{name: "-p message", mode: ModePreen, p: uuid, out: "dev: " + uuidMsg, answer: true},
		{name: "-n NO_NOMSG", mode: ModeNo, p: setType},
		{name: "-y NO_NOMSG", mode: ModeYes, p: setType, out: setTypeMsg, answer: true},
		{name: "-p PREEN_OK message", mode: ModePreen, p: setType, out: "dev: " + setTypeMsg, answer: true},
		{name: "NOCOLLATE counts as yes", mode: ModeNo, p: Problem{Code: PR_0_RELOCATE_HINT},
			out: "Note: if several inode or block bitmap blocks or part\nof the inode table require relocation, you may wish to try\n" +
				"running e2fsck with the '-b 8193' option first.  The problem\nmay lie only with the primary block group descriptors, and\n" +
				"the backup block group descriptors may be OK.\n\n",
			answer: true},

		// Fatal problems and aborts.
		{name: "FATAL", mode: ModeYes, p: Problem{Code: PR_0_GETSIZE_ERROR, Err: "Bad address"},
			out: "Error determining size of the physical device: Bad address\n", status: Status{Aborted: true}, stopped: true},
		{name: "prompted FATAL under -n", mode: ModeNo, p: Problem{Code: PR_0_QUOTA_INIT_CTX, Err: "x"},
			out: "Error initializing quota context in support library: x\n", status: Status{Aborted: true}, stopped: true},
		{name: "prompted FATAL halts preen", mode: ModePreen, p: Problem{Code: PR_0_QUOTA_INIT_CTX, Err: "x"},
			out:    "dev: Error initializing quota context in support library: x\n",
			errOut: "\n\ndev: UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY.\n\t(i.e., without -a or -p options)\n",
			status: Status{Halted: true}, stopped: true},
		{name: "Abort yes", mode: ModeYes, p: Problem{Code: PR_0_FS_SIZE_WRONG, Blk: 100, Blk2: 50},
			out: "The filesystem size (according to the superblock) is 100 blocks\nThe physical size of the device is 50 blocks\n" +
				"Either the superblock or the partition table is likely to be corrupt!\nAbort? yes\n\n",
			status: Status{Aborted: true}, stopped: true},
		{name: "Abort no", mode: ModeNo, p: Problem{Code: PR_0_FS_SIZE_WRONG, Blk: 100, Blk2: 50},
			out: "The filesystem size (according to the superblock) is 100 blocks\nThe physical size of the device is 50 blocks\n" +
				"Either the superblock or the partition table is likely to be corrupt!\nAbort? no\n\n",
			status: Status{Invalid: true}},

		// Chained problems.
		{name: "AFTER_CODE message chain", mode: ModeYes, p: Problem{Code: PR_0_MISC_CORRUPT_SUPER, Str: "s_log_block_size", Num: 99},
			out:    "Corruption found in superblock.  (s_log_block_size = 99).\n" + mustMessage(PR_0_SB_CORRUPT),
			answer: true},
		{name: "AFTER_CODE prompted chain", mode: ModeYes, p: Problem{Code: PR_1_BAD_PRIMARY_SUPERBLOCK, Blk: 1},
			out: "The primary superblock (1) is on the bad block list.\n" +
				"\nIf the block is really bad, the filesystem can not be fixed.\n" +
				"You can remove this block from the bad block list and hope\nthat the block is really OK.  But there are no guarantees.\n\n" +
				"Clear? yes\n\n",
			answer: true, status: Status{Fixed: true}},

		{name: "unhandled code", mode: ModeYes, p: Problem{Code: PR_1_ALLOCATE_CASEFOLDED_DIRLIST},
			out: "Unhandled error code (0x1008c)!\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, out, errOut := newTestReporter(tt.mode, tt.in)
			if ans := r.Answer(tt.p); tt.mode != ModeInteractive && !tt.stopped && ans != tt.answer {
				t.Errorf("Answer() = %v, want %v", ans, tt.answer)
			}
			if got := r.Fix(tt.p); got != tt.answer {
				t.Errorf("Fix() = %v, want %v", got, tt.answer)
			}
			if out.String() != tt.out {
				t.Errorf("stdout\n%q\nwant\n%q", out.String(), tt.out)
			}
			if errOut.String() != tt.errOut {
				t.Errorf("stderr\n%q\nwant\n%q", errOut.String(), tt.errOut)
			}
			if st := r.Status(); st != tt.status {
				t.Errorf("status %+v, want %+v", st, tt.status)
			}
			if r.Stopped() != tt.stopped {
				t.Errorf("Stopped() = %v, want %v", r.Stopped(), tt.stopped)
			}
			if tt.stopped {
				// Nothing more is printed or fixed once stopped.
				n := out.Len()
				if r.Fix(Problem{Code: PR_1_BAD_I_SIZE}) || out.Len() != n {
					t.Error("Fix after stop printed or answered yes")
				}
			}
		})
	}
}

func mustMessage(c Code) string {
	return NewReporter(nil, Options{}).Message(Problem{Code: c})
}

// TestBlockLatch checks that the illegal-block latch asks once per inode
// and that EndLatch re-arms it.
func TestBlockLatch(t *testing.T) {
	for _, tt := range []struct {
		mode Mode
		in   string
		want string
	}{
		{ModeYes, "", "Inode 12 has illegal block(s).  Clear? yes\n\n" +
			"Illegal block #1 (100) in inode 12.  CLEARED.\n" +
			"Illegal indirect block (101) in inode 12.  CLEARED.\n" +
			"Inode 13 has illegal block(s).  Clear? yes\n\n" +
			"Illegal block #5 (102) in inode 13.  CLEARED.\n"},
		{ModeNo, "", "Inode 12 has illegal block(s).  Clear? no\n\n" +
			"Illegal block #1 (100) in inode 12.  IGNORED.\n" +
			"Illegal indirect block (101) in inode 12.  IGNORED.\n" +
			"Inode 13 has illegal block(s).  Clear? no\n\n" +
			"Illegal block #5 (102) in inode 13.  IGNORED.\n"},
		{ModeInteractive, "ny", "Inode 12 has illegal block(s).  Clear<y>? no\n" +
			"Illegal block #1 (100) in inode 12.  IGNORED.\n" +
			"Illegal indirect block (101) in inode 12.  IGNORED.\n" +
			"Inode 13 has illegal block(s).  Clear<y>? yes\n" +
			"Illegal block #5 (102) in inode 13.  CLEARED.\n"},
	} {
		r, out, _ := newTestReporter(tt.mode, tt.in)
		r.Fix(Problem{Code: PR_1_ILLEGAL_BLOCK_NUM, Ino: 12, Blk: 100, BlkCount: 1})
		if st := r.LatchState(LatchBlock); st != LatchStateLatched|LatchStateYes && st != LatchStateLatched|LatchStateNo {
			t.Errorf("latch state %v", st)
		}
		r.Fix(Problem{Code: PR_1_ILLEGAL_BLOCK_NUM, Ino: 12, Blk: 101, BlkCount: BlockCountInd})
		if fix, asked := r.EndLatch(LatchBlock); fix || asked {
			t.Errorf("EndLatch(LatchBlock) = %v, %v; it has no end message", fix, asked)
		}
		if st := r.LatchState(LatchBlock); st != 0 {
			t.Errorf("latch state after end %v", st)
		}
		r.Fix(Problem{Code: PR_1_ILLEGAL_BLOCK_NUM, Ino: 13, Blk: 102, BlkCount: 5})
		if out.String() != tt.want {
			t.Errorf("mode %v:\n%s\nwant\n%s", tt.mode, out, tt.want)
		}
		if r.Count(PR_1_ILLEGAL_BLOCK_NUM) != 3 || r.Count(PR_1_INODE_BLOCK_LATCH) != 2 {
			t.Errorf("counts %d, %d", r.Count(PR_1_ILLEGAL_BLOCK_NUM), r.Count(PR_1_INODE_BLOCK_LATCH))
		}
	}
}

// TestLatchSuppress checks "Suppress messages": later members are not
// printed but still answered.
func TestLatchSuppress(t *testing.T) {
	r, out, _ := newTestReporter(ModeYes, "")
	r.Fix(Problem{Code: PR_1_ILLEGAL_BLOCK_NUM, Ino: 12, Blk: 100, BlkCount: 1})
	r.SetLatchState(LatchBlock, LatchStateSuppress, 0)
	n := out.Len()
	if !r.Fix(Problem{Code: PR_1_ILLEGAL_BLOCK_NUM, Ino: 12, Blk: 101, BlkCount: 2}) {
		t.Error("suppressed member not answered yes")
	}
	if out.Len() != n {
		t.Errorf("suppressed member printed %q", out.String()[n:])
	}
}

// TestRelocLatch: with -b the relocation hint is pre-latched, and members
// are asked one by one (the hint never collates an answer).
func TestRelocLatch(t *testing.T) {
	p := Problem{Code: PR_0_BB_NOT_GROUP, Group: 3, Blk: 9999}
	const msg = "Block bitmap for group 3 is not in group.  (block 9999)\nRelocate? yes\n\n"

	r, out, _ := newTestReporter(ModeYes, "")
	r.Fix(p)
	r.Fix(p)
	if want := mustMessage(PR_0_RELOCATE_HINT) + msg + msg; out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}

	r, out, _ = newTestReporter(ModeYes, "")
	r.SetLatchState(LatchReloc, LatchStateLatched, 0)
	r.Fix(p)
	if out.String() != msg {
		t.Errorf("pre-latched: got\n%s\nwant\n%s", out, msg)
	}
}

// TestBitmapLatchPreen: pass-5 difference lists are silent when preening
// and the end question answers yes.
func TestBitmapLatchPreen(t *testing.T) {
	r, out, _ := newTestReporter(ModePreen, "")
	if fix, asked := r.EndLatch(LatchBBitmap); fix || asked {
		t.Errorf("unused latch: EndLatch = %v, %v", fix, asked)
	}
	r.Fix(Problem{Code: PR_5_BLOCK_RANGE_UNUSED, Blk: 8, Blk2: 10})
	r.Fix(Problem{Code: PR_5_BLOCK_USED, Blk: 12})
	if fix, asked := r.EndLatch(LatchBBitmap); !fix || !asked {
		t.Errorf("EndLatch = %v, %v, want true, true", fix, asked)
	}
	if out.Len() != 0 {
		t.Errorf("printed %q", out)
	}
	if st := r.Status(); st != (Status{Fixed: true}) {
		t.Errorf("status %+v", st)
	}
}

// TestBGChecksumLatchPreen: the latch question is preen-safe and prints
// its word.
func TestBGChecksumLatchPreen(t *testing.T) {
	r, out, _ := newTestReporter(ModePreen, "")
	r.Fix(Problem{Code: PR_0_GDT_CSUM, Group: 0, Csum1: 0x49ff, Csum2: 0x4972})
	r.Fix(Problem{Code: PR_0_GDT_CSUM, Group: 1, Csum1: 0x1, Csum2: 0x2})
	want := "dev: One or more block group descriptor checksums are invalid.  FIXED.\n" +
		"dev: Group descriptor 0 checksum is 0x49ff, should be 0x4972.  FIXED.\n" +
		"dev: Group descriptor 1 checksum is 0x0001, should be 0x0002.  FIXED.\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestOptimizeDirLatch(t *testing.T) {
	for _, tt := range []struct {
		mode Mode
		want string
	}{
		{ModeYes, "Optimizing directories:  2 12\n"},
		{ModePreen, "dev: Optimizing directories:  2 12\n"},
	} {
		r, out, _ := newTestReporter(tt.mode, "")
		r.Fix(Problem{Code: PR_3A_OPTIMIZE_DIR, Dir: 2})
		r.Fix(Problem{Code: PR_3A_OPTIMIZE_DIR, Dir: 12})
		r.EndLatch(LatchOptimizeDir)
		if out.String() != tt.want {
			t.Errorf("mode %v: %q, want %q", tt.mode, out, tt.want)
		}
	}
}

func TestHeaderNotInPreen(t *testing.T) {
	r, out, _ := newTestReporter(ModePreen, "")
	r.Header(PR_1_PASS_HEADER)
	r.Header(PR_3A_PASS_HEADER)
	if out.Len() != 0 {
		t.Errorf("preen printed %q", out)
	}
	r, out, _ = newTestReporter(ModeNo, "")
	r.Header(PR_1B_PASS_HEADER)
	want := "\nRunning additional passes to resolve blocks claimed by more than one inode...\nPass 1B: Rescanning for multiply-claimed blocks\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

func TestMaxCount(t *testing.T) {
	var out bytes.Buffer
	r := NewReporter(&out, Options{Mode: ModeNo, MaxCount: 2})
	for i := uint32(1); i <= 4; i++ {
		r.Fix(Problem{Code: PR_4_UNATTACHED_INODE, Ino: 10 + i})
	}
	want := "Unattached inode 11\nConnect to /lost+found? no\n\n" +
		"Unattached inode 12\nConnect to /lost+found? no\n\n" +
		"...problem 0x040002 suppressed\n" +
		"Connect to /lost+found? no\n\n" +
		"Connect to /lost+found? no\n\n"
	if out.String() != want {
		t.Errorf("got\n%q\nwant\n%q", out.String(), want)
	}
}

// TestInteractiveYesToAll: after 'a' every later question is answered yes
// as under -y.
func TestInteractiveYesToAll(t *testing.T) {
	r, out, _ := newTestReporter(ModeInteractive, "a")
	r.Fix(Problem{Code: PR_4_UNATTACHED_INODE, Ino: 11})
	r.Fix(Problem{Code: PR_4_UNATTACHED_INODE, Ino: 12})
	want := "Unattached inode 11\nConnect to /lost+found<y>? yes to all\n" +
		"Unattached inode 12\nConnect to /lost+found? yes\n\n"
	if out.String() != want {
		t.Errorf("got\n%q\nwant\n%q", out.String(), want)
	}
}

// TestInteractiveTranscript replays what the installed e2fsck printed for
// f_baddir with E2FSCK_FORCE_INTERACTIVE=1 and "nx\na" on stdin: 'x' is
// ignored, Enter takes the default, 'a' answers yes to everything after.
func TestInteractiveTranscript(t *testing.T) {
	var out bytes.Buffer
	r := NewReporter(&out, Options{Mode: ModeInteractive, In: strings.NewReader("nx\na"),
		Namer: mapNamer{{2, 0}: "/"}})
	steps := []step{
		fix(Problem{Code: PR_1_BAD_I_SIZE, Ino: 12, Num: 1024, Inode: &InodeInfo{Size: 182}}),
		fix(Problem{Code: PR_1_ZERO_LENGTH_DIR, Ino: 13}),
		header(PR_2_PASS_HEADER),
		fix(Problem{Code: PR_2_UNUSED_INODE, Ino: 2, Dirent: dirent(13, "zero")}),
		fix(Problem{Code: PR_2_BAD_NAME, Ino: 2, Dirent: dirent(15, "foo/bar")}),
	}
	run(r, steps)
	want := "Inode 12, i_size is 182, should be 1024.  Fix<y>? no\n" +
		"Inode 13 is a zero-length directory.  Clear<y>? yes\n" +
		"Pass 2: Checking directory structure\n" +
		"Entry 'zero' in / (2) has deleted/unused inode 13.  Clear<y>? yes to all\n" +
		"Entry 'foo/bar' in / (2) has illegal characters in its name.\n" +
		"Fix? yes\n\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// TestInteractiveHint: a run of yes answers brings up the 'a' hint.
func TestInteractiveHint(t *testing.T) {
	r, out, _ := newTestReporter(ModeInteractive, strings.Repeat("y", 10))
	for i := 0; i < 10; i++ {
		r.Fix(Problem{Code: PR_4_UNATTACHED_INODE, Ino: 11})
	}
	if !strings.Contains(out.String(), "Connect to /lost+found ('a' enables 'yes' to all) <y>? yes\n") {
		t.Errorf("no hint in %q", out.String())
	}
}

func TestBeforePrint(t *testing.T) {
	calls := 0
	r := NewReporter(nil, Options{Mode: ModeNo, BeforePrint: func() { calls++ }})
	r.Fix(Problem{Code: PR_2_SET_FILETYPE}) // NO_NOMSG: nothing printed
	if calls != 0 {
		t.Errorf("BeforePrint called for a suppressed message")
	}
	r.Fix(Problem{Code: PR_0_ADD_UUID})
	if calls == 0 {
		t.Errorf("BeforePrint not called")
	}
}

func TestMarkValid(t *testing.T) {
	r := NewReporter(nil, Options{Mode: ModeYes})
	r.MarkInvalid()
	if !r.Status().Invalid {
		t.Fatal("MarkInvalid did not invalidate")
	}
	r.MarkValid()
	if r.Status().Invalid {
		t.Fatal("MarkValid did not validate")
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		name string
		s    Status
		end  RunEnd
		want int
	}{
		{"clean -n", Status{}, RunEnd{ReadOnly: true, SuperWasValid: true}, 0},
		{"errors -n", Status{Invalid: true}, RunEnd{ReadOnly: true, SuperWasValid: true}, 4},
		{"fixed -y", Status{Fixed: true}, RunEnd{Modified: true, SuperWasValid: true}, 1},
		{"modified without prompt", Status{}, RunEnd{Modified: true, SuperWasValid: true}, 0},
		{"made valid", Status{}, RunEnd{Modified: true}, 1},
		{"root", Status{Fixed: true}, RunEnd{Modified: true, SuperWasValid: true, MountedRoot: true}, 3},
		{"fixed but errors left", Status{Fixed: true, Invalid: true}, RunEnd{Modified: true, SuperWasValid: true}, 4},
		{"halt", Status{Halted: true, Fixed: true}, RunEnd{Modified: true}, 4},
		{"abort", Status{Aborted: true}, RunEnd{ReadOnly: true}, 8},
		{"abort modified", Status{Aborted: true, Fixed: true}, RunEnd{Modified: true}, 9},
		{"abort invalid", Status{Aborted: true, Invalid: true}, RunEnd{Modified: true}, 12},
		{"cancelled", Status{Cancelled: true, Fixed: true}, RunEnd{Modified: true, SuperWasValid: true}, 32},
		{"cancelled with errors", Status{Cancelled: true}, RunEnd{SuperWasValid: true, SuperHadErrors: true}, 36},
		{"cancel allowed", Status{Cancelled: true}, RunEnd{SuperWasValid: true, AllowCancellation: true}, 0},
	}
	for _, tt := range tests {
		if got := tt.s.ExitCode(tt.end); got != tt.want {
			t.Errorf("%s: ExitCode = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestAnswerMatchesFix checks, for every code and non-interactive mode,
// that Answer predicts what Fix returns on a fresh Reporter.
func TestAnswerMatchesFix(t *testing.T) {
	for _, mode := range []Mode{ModeNo, ModeYes, ModePreen} {
		for i := range defs {
			r := NewReporter(nil, Options{Mode: mode})
			p := Problem{Code: defs[i].Code}
			want := r.Answer(p)
			got := r.Fix(p)
			if got != want {
				t.Errorf("mode %d, %s: Fix = %v, Answer = %v", mode, defs[i].Name, got, want)
			}
		}
	}
}

func TestClock(t *testing.T) {
	var out bytes.Buffer
	now := time.Date(2023, 2, 5, 10, 0, 0, 0, time.UTC)
	r := NewReporter(&out, Options{Mode: ModeYes, Location: time.UTC, Now: func() time.Time { return now }})
	r.Fix(Problem{Code: PR_0_FUTURE_SB_LAST_MOUNT, Num: uint64(now.Add(72 * time.Hour).Unix())})
	want := "Superblock last mount time (Wed Feb  8 10:00:00 2023,\n\tnow = Sun Feb  5 10:00:00 2023) is in the future.\nFix? yes\n\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}
