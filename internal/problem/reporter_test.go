package problem

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const transcripts = "../../../shared/e2fsprogs-tests"

// mapNamer names (dir, ino) pairs from a table, "???" otherwise.
type mapNamer map[[2]uint32]string

func (m mapNamer) Path(dir, ino uint32) string {
	if s, ok := m[[2]uint32{dir, ino}]; ok {
		return s
	}
	return "???"
}

// step is one call into the Reporter.
type step struct {
	header Code  // Header(header)
	end    Latch // EndLatch(end)
	p      Problem
}

func fix(p Problem) step    { return step{p: p} }
func header(c Code) step    { return step{header: c} }
func endLatch(l Latch) step { return step{end: l} }
func code(c Code) step      { return step{p: Problem{Code: c}} }
func name(s string) []byte  { return []byte(s) }
func mtime(s string) int64  { return mustTime(s).Unix() }
func dirent(ino uint32, n string) *DirentInfo {
	return &DirentInfo{Ino: ino, Name: name(n), NameLen: uint8(len(n)), RecLen: 12}
}

func mustTime(s string) time.Time {
	t, err := time.Parse("Mon Jan _2 15:04:05 2006", s)
	if err != nil {
		panic(err)
	}
	return t
}

func run(r *Reporter, steps []step) {
	for _, s := range steps {
		switch {
		case s.header != 0:
			r.Header(s.header)
		case s.end != LatchNone:
			r.EndLatch(s.end)
		default:
			r.Fix(s.p)
		}
	}
}

func readTranscript(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("transcript not available: %v", err)
	}
	return string(b)
}

// ILLEGAL_BLOCK lines of f_lotsbad, as (block count, block).
var illegalRE = regexp.MustCompile(`(?m)^Illegal block #(\d+) \((\d+)\) in inode 12\.`)

func lotsbadIllegal(t *testing.T, transcript string) []step {
	var steps []step
	n := 0
	for _, m := range illegalRE.FindAllStringSubmatch(transcript, -1) {
		bc, _ := strconv.ParseInt(m[1], 10, 64)
		blk, _ := strconv.ParseUint(m[2], 10, 64)
		n++
		if n%12 == 0 {
			steps = append(steps,
				fix(Problem{Code: PR_1_TOO_MANY_BAD_BLOCKS, Ino: 12}),
				fix(Problem{Code: PR_1_SUPPRESS_MESSAGES, Ino: 12}))
		}
		steps = append(steps, fix(Problem{Code: PR_1_ILLEGAL_BLOCK_NUM, Ino: 12, Blk: blk, BlkCount: bc}))
	}
	if len(steps) == 0 {
		t.Fatal("no illegal blocks in transcript")
	}
	return steps
}

// TestTranscripts replays the findings of e2fsprogs test images and checks
// that what the Reporter prints occurs verbatim in e2fsck's transcript.
func TestTranscripts(t *testing.T) {
	namer := mapNamer{
		{2, 0}:     "/",
		{14, 0}:    "/test",
		{2, 12}:    "/block.h",
		{11, 0}:    "<2>/<11>",
		{12929, 0}: "/test2",
	}
	lotsbadN := filepath.Join("testdata", "f_lotsbad.fn.stdout")
	tests := []struct {
		name   string
		file   string // transcript
		mode   Mode
		input  string   // interactive answers
		namer  mapNamer // nil: the shared one
		steps  []step
		status Status
	}{{
		name: "f_okgroup headers",
		file: "f_okgroup/expect.1",
		mode: ModeYes,
		steps: []step{
			code(PR_0_ADD_UUID),
			header(PR_1_PASS_HEADER), header(PR_2_PASS_HEADER), header(PR_3_PASS_HEADER),
			header(PR_4_PASS_HEADER), header(PR_5_PASS_HEADER),
		},
	}, {
		name: "f_baddir",
		file: "f_baddir/expect.1",
		mode: ModeYes,
		steps: []step{
			header(PR_1_PASS_HEADER),
			fix(Problem{Code: PR_1_BAD_I_SIZE, Ino: 12, Num: 1024, Inode: &InodeInfo{Size: 182}}),
			fix(Problem{Code: PR_1_ZERO_LENGTH_DIR, Ino: 13}),
			header(PR_2_PASS_HEADER),
			fix(Problem{Code: PR_2_UNUSED_INODE, Ino: 2, Dirent: dirent(13, "zero")}),
			fix(Problem{Code: PR_2_BAD_NAME, Ino: 2, Dirent: dirent(15, "foo/bar")}),
			fix(Problem{Code: PR_2_LINK_ROOT, Ino: 14, Dirent: dirent(2, "root")}),
			fix(Problem{Code: PR_2_BAD_INO, Ino: 14, Dirent: dirent(123456, "badino")}),
			fix(Problem{Code: PR_2_LINK_DOT, Ino: 14, Dirent: dirent(14, "dot")}),
			fix(Problem{Code: PR_2_DIR_CORRUPTED, Ino: 12, BlkCount: 0, Num: 0}),
			fix(Problem{Code: PR_2_MISSING_DOT, Ino: 12}),
			fix(Problem{Code: PR_2_MISSING_DOT_DOT, Ino: 12}),
			header(PR_3_PASS_HEADER),
			fix(Problem{Code: PR_3_BAD_DOT_DOT, Ino: 12, Dir: 2, Ino2: 0}),
			header(PR_4_PASS_HEADER),
			fix(Problem{Code: PR_4_BAD_REF_COUNT, Ino: 12, Num: 2, Inode: &InodeInfo{Links: 1}}),
			header(PR_5_PASS_HEADER),
			fix(Problem{Code: PR_5_BLOCK_UNUSED, Blk: 22}),
			endLatch(LatchBBitmap),
			fix(Problem{Code: PR_5_FREE_BLOCK_COUNT, Blk: 74, Blk2: 75}),
			fix(Problem{Code: PR_5_INODE_UNUSED, Ino: 13}),
			endLatch(LatchIBitmap),
			fix(Problem{Code: PR_5_FREE_DIR_COUNT_GROUP, Group: 0, Ino: 5, Ino2: 4}),
		},
		status: Status{Fixed: true},
	}, {
		name:  "f_dup",
		file:  "f_dup/expect.1",
		mode:  ModeYes,
		namer: mapNamer{{2, 12}: "/termcap", {2, 13}: "/motd"},
		steps: []step{
			header(PR_1_PASS_HEADER),
			header(PR_1B_PASS_HEADER),
			fix(Problem{Code: PR_1B_DUP_RANGE, Ino: 12, Blk: 25, Blk2: 26}),
			endLatch(LatchDBlock),
			fix(Problem{Code: PR_1B_DUP_RANGE, Ino: 13, Blk: 25, Blk2: 26}),
			endLatch(LatchDBlock),
			header(PR_1C_PASS_HEADER),
			header(PR_1D_PASS_HEADER),
			fix(Problem{Code: PR_1D_NUM_DUP_INODES, Num: 2}),
			fix(Problem{Code: PR_1D_DUP_FILE, Dir: 2, Ino: 12, BlkCount: 2, Num: 1,
				Inode: &InodeInfo{Mtime: mtime("Tue Sep 21 03:19:14 1993")}}),
			fix(Problem{Code: PR_1D_DUP_FILE_LIST, Dir: 2, Ino: 13,
				Inode: &InodeInfo{Mtime: mtime("Tue Sep 21 03:19:20 1993")}}),
			code(PR_1D_CLONE_QUESTION),
			fix(Problem{Code: PR_1D_DUP_FILE, Dir: 2, Ino: 13, BlkCount: 2, Num: 1,
				Inode: &InodeInfo{Mtime: mtime("Tue Sep 21 03:19:20 1993")}}),
			fix(Problem{Code: PR_1D_DUP_FILE_LIST, Dir: 2, Ino: 12,
				Inode: &InodeInfo{Mtime: mtime("Tue Sep 21 03:19:14 1993")}}),
			code(PR_1D_DUP_BLOCKS_DEALT),
			header(PR_2_PASS_HEADER), header(PR_3_PASS_HEADER), header(PR_4_PASS_HEADER),
			header(PR_5_PASS_HEADER),
			fix(Problem{Code: PR_5_FREE_BLOCK_COUNT_GROUP, Group: 0, Blk: 44, Blk2: 60}),
			fix(Problem{Code: PR_5_FREE_BLOCK_COUNT, Blk: 62, Blk2: 60}),
			code(PR_5_INODE_BMAP_PADDING),
			code(PR_5_BLOCK_BMAP_PADDING),
		},
		status: Status{Fixed: true},
	}, {
		name: "f_badroot",
		file: "f_badroot/expect.1",
		mode: ModeYes,
		steps: []step{
			header(PR_1_PASS_HEADER),
			code(PR_1_ROOT_NO_DIR),
			header(PR_2_PASS_HEADER),
			fix(Problem{Code: PR_2_UNUSED_INODE, Ino: 11, Dirent: dirent(2, "..")}),
			header(PR_3_PASS_HEADER),
			code(PR_3_NO_ROOT_INODE),
			fix(Problem{Code: PR_3_UNCONNECTED_DIR, Ino: 11, Dir: 2}),
			code(PR_3_NO_LF_DIR),
			header(PR_4_PASS_HEADER),
			fix(Problem{Code: PR_4_BAD_REF_COUNT, Ino: 11, Num: 2, Inode: &InodeInfo{Links: 3}}),
			fix(Problem{Code: PR_4_UNATTACHED_INODE, Ino: 12}),
			fix(Problem{Code: PR_4_BAD_REF_COUNT, Ino: 12, Num: 1, Inode: &InodeInfo{Links: 2}}),
			header(PR_5_PASS_HEADER),
		},
		status: Status{Fixed: true},
	}, {
		name: "f_h_badnode",
		file: "f_h_badnode/expect.1",
		mode: ModeYes,
		steps: []step{
			header(PR_2_PASS_HEADER),
			fix(Problem{Code: PR_2_HTREE_MAX_HASH, Dir: 12929, BlkCount: 531}),
			fix(Problem{Code: PR_2_HTREE_DUPREF, Dir: 12929, BlkCount: 993}),
			fix(Problem{Code: PR_2_HTREE_MIN_HASH, Dir: 12929, BlkCount: 1061}),
			fix(Problem{Code: PR_2_HTREE_BAD_DEPTH, Dir: 12929, BlkCount: 1062, Num: 2}),
			fix(Problem{Code: PR_2_HTREE_MAX_HASH, Dir: 12929, BlkCount: 1062}),
			fix(Problem{Code: PR_2_HTREE_NOTREF, Dir: 12929, BlkCount: 1062}),
			fix(Problem{Code: PR_2_HTREE_CLEAR, Dir: 12929}),
			header(PR_3_PASS_HEADER),
			header(PR_3A_PASS_HEADER),
			header(PR_4_PASS_HEADER),
		},
		status: Status{Fixed: true},
	}, {
		name: "f_bad_bbitmap checksum latch and ranges",
		file: "f_bad_bbitmap/expect.1",
		mode: ModeYes,
		steps: []step{
			fix(Problem{Code: PR_0_GDT_CSUM, Group: 0, Csum1: 0x49ff, Csum2: 0x4972}),
			header(PR_1_PASS_HEADER), header(PR_2_PASS_HEADER), header(PR_3_PASS_HEADER),
			header(PR_4_PASS_HEADER), header(PR_5_PASS_HEADER),
			fix(Problem{Code: PR_5_BLOCK_RANGE_UNUSED, Blk: 8, Blk2: 10}),
			fix(Problem{Code: PR_5_BLOCK_RANGE_UNUSED, Blk: 12, Blk2: 17}),
			fix(Problem{Code: PR_5_BLOCK_RANGE_UNUSED, Blk: 19, Blk2: 31}),
			endLatch(LatchBBitmap),
		},
		status: Status{Fixed: true},
	}, {
		name: "f_lotsbad illegal block latch",
		file: "f_lotsbad/expect.1",
		mode: ModeYes,
		steps: []step{
			header(PR_1_PASS_HEADER),
			fix(Problem{Code: PR_1_TOOBIG_DIR, Ino: 13, Blk: 74, BlkCount: 16580876}),
			fix(Problem{Code: PR_1_BAD_I_SIZE, Ino: 13, Num: 12288, Inode: &InodeInfo{Size: 15360}}),
			fix(Problem{Code: PR_1_BAD_I_BLOCKS, Ino: 13, Num: 30, Inode: &InodeInfo{Blocks: 32}}),
			endLatch(LatchBlock), endLatch(LatchTooBig),
			fix(Problem{Code: PR_1_ILLEGAL_BLOCK_NUM, Ino: 12, Blk: 778398818, BlkCount: 12}),
			fix(Problem{Code: PR_1_ILLEGAL_BLOCK_NUM, Ino: 12, Blk: 1768444960, BlkCount: 13}),
		},
		status: Status{Fixed: true},
	}, {
		name: "f_preen_htree_csum preen",
		file: "f_preen_htree_csum/expect.1",
		mode: ModePreen,
		steps: []step{
			header(PR_1_PASS_HEADER), header(PR_2_PASS_HEADER),
			fix(Problem{Code: PR_2_HTREE_NODE_CSUM_INVALID, Dir: 12}),
			header(PR_3_PASS_HEADER), header(PR_3A_PASS_HEADER), header(PR_4_PASS_HEADER),
			header(PR_5_PASS_HEADER),
			// Pass 5 repairs are silent when preening.
			fix(Problem{Code: PR_5_BLOCK_UNUSED, Blk: 22}),
			endLatch(LatchBBitmap),
			fix(Problem{Code: PR_5_FREE_BLOCK_COUNT, Blk: 74, Blk2: 75}),
		},
		status: Status{Fixed: true},
	}, {
		name: "f_readonly_fsck -n NO_OK",
		file: "f_readonly_fsck/expect",
		mode: ModeNo,
		steps: []step{
			header(PR_1_PASS_HEADER), header(PR_2_PASS_HEADER), header(PR_3_PASS_HEADER),
			header(PR_4_PASS_HEADER), header(PR_5_PASS_HEADER),
			fix(Problem{Code: PR_5_FREE_BLOCK_COUNT, Blk: 4294968254, Blk2: 958}),
		},
		status: Status{},
	}, {
		name:  "f_del_dup_quota interactive",
		file:  "f_del_dup_quota/expect.1",
		mode:  ModeInteractive,
		input: "ny" + "y" + "yyy",
		namer: mapNamer{{2, 0}: "/", {2, 12}: "/testfile1", {2, 13}: "/testfile2"},
		steps: []step{
			fix(Problem{Code: PR_1D_DUP_FILE, Dir: 2, Ino: 12, BlkCount: 1, Num: 1,
				Inode: &InodeInfo{Mtime: mtime("Wed May 24 23:10:38 2017")}}),
			fix(Problem{Code: PR_1D_DUP_FILE_LIST, Dir: 2, Ino: 13,
				Inode: &InodeInfo{Mtime: mtime("Wed May 24 23:10:45 2017")}}),
			code(PR_1D_CLONE_QUESTION),
			code(PR_1D_DELETE_QUESTION),
			fix(Problem{Code: PR_1D_DUP_FILE, Dir: 2, Ino: 13, BlkCount: 1, Num: 1,
				Inode: &InodeInfo{Mtime: mtime("Wed May 24 23:10:45 2017")}}),
			fix(Problem{Code: PR_1D_DUP_FILE_LIST, Dir: 2, Ino: 12,
				Inode: &InodeInfo{Mtime: mtime("Wed May 24 23:10:38 2017")}}),
			code(PR_1D_DUP_BLOCKS_DEALT),
			header(PR_2_PASS_HEADER),
			fix(Problem{Code: PR_2_UNUSED_INODE, Ino: 2, Dirent: dirent(12, "testfile1")}),
			header(PR_3_PASS_HEADER), header(PR_4_PASS_HEADER), header(PR_5_PASS_HEADER),
			fix(Problem{Code: PR_5_BLOCK_UNUSED, Blk: 1374}),
			endLatch(LatchBBitmap),
			fix(Problem{Code: PR_5_FREE_BLOCK_COUNT_GROUP, Group: 0, Blk: 6815, Blk2: 6816}),
			fix(Problem{Code: PR_5_FREE_BLOCK_COUNT, Blk: 6815, Blk2: 6816}),
		},
		status: Status{Fixed: true},
	}, {
		name:  "f_lotsbad -n latch answers (installed e2fsck)",
		file:  lotsbadN,
		mode:  ModeNo,
		steps: nil, // built below from the transcript
		status: Status{
			Invalid: true,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.file
			if !strings.HasPrefix(path, "testdata") {
				path = filepath.Join(transcripts, path)
			}
			want := readTranscript(t, path)
			steps := tt.steps
			if path == lotsbadN {
				steps = append([]step{
					header(PR_1_PASS_HEADER),
					fix(Problem{Code: PR_1_TOOBIG_DIR, Ino: 13, Blk: 74, BlkCount: 16580876}),
					fix(Problem{Code: PR_1_BAD_I_SIZE, Ino: 13, Num: 12288, Inode: &InodeInfo{Size: 15360}}),
					fix(Problem{Code: PR_1_BAD_I_BLOCKS, Ino: 13, Num: 30, Inode: &InodeInfo{Blocks: 32}}),
					endLatch(LatchBlock), endLatch(LatchTooBig),
				}, lotsbadIllegal(t, want)...)
			}
			namer := namer
			if tt.namer != nil {
				namer = tt.namer
			}
			var out bytes.Buffer
			r := NewReporter(&out, Options{
				Mode:     tt.mode,
				In:       strings.NewReader(tt.input),
				Device:   "test_filesys",
				Namer:    namer,
				Location: time.UTC,
			})
			run(r, steps)
			got := out.String()
			if !strings.Contains(want, got) {
				t.Errorf("output does not occur in %s.\ngot:\n%s\nwant (transcript):\n%s", tt.file, got, want)
			}
			if path == lotsbadN && got != want {
				t.Errorf("output differs from the whole %s:\ngot:\n%s", tt.file, got)
			}
			if st := r.Status(); st != tt.status {
				t.Errorf("status %+v, want %+v", st, tt.status)
			}
		})
	}
}

// TestPreenHalt replays the installed e2fsck's -p run on f_lotsbad: the
// UUID message is printed with the device prefix, then the first problem
// preen may not fix halts the run.
func TestPreenHalt(t *testing.T) {
	wantOut := readTranscript(t, filepath.Join("testdata", "f_lotsbad.fp.stdout"))
	wantErr := readTranscript(t, filepath.Join("testdata", "f_lotsbad.fp.stderr"))
	var out, errOut bytes.Buffer
	r := NewReporter(&out, Options{Mode: ModePreen, Err: &errOut, Device: "l3.img"})
	steps := []step{
		code(PR_0_ADD_UUID),
		header(PR_1_PASS_HEADER),
		fix(Problem{Code: PR_1_TOOBIG_DIR, Ino: 13, Blk: 74, BlkCount: 16580876}),
		// e2fsck has exited by now; nothing more is printed.
		fix(Problem{Code: PR_1_BAD_I_SIZE, Ino: 13, Num: 12288, Inode: &InodeInfo{Size: 15360}}),
		header(PR_2_PASS_HEADER),
	}
	run(r, steps)
	if out.String() != wantOut {
		t.Errorf("stdout:\n%q\nwant:\n%q", out.String(), wantOut)
	}
	if errOut.String() != wantErr {
		t.Errorf("stderr:\n%q\nwant:\n%q", errOut.String(), wantErr)
	}
	st := r.Status()
	if !st.Halted || !r.Stopped() || r.Aborted() {
		t.Errorf("status %+v, want halted", st)
	}
	if got := st.ExitCode(RunEnd{}); got != ExitUncorrected {
		t.Errorf("exit code %d, want 4", got)
	}
}

// recordingReader logs each read into the shared event list.
type recordingReader struct {
	events *[]string
	in     *strings.Reader
}

func (r recordingReader) Read(p []byte) (int, error) {
	*r.events = append(*r.events, "read")
	return r.in.Read(p)
}

// recordingWriter logs each write into the shared event list.
type recordingWriter struct{ events *[]string }

func (w recordingWriter) Write(p []byte) (int, error) {
	*w.events = append(*w.events, "print "+string(p))
	return len(p), nil
}

// TestAnswerModeAroundPrompt: the terminal is switched to answer mode
// before the prompt is printed and put back after the answer, as e2fsck's
// ask_yn does. A key typed as soon as the prompt shows would otherwise be
// echoed by the terminal (TestInteractiveInterrupt once saw "^C" there).
func TestAnswerModeAroundPrompt(t *testing.T) {
	var events []string
	r := NewReporter(recordingWriter{&events}, Options{
		Mode: ModeInteractive,
		In:   recordingReader{&events, strings.NewReader("xn")},
		AnswerMode: func() func() {
			events = append(events, "raw")
			return func() { events = append(events, "restore") }
		},
	})
	if r.AskYN("Continue", true) {
		t.Fatal(`"n" answered yes`)
	}
	want := []string{"raw", "print Continue<y>? ", "read", "print no\n", "restore"}
	if strings.Join(events, "|") != strings.Join(want, "|") {
		t.Fatalf("events %q, want %q", events, want)
	}
}
