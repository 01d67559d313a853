package problem

import (
	"bytes"
	"testing"
)

// TestSettings reports one problem under e2fsck.conf settings and checks
// what is printed, the answer (from Fix, and predicted by Answer) and the
// status, as e2fsck's fix_problem gives them with the same
// [problems] entry.
func TestSettings(t *testing.T) {
	badSize := Problem{Code: PR_1_BAD_I_SIZE, Ino: 12, Num: 1024, Inode: &InodeInfo{Size: 182}}
	const badSizeMsg = "Inode 12, i_size is 182, should be 1024.  "
	freeBlocks := Problem{Code: PR_5_FREE_BLOCK_COUNT, Blk: 12, Blk2: 6574}
	const freeBlocksMsg = "Free blocks count wrong (12, counted=6574).\n"
	unattached := Problem{Code: PR_4_UNATTACHED_INODE, Ino: 12}
	const halt = "\n\ndev: UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY.\n\t(i.e., without -a or -p options)\n"

	tests := []struct {
		name    string
		mode    Mode
		p       Problem
		set     Setting
		out     string
		errOut  string
		answer  bool
		status  Status
		stopped bool
	}{
		{name: "force_no -y", mode: ModeYes, p: freeBlocks, set: Setting{Set: FlagForceNo},
			out: freeBlocksMsg + "IGNORED.\n"},
		{name: "force_no -y leaves it invalid without no_ok", mode: ModeYes, p: badSize, set: Setting{Set: FlagForceNo},
			out: badSizeMsg + "IGNORED.\n", status: Status{Invalid: true}},
		{name: "force_no -p under preen_nomessage prints nothing", mode: ModePreen, p: freeBlocks, set: Setting{Set: FlagForceNo},
			out: ""},
		{name: "force_no with no_nomsg prints nothing", mode: ModeYes, p: badSize, set: Setting{Set: FlagForceNo | FlagNoNoMsg},
			status: Status{Invalid: true}},
		{name: "no_ok", mode: ModeNo, p: badSize, set: Setting{Set: FlagNoOK},
			out: badSizeMsg + "Fix? no\n\n"},
		{name: "no_ok cleared", mode: ModeNo, p: freeBlocks, set: Setting{Clear: FlagNoOK},
			out: freeBlocksMsg + "Fix? no\n\n", status: Status{Invalid: true}},
		{name: "preen_ok lets preen fix", mode: ModePreen, p: unattached, set: Setting{Set: FlagPreenOK},
			out: "dev: Unattached inode 12\nRECONNECTED.\n", answer: true, status: Status{Fixed: true}},
		{name: "preen_ok cleared halts", mode: ModePreen, p: badSize, set: Setting{Clear: FlagPreenOK},
			out: "dev: " + badSizeMsg, errOut: halt, status: Status{Halted: true}, stopped: true},
		{name: "preen_nomessage", mode: ModePreen, p: badSize, set: Setting{Set: FlagPreenNoMsg},
			answer: true, status: Status{Fixed: true}},
		{name: "preen_noheader", mode: ModePreen, p: badSize, set: Setting{Set: FlagPreenNoHdr},
			out: badSizeMsg + "FIXED.\n", answer: true, status: Status{Fixed: true}},
		// The message only: e2fsck's ask still prints the question.
		{name: "no_nomsg -n", mode: ModeNo, p: badSize, set: Setting{Set: FlagNoNoMsg},
			out: "Fix? no\n\n", status: Status{Invalid: true}},
		{name: "no_nomsg -y prints", mode: ModeYes, p: badSize, set: Setting{Set: FlagNoNoMsg},
			out: badSizeMsg + "Fix? yes\n\n", answer: true, status: Status{Fixed: true}},
		{name: "no_default -y still yes", mode: ModeYes, p: badSize, set: Setting{Set: FlagNoDefault},
			out: badSizeMsg + "Fix? yes\n\n", answer: true, status: Status{Fixed: true}},
		{name: "no_default -p is no", mode: ModePreen, p: badSize, set: Setting{Set: FlagNoDefault},
			out: "dev: " + badSizeMsg + "IGNORED.\n", status: Status{Invalid: true}},
		{name: "not_a_fix", mode: ModeYes, p: badSize, set: Setting{Set: FlagNotAFix},
			out: badSizeMsg + "Fix? yes\n\n", answer: true},
		{name: "description", mode: ModeYes, p: badSize, set: Setting{Msg: "@i %i is @n (%N).  ", HasMsg: true},
			out: "Inode 12 is invalid (1024).  Fix? yes\n\n", answer: true, status: Status{Fixed: true}},
		{name: "empty description", mode: ModeYes, p: badSize, set: Setting{HasMsg: true},
			out: "Fix? yes\n\n", answer: true, status: Status{Fixed: true}},
		{name: "print_message_only changes nothing", mode: ModeYes, p: badSize, set: Setting{Set: FlagMsgOnly},
			out: badSizeMsg + "Fix? yes\n\n", answer: true, status: Status{Fixed: true}},
		{name: "flags outside the settable set are ignored", mode: ModeYes, p: badSize, set: Setting{Set: FlagFatal},
			out: badSizeMsg + "Fix? yes\n\n", answer: true, status: Status{Fixed: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			opts := Options{Mode: tc.mode, Err: &errOut, Device: "dev",
				Settings: map[Code]Setting{tc.p.Code: tc.set}}
			r := NewReporter(&out, opts)
			predicted := r.Answer(tc.p)
			answer := r.Fix(tc.p)
			if out.String() != tc.out || errOut.String() != tc.errOut {
				t.Errorf("printed %q, stderr %q; want %q, %q", out.String(), errOut.String(), tc.out, tc.errOut)
			}
			if answer != tc.answer || !tc.stopped && predicted != answer {
				t.Errorf("answer %v (predicted %v), want %v", answer, predicted, tc.answer)
			}
			if r.Status() != tc.status || r.Stopped() != tc.stopped {
				t.Errorf("status %+v stopped %v, want %+v %v", r.Status(), r.Stopped(), tc.status, tc.stopped)
			}
		})
	}
}

// TestSettingsMaxCount: a code's own max_count overrides
// max_count_problems, and a negative one silences every report.
func TestSettingsMaxCount(t *testing.T) {
	p := Problem{Code: PR_1_BAD_I_SIZE, Ino: 12, Num: 1024, Inode: &InodeInfo{Size: 182}}
	q := Problem{Code: PR_4_UNATTACHED_INODE, Ino: 13}
	var out bytes.Buffer
	r := NewReporter(&out, Options{Mode: ModeNo, MaxCount: 1, Settings: map[Code]Setting{
		PR_1_BAD_I_SIZE: {MaxCount: 2, HasMaxCount: true},
	}})
	for range 3 {
		r.Fix(p)
		r.Fix(q)
	}
	// A suppressed report still prints its question, as e2fsck's ask
	// does.
	want := "Inode 12, i_size is 182, should be 1024.  Fix? no\n\n" +
		"Unattached inode 13\nConnect to /lost+found? no\n\n" +
		"Inode 12, i_size is 182, should be 1024.  Fix? no\n\n" +
		"...problem 0x040002 suppressed\n" + "Connect to /lost+found? no\n\n" +
		"...problem 0x01000c suppressed\n" + "Fix? no\n\n" +
		"Connect to /lost+found? no\n\n"
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}

	out.Reset()
	r = NewReporter(&out, Options{Mode: ModeYes, Settings: map[Code]Setting{
		PR_1_BAD_I_SIZE: {MaxCount: -1, HasMaxCount: true},
	}})
	if !r.Fix(p) || !r.Fix(p) || out.String() != "Fix? yes\n\nFix? yes\n\n" {
		t.Errorf("max_count -1: printed %q", out.String())
	}
}

// TestSettingsIgnoreOthers: codes outside the catalogue and the I/O
// channel's questions (asked outside e2fsck's problem table) take no
// settings, and a Reporter without settings shares the catalogue.
func TestSettingsIgnoreOthers(t *testing.T) {
	var out bytes.Buffer
	r := NewReporter(&out, Options{Mode: ModeYes, Settings: map[Code]Setting{
		PR_IO_FORCE_REWRITE: {Set: FlagForceNo},
		0x7fffff:            {Set: FlagForceNo},
	}})
	if !r.Fix(Problem{Code: PR_IO_FORCE_REWRITE}) {
		t.Errorf("the channel's question took a setting: %q", out.String())
	}
	if plain := NewReporter(nil, Options{}); plain.defs != &all {
		t.Error("a Reporter without settings copied the catalogue")
	}
	if ConfigKey(PR_5_FREE_BLOCK_COUNT) != "0x05000f" || ConfigKey(PR_1B_DUP_BLOCK) != "0x011002" {
		t.Errorf("keys %s %s", ConfigKey(PR_5_FREE_BLOCK_COUNT), ConfigKey(PR_1B_DUP_BLOCK))
	}
}

// TestContinueCounts: a restarted check's Reporter goes on counting.
func TestContinueCounts(t *testing.T) {
	var out bytes.Buffer
	opts := Options{Mode: ModeNo, MaxCount: 1}
	first := NewReporter(&out, opts)
	first.Header(PR_1_PASS_HEADER)
	second := NewReporter(&out, opts)
	second.ContinueCounts(first)
	second.ContinueCounts(nil)
	second.Header(PR_1_PASS_HEADER)
	if want := "Pass 1: Checking inodes, blocks, and sizes\n...problem 0x010000 suppressed\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}
