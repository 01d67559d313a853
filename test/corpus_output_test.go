package test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gofsck/internal/testfs"
)

const corpusOutputKnownPath = "testdata/corpus_output_differences.txt"

const corpusOutputHeader = `# e2fsprogs test images on which gofsck -fn prints something else than the
# installed e2fsck -fn (stdout, byte for byte after the device path, and the
# exit code). One line per image: name<TAB>first difference. The list may only
# shrink. Regenerate with
#   go test ./test -run '^TestCorpusOutput$' -update-known
`

// runSplit runs a checker with separate stdout and stderr (e2fsck buffers
// stdout when it is not a terminal, so combined output would interleave
// differently).
func runSplit(t *testing.T, timeout time.Duration, prog string, args ...string) (stdout string, exit int, timedOut bool) {
	t.Helper()
	stdout, _, exit, timedOut = runSplit2(t, timeout, prog, args...)
	return stdout, exit, timedOut
}

// runSplit2 is runSplit that returns stderr too. timeout bounds the
// program's CPU time (testfs.RunLimited).
func runSplit2(t *testing.T, timeout time.Duration, prog string, args ...string) (stdout, stderr string, exit int, timedOut bool) {
	t.Helper()
	cmd := exec.Command(prog, args...)
	// argv[0] is what both programs print as their name.
	cmd.Args[0] = filepath.Base(prog)
	cmd.Env = append(os.Environ(), "E2FSCK_CONFIG=/dev/null", "TZ=UTC")
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if timedOut, err := testfs.RunLimited(cmd, timeout); timedOut {
		return out.String(), errb.String(), -1, true
	} else if err != nil {
		return splitExit(t, prog, out.String(), errb.String(), err)
	}
	return out.String(), errb.String(), 0, false
}

// splitExit is runSplit2's result for a run that ended with err.
func splitExit(t *testing.T, prog, stdout, stderr string, err error) (string, string, int, bool) {
	t.Helper()
	exit := 0
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		exit = ee.ExitCode()
	default:
		t.Fatalf("running %s: %v", prog, err)
	}
	return stdout, stderr, exit, false
}

// TestCorpusOutput compares gofsck -fn's output with the installed e2fsck
// -fn's on every image of e2fsprogs' test suite: the output is the
// interface administrators and scripts read, so it should be the same line
// for line. Images on which e2fsck 1.47.0 does not terminate are skipped
// (VERDICTS.tsv notes two).
func TestCorpusOutput(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	dir := corpusDir(t)
	gofsck := testfs.GofsckPath(t)
	known := loadKnown(t, corpusOutputKnownPath)
	names, e2fsck := corpusNames(t, dir), e2fsckPath(t)
	t.Run("image", func(t *testing.T) {
		for _, name := range names {
			if !testfs.InSample(name, 2) { // the default tier: a fixed half
				continue
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				tmp := t.TempDir()
				img, journal := corpusImage(t, filepath.Join(dir, name), tmp)
				args := []string{"-fn"}
				if journal != "" {
					args = append(args, "-j", journal)
				}
				args = append(args, img)
				eout, eexit, eto := runSplit(t, 20*time.Second, e2fsck, args...)
				if eto {
					t.Skipf("e2fsck -fn does not terminate on %s", name)
				}
				gout, gexit, gto := runSplit(t, 60*time.Second, gofsck, args...)
				// gofsck names itself where e2fsck does ("<prog>: Superblock
				// invalid...", "running <prog> with an alternate superblock").
				gout = strings.ReplaceAll(gout, filepath.Base(gofsck), "e2fsck")
				agree := !gto && eexit == gexit && eout == gout
				reason := ""
				if !agree {
					reason = firstDifference(eout, gout, eexit, gexit)
				}
				known.record(t, name, agree, reason, "--- e2fsck:\n"+eout+"--- gofsck:\n"+gout)
			})
		}
	})
	known.finish(t, "corpus output", names, corpusOutputHeader)
}

// firstDifference describes where two transcripts part.
func firstDifference(e, g string, eexit, gexit int) string {
	el, gl := strings.Split(e, "\n"), strings.Split(g, "\n")
	for i := 0; i < len(el) || i < len(gl); i++ {
		var a, b string
		if i < len(el) {
			a = el[i]
		}
		if i < len(gl) {
			b = gl[i]
		}
		if a != b {
			return fmt.Sprintf("line %d: e2fsck %q, gofsck %q", i+1, trim(a), trim(b))
		}
	}
	return fmt.Sprintf("exit e2fsck %d, gofsck %d", eexit, gexit)
}

func trim(s string) string {
	if len(s) > 70 {
		return s[:70] + "..."
	}
	return s
}
