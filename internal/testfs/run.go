package testfs

import (
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// E2fsck runs the oracle, the installed e2fsck, on a copy of img (so that
// -y or -p never touch the caller's image) and returns its combined output
// and exit status (TimeoutExit if it ran longer than DefaultTimeout).
func E2fsck(t testing.TB, img string, args ...string) (out string, exit int) {
	t.Helper()
	return E2fsckTimeout(t, DefaultTimeout, img, args...)
}

// E2fsckTimeout is E2fsck with an explicit timeout.
func E2fsckTimeout(t testing.TB, timeout time.Duration, img string, args ...string) (out string, exit int) {
	t.Helper()
	prog := tool(t, "e2fsck")
	cp := CopyImage(t, img)
	res := run(t, timeout, checkerEnv(t), prog, append(args, cp)...)
	return strings.ReplaceAll(res.out, cp, img), res.exit
}

// E2fsckInPlace runs the installed e2fsck on img itself (for repairs whose
// result is examined afterwards), with DefaultTimeout.
func E2fsckInPlace(t testing.TB, img string, args ...string) (out string, exit int) {
	t.Helper()
	res := run(t, DefaultTimeout, checkerEnv(t), tool(t, "e2fsck"), append(args, img)...)
	return res.out, res.exit
}

var (
	buildMu   sync.Mutex
	buildDone bool   // buildMu protects buildDone, buildBin, buildErr, buildDir.
	buildBin  string // path of the built gofsck
	buildErr  error
	buildDir  string
)

// GofsckEnv names the environment variable that, when set, points at a
// prebuilt gofsck binary to use instead of building ./cmd/gofsck.
const GofsckEnv = "GOFSCK_BIN"

// errNoCommand means cmd/gofsck has no Go files yet: the checker is still
// being written. Tests skip then, except in CI.
var errNoCommand = errors.New("testfs: the gofsck command does not exist yet (no Go files)")

// GofsckPath builds gofsck/cmd/gofsck once per test binary (into a temp
// directory that Main removes) and returns the binary's path. A failed build
// fails the test with the compiler's output.
func GofsckPath(t testing.TB) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if !buildDone {
		buildDone = true
		buildBin, buildErr = buildGofsck()
	}
	if errors.Is(buildErr, errNoCommand) && !InCI() {
		t.Skipf("skipping: %v (set %s to a gofsck binary to run anyway; in CI this fails)", buildErr, GofsckEnv)
	}
	if buildErr != nil {
		t.Fatalf("testfs: building gofsck: %v", buildErr)
	}
	return buildBin
}

func buildGofsck() (string, error) {
	if p := os.Getenv(GofsckEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", GofsckEnv, p, err)
		}
		return p, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	if m, _ := filepath.Glob(filepath.Join(root, "cmd", "gofsck", "*.go")); len(m) == 0 {
		return "", fmt.Errorf("%w: %s", errNoCommand, filepath.Join(root, "cmd", "gofsck"))
	}
	buildDir, err = os.MkdirTemp("", "testfs-gofsck-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(buildDir, "gofsck")
	cmd := exec.Command(goTool(), "build", "-o", bin, "gofsck/cmd/gofsck")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build gofsck/cmd/gofsck: %v\n%s", err, out)
	}
	return bin, nil
}

func goTool() string {
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return "go"
}

var (
	modRootOnce sync.Once
	modRoot     string
	modRootErr  error
)

// ModuleRoot returns the directory holding gofsck's go.mod (from go env
// GOMOD, so it works from any package directory and in any clone).
func ModuleRoot() (string, error) {
	modRootOnce.Do(func() {
		out, err := exec.Command(goTool(), "env", "GOMOD").Output()
		if err != nil {
			modRootErr = fmt.Errorf("go env GOMOD: %w", err)
			return
		}
		gomod := strings.TrimSpace(string(out))
		if gomod == "" || gomod == os.DevNull {
			modRootErr = fmt.Errorf("go env GOMOD: not inside a module")
			return
		}
		modRoot = filepath.Dir(gomod)
	})
	return modRoot, modRootErr
}

// Main runs the tests and then removes the gofsck build directory. Use it as
//
//	func TestMain(m *testing.M) { testfs.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	buildMu.Lock()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	buildMu.Unlock()
	if envDir != "" {
		os.RemoveAll(envDir)
	}
	removeShared()
	os.Exit(code)
}

// Gofsck runs the gofsck binary with args and img (appended last) and
// returns its combined output and exit status (TimeoutExit after
// DefaultTimeout). It runs on img itself: pass -n, or copy the image first.
func Gofsck(t testing.TB, img string, args ...string) (out string, exit int) {
	t.Helper()
	return GofsckTimeout(t, DefaultTimeout, img, args...)
}

// GofsckTimeout is Gofsck with an explicit timeout.
func GofsckTimeout(t testing.TB, timeout time.Duration, img string, args ...string) (out string, exit int) {
	t.Helper()
	bin := GofsckPath(t)
	res := run(t, timeout, checkerEnv(t), bin, append(args, img)...)
	return res.out, res.exit
}

// Verdict reports whether an e2fsck-style exit status says the file system
// is (or was) corrupt: anything but 0.
func Verdict(exit int) bool { return exit != 0 }

// VerdictString renders an exit status as "clean" or "corrupt".
func VerdictString(exit int) string {
	if Verdict(exit) {
		return "corrupt"
	}
	return "clean"
}

// Transcript is an e2fsck-style output split by pass. Pass labels are "0"
// (before the first pass header: superblock, descriptors, journal), "1",
// "1B", "1C", "1D", "1E", "2", "3", "3A", "4", "5". Everything after the
// pass 5 header (quota and end-of-run problems) counts as pass 5.
type Transcript struct {
	// Problems maps a pass label to the problem lines printed in it, in
	// order, without pass headers, blank lines, the banner, the summary and
	// the MODIFIED / still-has-errors trailers.
	Problems map[string][]string
	// Headers lists the pass labels whose headers appeared, in order.
	Headers []string
}

// passOrder ranks pass labels for sorting.
var passOrder = []string{"0", "1", "1B", "1C", "1D", "1E", "2", "3", "3A", "4", "5"}

// ParseTranscript splits an e2fsck (or gofsck) transcript into passes.
func ParseTranscript(out string) Transcript {
	tr := Transcript{Problems: make(map[string][]string)}
	pass := "0"
	for _, raw := range strings.Split(out, "\n") {
		l := strings.TrimRight(raw, " \r\t")
		if p, ok := passHeader(l); ok {
			pass = p
			tr.Headers = append(tr.Headers, p)
			continue
		}
		if ignorable(l) {
			continue
		}
		tr.Problems[pass] = append(tr.Problems[pass], l)
	}
	return tr
}

func passHeader(l string) (string, bool) {
	rest, ok := strings.CutPrefix(l, "Pass ")
	if !ok {
		return "", false
	}
	label, desc, ok := strings.Cut(rest, ": ")
	if !ok || desc == "" || !slices.Contains(passOrder, label) || label == "0" {
		return "", false
	}
	return label, true
}

func ignorable(l string) bool {
	s := strings.TrimSpace(l)
	switch {
	case s == "":
		return true
	case strings.HasPrefix(s, "e2fsck ") && strings.HasSuffix(s, ")") && !strings.Contains(s, ":"):
		return true // banner: e2fsck 1.47.0 (5-Feb-2023)
	case strings.HasPrefix(s, "gofsck ") && strings.HasSuffix(s, ")") && !strings.Contains(s, ":"):
		return true
	case strings.HasPrefix(s, "Running additional passes to resolve blocks claimed by more than one inode"):
		return true
	case strings.Contains(s, "***** FILE SYSTEM WAS MODIFIED *****"):
		return true
	case strings.Contains(s, "WARNING: Filesystem still has errors"):
		return true
	case strings.Contains(s, "***** REBOOT SYSTEM *****"):
		return true
	case summaryLine(s):
		return true
	case strings.HasPrefix(s, "*** testfs:"):
		return false
	}
	return false
}

// summaryLine matches "<dev>: 11/2048 files (0.0% non-contiguous), 1234/8192 blocks"
// and the clean-skip "<dev>: clean, ..." line.
func summaryLine(s string) bool {
	_, rest, ok := strings.Cut(s, ": ")
	if !ok {
		return false
	}
	if strings.HasPrefix(rest, "clean, ") {
		return true
	}
	return strings.Contains(rest, " files (") && strings.Contains(rest, "% non-contiguous), ") &&
		strings.HasSuffix(rest, " blocks")
}

// Passes returns the labels of the passes that reported problems, in pass
// order.
func (tr Transcript) Passes() []string {
	var ps []string
	for _, p := range passOrder {
		if len(tr.Problems[p]) > 0 {
			ps = append(ps, p)
		}
	}
	return ps
}

// FirstPass returns the first pass that reported a problem, or "" if none.
func (tr Transcript) FirstPass() string {
	if ps := tr.Passes(); len(ps) > 0 {
		return ps[0]
	}
	return ""
}

// ProblemPasses is ParseTranscript(out).Passes().
func ProblemPasses(out string) []string { return ParseTranscript(out).Passes() }

// FileSHA256 returns the hex SHA-256 of a file's contents.
func FileSHA256(t testing.TB, p string) string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Decompress writes the decompressed contents of a .gz or .bz2 file (or a
// plain copy of anything else) to dst.
func Decompress(t testing.TB, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var r io.Reader = in
	switch {
	case strings.HasSuffix(src, ".gz"):
		zr, err := gzip.NewReader(in)
		if err != nil {
			t.Fatalf("testfs: %s: %v", src, err)
		}
		defer zr.Close()
		r = zr
	case strings.HasSuffix(src, ".bz2"):
		r = bzip2.NewReader(in)
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if err := copySparse(out, r); err != nil {
		t.Fatalf("testfs: decompressing %s: %v", src, err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// copySparse copies r to f, leaving holes for all-zero 64 KiB chunks.
func copySparse(f *os.File, r io.Reader) error {
	buf := make([]byte, 64<<10)
	var off int64
	for {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			if bytes.Count(buf[:n], []byte{0}) != n {
				if _, werr := f.WriteAt(buf[:n], off); werr != nil {
					return werr
				}
			}
			off += int64(n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return err
		}
	}
	return f.Truncate(off)
}

// E2fsckInPlaceAt is E2fsckInPlace with the clock stopped at now
// (ClockAt); GofsckAt is its gofsck side.
func E2fsckInPlaceAt(t testing.TB, now int64, img string, args ...string) (out string, exit int) {
	t.Helper()
	res := run(t, DefaultTimeout, append(checkerEnv(t), ClockAt(now)...), tool(t, "e2fsck"), append(args, img)...)
	return res.out, res.exit
}

// GofsckAt is Gofsck with the clock stopped at now (ClockAt).
func GofsckAt(t testing.TB, now int64, img string, args ...string) (out string, exit int) {
	t.Helper()
	res := run(t, DefaultTimeout, append(checkerEnv(t), ClockAt(now)...), GofsckPath(t), append(args, img)...)
	return res.out, res.exit
}

// ClockAt is the environment that stops a checker's clock at now, both
// e2fsck's own (E2FSCK_TIME, ctx->now) and the library's
// (E2FSPROGS_FAKE_TIME, the times libext2fs stamps on the inodes it
// writes). Two programs run with the same now stamp the same times
// however far apart they run, which a busy machine can make seconds. Pass
// the real time when the pair starts: an image's own times are then in
// the past, as in production.
func ClockAt(now int64) []string {
	return []string{fmt.Sprintf("E2FSCK_TIME=%d", now), fmt.Sprintf("E2FSPROGS_FAKE_TIME=%d", now)}
}

// E2fsckInPlaceTimeout is E2fsckInPlace with an explicit timeout (for big
// sparse images, which E2fsck's copy would read whole).
func E2fsckInPlaceTimeout(t testing.TB, timeout time.Duration, img string, args ...string) (out string, exit int) {
	t.Helper()
	res := run(t, timeout, checkerEnv(t), tool(t, "e2fsck"), append(args, img)...)
	return res.out, res.exit
}
