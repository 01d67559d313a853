package check_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"gofsck/internal/blockdev"
	"gofsck/internal/check"
	"gofsck/internal/fs"
	"gofsck/internal/problem"
	"gofsck/internal/testfs"
)

// diagSink is a Reporter that also prints the library diagnostics the
// quota check emits ("[QUOTA WARNING] ...", "[ERROR] ..."), into the same
// transcript, as e2fsck's stderr lines appear in its combined output.
type diagSink struct {
	*problem.Reporter
	out *bytes.Buffer
}

// diagSink is a check.LibOutput for the diagnostics only.
var _ check.LibOutput = (*diagSink)(nil)

func (s *diagSink) Diagnostic(line string)        { s.out.WriteString(line) }
func (s *diagSink) FatalError(line string)        { s.out.WriteString(line) }
func (s *diagSink) LibError(bool, string, string) {}
func (s *diagSink) DeviceName() string            { return "" }

// checkInProcess runs what gofsck -fn runs on img with a diagSink and
// returns the transcript.
func checkInProcess(t *testing.T, img string) string {
	t.Helper()
	data, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	dev := &blockdev.Mem{Data: data, ReadOnly: true}
	f, err := fs.Open(dev, fs.Options{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := f.CheckFeatures(); err != nil {
		t.Fatalf("features: %v", err)
	}
	var out bytes.Buffer
	ropt := problem.Options{Mode: problem.ModeNo, Device: "test"}
	copt := check.Options{ReadOnly: true, Now: time.Now()}
	ropt.Namer = check.New(f, problem.NewReporter(nil, ropt), copt)
	sink := &diagSink{Reporter: problem.NewReporter(&out, ropt), out: &out}
	chk := check.New(f, sink, copt)
	if msg := chk.CheckJournal(); msg != "" {
		t.Fatalf("journal: %s", msg)
	}
	chk.CheckSuper(uint64(dev.Size()) >> f.BlockBits)
	chk.CheckResizeInode()
	if err := chk.Run(context.Background()); err != nil {
		t.Fatalf("run: %v", err)
	}
	return out.String()
}

// quotaLines returns the lines of a transcript that the quota check
// prints: library diagnostics and the PR_6_UPDATE_QUOTAS questions.
func quotaLines(out string) []string {
	var r []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "[QUOTA WARNING]") || strings.HasPrefix(l, "[ERROR]") ||
			strings.HasPrefix(l, "Update quota info") {
			r = append(r, l)
		}
	}
	return r
}

func updateLines(lines []string) []string {
	var r []string
	for _, l := range lines {
		if strings.HasPrefix(l, "Update quota info") {
			r = append(r, l)
		}
	}
	return r
}

// quotaBase is a 1 KiB-block ext4 with user, group and project quota whose
// files hold several ids (set with debugfs, then made consistent by
// e2fsck -fy), including ids large enough to branch the quota tree.
func quotaBase(t *testing.T, features string, extended ...string) string {
	return testfs.MkImage(t, testfs.Spec{
		Size: 4 << 20, FSType: "ext4", BlockSize: 1024, InodeSize: 256,
		Features: features, Extended: extended,
		Populate: func(tr *testfs.Tree) {
			tr.File("a", 3000)
			tr.File("d/b", 20000)
			tr.File("d/c", 100)
			tr.File("d/e", 0)
			tr.Symlink("d/l", "b")
		},
		Debugfs: []string{
			"sif /a uid 1000", "sif /a gid 2000", "sif /a projid 7",
			"sif /d/b uid 1001", "sif /d/b gid 2001", "sif /d/b projid 8",
			"sif /d/c uid 70000", "sif /d/c gid 4000000000",
			"sif /d/e uid 4294967295", "sif /d/l gid 1000",
		},
		OptimizeDirs: true,
	})
}

// quotaBlock returns the byte offset of the quota file's first data in the
// image (quota block 0 of inode ino).
func quotaBlock(t *testing.T, img string, ino uint32) int64 {
	t.Helper()
	return int64(testfs.Bmap(t, img, fmt.Sprintf("<%d>", ino), 0)) * testfs.BlockSize(t, img)
}

func TestQuotaAgainstE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	type qcase struct {
		name string
		edit func(t *testing.T, img string)
	}
	dbg := func(name string, cmds ...string) qcase {
		return qcase{name, func(t *testing.T, img string) { testfs.Debugfs(t, img, cmds...) }}
	}
	raw := func(name string, off int64, data []byte) qcase {
		return qcase{name, func(t *testing.T, img string) {
			testfs.WriteAt(t, img, quotaBlock(t, img, 3)+off, data)
		}}
	}
	full := []qcase{
		{"clean", func(*testing.T, string) {}},
		dbg("uid-changed", "sif /d/b uid 1234"),
		dbg("gid-changed", "sif /d/b gid 1234"),
		dbg("projid-changed", "sif /a projid 55"),
		dbg("uid-high-id", "sif /a uid 2147483648"),
		dbg("size-blocks", "sif /d/b blocks 100"),
		dbg("usr-quota-inum-invalid", "ssv usr_quota_inum 100000"),
		dbg("grp-quota-inum-other-file", "ssv grp_quota_inum 12"),
		dbg("file-cleared", "clri /a"),
		qcase{"zap-usr-quota-header", func(t *testing.T, img string) {
			testfs.Debugfs(t, img, fmt.Sprintf("zap_block %d", quotaBlock(t, img, 3)/testfs.BlockSize(t, img)))
		}},
		raw("wrong-endian", 0, binary.BigEndian.AppendUint32(nil, 0xd9c01f11)),
		raw("version-2", 4, testfs.Le32(2)),
		raw("dqi-blocks-past-eof", 8+12, testfs.Le32(256)),
		raw("free-blk", 8+16, testfs.Le32(255)),
		raw("free-entry", 8+20, testfs.Le32(255)),
		raw("root-ref-out-of-range", 1024+8, testfs.Le32(256)),
		raw("root-ref-cycle", 1024, testfs.Le32(1)),
		raw("tree-ref-garbage", 5*1024+16+48, testfs.Le32(12345)),
	}
	sets := []struct {
		name     string
		features string
		extended []string
		cases    []qcase
		quiet    []string // cases on which e2fsck prints no quota line
	}{
		{"usr-grp-prj", "quota,project", []string{"quotatype=usrquota:grpquota:prjquota"}, full, []string{"clean", "size-blocks"}},
		// Without a project quota file a project id change is invisible.
		{"usr-grp", "quota", nil, full[:4], []string{"clean", "projid-changed"}},
	}
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			base := quotaBase(t, set.features, set.extended...)
			for _, tc := range set.cases {
				t.Run(tc.name, func(t *testing.T) {
					img := testfs.CopyImage(t, base)
					tc.edit(t, img)
					want, wantExit := testfs.E2fsck(t, img, "-fn")
					got, gotExit := testfs.Gofsck(t, img, "-fn")
					if gotExit != wantExit {
						t.Errorf("gofsck exit %d, e2fsck %d\n--- e2fsck:\n%s\n--- gofsck:\n%s", gotExit, wantExit, want, got)
					}
					wl, gl := quotaLines(want), quotaLines(checkInProcess(t, img))
					if quiet := slices.Contains(set.quiet, tc.name); quiet != (len(wl) == 0) {
						t.Errorf("e2fsck printed %d quota lines: the case does not test what it says\n%s", len(wl), want)
					}
					if !slices.Equal(wl, gl) {
						t.Errorf("quota lines differ\n--- e2fsck:\n%s\n--- gofsck:\n%s", strings.Join(wl, "\n"), strings.Join(gl, "\n"))
					}
					if wu, gu := updateLines(wl), updateLines(quotaLines(got)); !slices.Equal(wu, gu) {
						t.Errorf("gofsck binary asks %q, e2fsck %q", gu, wu)
					}
				})
			}
		})
	}
}
