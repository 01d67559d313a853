package test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// The repair leg of the differential suite. Every case image (corrupted,
// or a no-effect case) is repaired twice, on copies: by gofsck -fy and by
// the installed e2fsck -fy. gofsck's repair agrees with e2fsck's when
//
//   - both print the same transcript (device names aside) and exit codes,
//   - e2fsck -fn and gofsck -fn then find gofsck's image clean (or, where
//     e2fsck's own repair needs a second run, as unclean as e2fsck's),
//   - and both repaired images hold the same files with the same contents
//     (every path, type, size and SHA-256 through debugfs rdump), so no
//     data outside the fault was lost or changed.
//
// A case whose repair needs a fix gofsck does not implement must stop with
// exit 8 and leave the image byte for byte unchanged; that is a hard
// failure otherwise. The cases that do not agree yet are listed, with the
// reason, in testdata/repair_known.txt, which may only shrink.

const repairKnownPath = "testdata/repair_known.txt"

const repairKnownHeader = `# Differential cases whose gofsck -fy repair does not yet agree with
# e2fsck -fy's (see test/repair_test.go). One line per case:
# name<TAB>reason. The list may only shrink. Regenerate with
#   go test ./test -run '^TestDifferential$' -update-known
`

// unsupportedRe matches gofsck's message for a fix it does not implement.
var nowRe = regexp.MustCompile(`now = [^)]*\)`)

var unsupportedRe = regexp.MustCompile(`the fix for problem (PR_\w+) \(0x[0-9a-f]+\) is not implemented yet`)

// repairLeg repairs img (left untouched) with both checkers and returns
// whether gofsck's repair agrees with e2fsck's, the reason when it does
// not, and the transcripts for the log.
func repairLeg(t *testing.T, img string) (agree bool, reason, detail string) {
	t.Helper()
	before := testfs.FileSHA256(t, img)
	gimg := testfs.CopyImage(t, img)
	eimg := testfs.CopyImage(t, img)
	gout, gexit := testfs.Gofsck(t, gimg, "-fy")
	eout, eexit := testfs.E2fsckInPlace(t, eimg, "-fy")
	detail = fmt.Sprintf("--- e2fsck -fy (exit %d):\n%s--- gofsck -fy (exit %d):\n%s", eexit, eout, gexit, gout)
	if m := unsupportedRe.FindStringSubmatch(gout); m != nil {
		if gexit != 8 {
			t.Errorf("gofsck stopped at an unsupported fix with exit %d, want 8", gexit)
		}
		if testfs.FileSHA256(t, gimg) != before {
			t.Errorf("gofsck stopped at an unsupported fix (%s) but changed the image", m[1])
		}
		return false, "unsupported " + m[1], detail
	}
	if testfs.FileSHA256(t, img) != before {
		t.Fatal("the case image changed")
	}
	// The repaired image is checked by both checkers.
	// -n writes nothing: the results are checked where they are.
	e2after, e2exit := testfs.E2fsckInPlace(t, gimg, "-fn")
	_, ourExit := testfs.Gofsck(t, gimg, "-fn")
	refOut, refExit := testfs.E2fsckInPlace(t, eimg, "-fn")
	detail += "--- e2fsck -fn after e2fsck -fy:\n" + refOut
	detail += fmt.Sprintf("--- e2fsck -fn after gofsck -fy (exit %d):\n%s", e2exit, e2after)
	switch {
	case e2exit != refExit:
		return false, fmt.Sprintf("after repair e2fsck -fn exits %d (after e2fsck's own repair %d)", e2exit, refExit), detail
	case ourExit != refExit:
		return false, fmt.Sprintf("after repair gofsck -fn exits %d (e2fsck -fn %d)", ourExit, refExit), detail
	case gexit != eexit:
		return false, fmt.Sprintf("-fy exit %d, e2fsck %d", gexit, eexit), detail
	}
	if g, e := transcript(gout, gimg), transcript(eout, eimg); g != e {
		return false, "-fy transcript differs: " + firstDiffLine(e, g), detail
	}
	// The same bytes (but the stamps) are the same tree; only images that
	// differ are compared file by file (rdump, which costs more than the
	// checks).
	if _, same := sameRepairedBytes(t, gimg, eimg); same {
		return true, "", detail
	}
	if g, e := treeDigest(t, gimg), treeDigest(t, eimg); g != e {
		return false, "repaired trees differ: " + firstDiffLine(e, g), detail
	}
	return true, "", detail
}

var stampedMtimeRe = regexp.MustCompile(`(\(inode #[0-9]+, mod time )[^)]*\)`)

// transcript is a checker's stdout with the device path and the version
// banner taken out.
func transcript(out, img string) string {
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "e2fsck 1.") || strings.HasPrefix(l, "gofsck 0.") {
			continue
		}
		l = strings.ReplaceAll(l, img, "IMG")
		for _, prog := range []string{"/usr/sbin/e2fsck", "/sbin/e2fsck", "e2fsck", "gofsck"} {
			l = strings.ReplaceAll(l, prog, "PROG")
		}
		// The future-time messages print each program's own clock, which
		// may be a second apart.
		l = nowRe.ReplaceAllString(l, "now = NOW)")
		// Pass 1D's mtimes of inodes each program stamps (a re-created
		// journal, the bad-blocks list).
		l = stampedMtimeRe.ReplaceAllString(l, "${1}NOW)")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// firstDiffLine returns the first line where want and got differ.
func firstDiffLine(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d: e2fsck %q, gofsck %q", i+1, a, b)
		}
	}
	return ""
}

// treeDigest lists every file of img (debugfs rdump of the root) as one
// line per path: type, size and SHA-256 of the contents (or the link
// target).
func treeDigest(t *testing.T, img string) string {
	t.Helper()
	if !debugfsOpens(t, img) {
		// A repair may leave a filesystem no tool opens (an unknown
		// feature, a bad superblock e2fsck could not replace).
		return "debugfs cannot open the filesystem"
	}
	if list, huge := treeListing(t, img); huge {
		// A file too big for rdump to copy in time (a repaired i_size
		// of terabytes): compare paths, modes and sizes only.
		return list
	}
	dir := t.TempDir()
	// Unreadable parts simply do not appear: the two repairs must leave
	// the same ones.
	testfs.DebugfsRO(t, img, "rdump / "+dir)
	var lines []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		info, ierr := d.Info()
		if ierr != nil {
			lines = append(lines, rel+" ?")
			return nil
		}
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			lines = append(lines, fmt.Sprintf("%s link %s", rel, target))
		case info.IsDir():
			lines = append(lines, rel+" dir")
		case info.Mode().IsRegular():
			data, _ := os.ReadFile(p)
			sum := sha256.Sum256(data)
			lines = append(lines, fmt.Sprintf("%s file %d %s", rel, len(data), hex.EncodeToString(sum[:8])))
		default:
			lines = append(lines, fmt.Sprintf("%s %v", rel, info.Mode().Type()))
		}
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// debugfsOpens reports whether debugfs can open img at all.
func debugfsOpens(t *testing.T, img string) bool {
	t.Helper()
	path, err := exec.LookPath("debugfs")
	if err != nil {
		path = "/sbin/debugfs"
		if _, err := os.Stat("/usr/sbin/debugfs"); err == nil {
			path = "/usr/sbin/debugfs"
		}
	}
	cmd := exec.Command(path, "-R", "stats", img)
	cmd.Env = testfs.Env(t)
	out, _ := cmd.CombinedOutput()
	return !strings.Contains(string(out), "while trying to open") && !strings.Contains(string(out), "Bad magic number")
}

// hugeFileSize is the largest file treeDigest copies out with rdump.
const hugeFileSize = 1 << 30

// treeListing lists img's tree with debugfs "ls -p", one level of
// directories per run: one line per path with its mode and size. huge
// reports a regular file larger than hugeFileSize.
func treeListing(t *testing.T, img string) (list string, huge bool) {
	t.Helper()
	var lines []string
	dirs := []string{"/"}
	seen := map[string]bool{}
	for depth := 0; len(dirs) > 0 && depth < 16; depth++ {
		var cmds []string
		for _, d := range dirs {
			cmds = append(cmds, "ls -p "+d)
		}
		if len(cmds) == 1 {
			cmds = append(cmds, "ls -p "+dirs[0]) // a -f script echoes the command
		}
		out := testfs.DebugfsRO(t, img, cmds...)
		dirs = nil
		cur := ""
		for _, l := range strings.Split(out, "\n") {
			if c, ok := strings.CutPrefix(l, "debugfs: ls -p "); ok {
				cur = c
				continue
			}
			f := strings.Split(l, "/")
			if cur == "" || len(f) < 7 || f[5] == "." || f[5] == ".." {
				continue
			}
			p := strings.TrimSuffix(cur, "/") + "/" + f[5]
			if seen[p] {
				continue
			}
			seen[p] = true
			lines = append(lines, p+" "+f[2]+" "+f[6])
			if strings.HasPrefix(f[2], "04") {
				dirs = append(dirs, p)
			} else if sz, err := strconv.ParseUint(f[6], 10, 64); err == nil && sz > hugeFileSize {
				huge = true
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n"), huge
}

const preenKnownPath = "testdata/preen_known.txt"

const preenKnownHeader = `# Differential cases whose gofsck -p run does not yet agree with e2fsck -p
# (test/repair_test.go, preenLeg). One line per case: name<TAB>reason. The
# list may only shrink. Regenerate with
#   go test ./test -run '^TestDifferential$' -update-known
`

// preenLeg runs gofsck -p and e2fsck -p on copies of img. They agree when
// both print the same (stdout and stderr, device names aside) and exit
// the same: 0 or 1 when every fault is preen-safe, 4 with "UNEXPECTED
// INCONSISTENCY" when one is not; and e2fsck -fn then judges both images
// alike (clean after a full preen repair). A run that stops at an unsupported fix must not change the
// image.
func preenLeg(t *testing.T, img string) (agree bool, reason, detail string) {
	t.Helper()
	before := testfs.FileSHA256(t, img)
	gimg := testfs.CopyImage(t, img)
	eimg := testfs.CopyImage(t, img)
	gout, gexit := testfs.Gofsck(t, gimg, "-p")
	eout, eexit := testfs.E2fsckInPlace(t, eimg, "-p")
	detail = fmt.Sprintf("--- e2fsck -p (exit %d):\n%s--- gofsck -p (exit %d):\n%s", eexit, eout, gexit, gout)
	if m := unsupportedRe.FindStringSubmatch(gout); m != nil {
		if testfs.FileSHA256(t, gimg) != before {
			t.Errorf("gofsck -p stopped at an unsupported fix (%s) but changed the image", m[1])
		}
		return false, "unsupported " + m[1], detail
	}
	if gexit != eexit {
		return false, fmt.Sprintf("-p exit %d, e2fsck %d", gexit, eexit), detail
	}
	if g, e := transcript(gout, gimg), transcript(eout, eimg); g != e {
		return false, "-p transcript differs: " + firstDiffLine(e, g), detail
	}
	// Without -f both may skip a filesystem marked clean: then what is
	// left must be what e2fsck -p left.
	out, code := testfs.E2fsckInPlace(t, gimg, "-fn")
	if _, ref := testfs.E2fsckInPlace(t, eimg, "-fn"); code != ref {
		return false, fmt.Sprintf("after -p e2fsck -fn exits %d (after e2fsck -p %d)", code, ref), detail + "--- e2fsck -fn after gofsck -p:\n" + out
	}
	return true, "", detail
}
