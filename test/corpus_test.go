package test

import (
	"archive/tar"
	"bufio"
	"compress/bzip2"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// The shared-corpus regression test: every image of e2fsprogs' own test
// suite (../shared/e2fsprogs-tests, used in place) is checked with
// gofsck -fn, which must terminate, must not modify the image, and must give
// the verdict (clean: exit 0, corrupt: anything else) that VERDICTS.tsv
// records for the installed e2fsck -fn. e2fsck itself is not run here (on
// two images 1.47.0 never terminates), except on the images that come with
// an external journal: both programs get it with -j, and the reference is
// e2fsck -fn run the same way.

const corpusKnownPath = "testdata/corpus_known_differences.txt"

const corpusKnownHeader = `# e2fsprogs test images on which gofsck -fn is allowed to give another
# verdict than VERDICTS.tsv's reference_fn_exit (0 = clean, else corrupt;
# with an external journal, e2fsck -fn -j JOURNAL's exit).
# One line per image: name<TAB>reason. The list may only shrink. Regenerate with
#   go test ./test -run '^TestCorpus$' -update-known
`

// SharedEnv names the environment variable that points at the shared
// directory (the one holding e2fsprogs-tests/), or at e2fsprogs-tests itself.
const SharedEnv = "GOFSCK_SHARED"

// corpusDir finds the e2fsprogs-tests folder: $GOFSCK_SHARED, else
// <repo root>/../shared (CI checks the shared folder out beside the clone),
// else ../../shared relative to this package.
func corpusDir(t *testing.T) string {
	t.Helper()
	var cands []string
	if env := os.Getenv(SharedEnv); env != "" {
		cands = append(cands, filepath.Join(env, "e2fsprogs-tests"), env)
	}
	if root, err := testfs.ModuleRoot(); err == nil {
		cands = append(cands, filepath.Join(root, "..", "shared", "e2fsprogs-tests"))
	}
	cands = append(cands, filepath.Join("..", "..", "shared", "e2fsprogs-tests"))
	for _, c := range cands {
		if _, err := os.Stat(filepath.Join(c, "VERDICTS.tsv")); err == nil {
			abs, err := filepath.Abs(c)
			if err != nil {
				t.Fatal(err)
			}
			return abs
		}
	}
	msg := fmt.Sprintf("e2fsprogs-tests with VERDICTS.tsv not found (tried %s); set %s to the shared directory",
		strings.Join(cands, ", "), SharedEnv)
	if testfs.InCI() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// verdicts reads VERDICTS.tsv: image name → reference e2fsck -fn exit code.
func verdicts(t *testing.T, dir string) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "VERDICTS.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[string]int{}
	sc := bufio.NewScanner(f)
	col := -1
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if col < 0 {
			col = slices.Index(fields, "reference_fn_exit")
			if col < 1 {
				t.Fatalf("VERDICTS.tsv: no reference_fn_exit column in %q", sc.Text())
			}
			continue
		}
		if len(fields) <= col {
			continue
		}
		v, err := strconv.Atoi(fields[col])
		if err != nil {
			t.Fatalf("VERDICTS.tsv: %q: %v", sc.Text(), err)
		}
		m[fields[0]] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// corpusImage unpacks a test folder's image (and external journal, if any)
// into dst and returns their paths.
func corpusImage(t *testing.T, folder, dst string) (img, journal string) {
	t.Helper()
	img = filepath.Join(dst, "image")
	for _, name := range []string{"image.gz", "image.bz2", "image"} {
		src := filepath.Join(folder, name)
		if _, err := os.Stat(src); err == nil {
			testfs.Decompress(t, src, img)
			if j := filepath.Join(folder, "journal.gz"); fileExists(j) {
				journal = filepath.Join(dst, "journal")
				testfs.Decompress(t, j, journal)
			}
			return img, journal
		}
	}
	src := filepath.Join(folder, "image.tar.bz2")
	if !fileExists(src) {
		t.Fatalf("%s has no image", folder)
	}
	// j_corrupt_ext_jnl_*: <name>.img and its external journal <name>.img.jnl.
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(bzip2.NewReader(f))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		var out string
		switch {
		case strings.HasSuffix(h.Name, ".img"):
			out = img
		case strings.HasSuffix(h.Name, ".jnl"):
			journal = filepath.Join(dst, "journal")
			out = journal
		default:
			continue
		}
		w, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(w, io.LimitReader(tr, 1<<30)); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		w.Close()
	}
	if !fileExists(img) {
		t.Fatalf("%s holds no *.img", src)
	}
	return img, journal
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestCorpus(t *testing.T) {
	dir := corpusDir(t)
	ref := verdicts(t, dir)
	testfs.GofsckPath(t)
	known := loadKnown(t, corpusKnownPath)

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s has no test folders", dir)
	}
	t.Run("image", func(t *testing.T) {
		for _, name := range names {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				want, ok := ref[name]
				if !ok {
					t.Fatalf("%s is not in VERDICTS.tsv", name)
				}
				img, journal := corpusImage(t, filepath.Join(dir, name), t.TempDir())
				before := testfs.FileSHA256(t, img)
				args := []string{"-fn"}
				if journal != "" {
					args = append(args, "-j", journal)
				}
				if journal != "" {
					// VERDICTS.tsv ran e2fsck without -j: its verdict
					// depends on what the superblock's journal device
					// number opens on that machine. With the journal
					// given, the oracle is asked the same question.
					_, want = testfs.E2fsck(t, img, args...)
				}
				out, exit := testfs.Gofsck(t, img, args...)
				if after := testfs.FileSHA256(t, img); after != before {
					t.Errorf("gofsck %s modified the image (sha256 %s → %s)", strings.Join(args, " "), before, after)
				}
				agree := exit != testfs.TimeoutExit && testfs.Verdict(exit) == testfs.Verdict(want)
				reason := fmt.Sprintf("reference exit %d (%s); gofsck exit %d (%s)",
					want, testfs.VerdictString(want), exit, testfs.VerdictString(exit))
				if exit == testfs.TimeoutExit {
					reason = fmt.Sprintf("reference exit %d; gofsck did not terminate in %v", want, testfs.DefaultTimeout)
				}
				known.record(t, name, agree, reason, "--- gofsck "+strings.Join(args, " ")+":\n"+out)
			})
		}
	})
	known.finish(t, "corpus", names, corpusKnownHeader)
}
