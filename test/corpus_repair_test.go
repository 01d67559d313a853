package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gofsck/internal/testfs"
)

// TestCorpusRepair repairs every e2fsprogs test image with gofsck -fy and,
// on another copy, with the installed e2fsck -fy (the run expect.1
// records). gofsck's repair agrees when it prints e2fsck's transcript with
// e2fsck's exit code and leaves an image that e2fsck -fn and gofsck -fn
// then judge as they judge e2fsck's result (clean for nearly every image:
// that is expect.2). An image whose repair needs a fix gofsck does not
// implement must stop with exit 8 and stay byte for byte unchanged (a
// hard failure otherwise). The images that do not agree yet are listed in
// testdata/corpus_repair_known.txt, which may only shrink:
//
//	go test ./test -run '^TestCorpusRepair$' -update-known
func TestCorpusRepair(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	dir := corpusDir(t)
	gofsck := testfs.GofsckPath(t)
	known := loadKnown(t, corpusRepairKnownPath)
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
				gimg := filepath.Join(tmp, "gofsck.img")
				eimg := filepath.Join(tmp, "e2fsck.img")
				copyTo(t, img, gimg)
				copyTo(t, img, eimg)
				before := testfs.FileSHA256(t, img)
				args := func(mode, target string) []string {
					a := []string{mode}
					if journal != "" {
						// Each run gets its own copy of the external journal.
						j := target + ".jnl"
						if !fileExists(j) {
							copyTo(t, journal, j)
						}
						a = append(a, "-j", j)
					}
					return append(a, target)
				}
				eout, eexit, eto := runSplit(t, 20*time.Second, e2fsck, args("-fy", eimg)...)
				gout, gerr, gexit, gto := runSplit2(t, 60*time.Second, gofsck, args("-fy", gimg)...)
				gout = strings.ReplaceAll(gout, filepath.Base(gofsck), "e2fsck")
				gout = strings.ReplaceAll(gout, gimg, eimg)
				detail := "--- e2fsck -fy:\n" + eout + "--- gofsck -fy:\n" + gout
				if gto {
					t.Fatalf("gofsck -fy did not finish in 60 s\n%s", detail)
				}
				detail += "--- gofsck -fy stderr:\n" + gerr
				if m := unsupportedRe.FindStringSubmatch(gerr); m != nil || gexit == 8 && strings.Contains(gerr, "needs journal recovery") {
					if gexit != 8 {
						t.Errorf("stopped at an unsupported fix with exit %d, want 8", gexit)
					}
					if testfs.FileSHA256(t, gimg) != before {
						t.Errorf("stopped at an unsupported fix but changed the image")
					}
					reason := "unsupported journal recovery"
					if m != nil {
						reason = "unsupported " + m[1]
					}
					known.record(t, name, false, reason, detail)
					return
				}
				if eto {
					known.record(t, name, false, "e2fsck -fy does not terminate", detail)
					return
				}
				_, refExit, _ := runSplit(t, 20*time.Second, e2fsck, args("-fn", eimg)...)
				after, afterExit, _ := runSplit(t, 20*time.Second, e2fsck, args("-fn", gimg)...)
				_, ourExit, _ := runSplit(t, 60*time.Second, gofsck, args("-fn", gimg)...)
				detail += "--- e2fsck -fn after gofsck -fy:\n" + after
				var reason string
				switch {
				case afterExit != refExit:
					reason = "after repair e2fsck -fn exits " + itoa(afterExit) + " (after e2fsck's own repair " + itoa(refExit) + ")"
				case ourExit != refExit:
					reason = "after repair gofsck -fn exits " + itoa(ourExit) + " (e2fsck -fn " + itoa(refExit) + ")"
				case eexit != gexit || eout != gout:
					reason = "-fy " + firstDifference(eout, gout, eexit, gexit)
				}
				known.record(t, name, reason == "", reason, detail)
			})
		}
	})
	known.finish(t, "corpus repair", names, corpusRepairHeader)
}

const corpusRepairKnownPath = "testdata/corpus_repair_known.txt"

const corpusRepairHeader = `# e2fsprogs test images whose gofsck -fy repair does not yet agree with the
# installed e2fsck -fy's (test/corpus_repair_test.go). One line per image:
# name<TAB>reason. The list may only shrink. Regenerate with
#   go test ./test -run '^TestCorpusRepair$' -update-known
`

func copyTo(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// corpusNames lists the test folders of the corpus.
func corpusNames(t *testing.T, dir string) []string {
	t.Helper()
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
	return names
}

// e2fsckPath is the installed e2fsck.
func e2fsckPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("e2fsck")
	if err != nil {
		t.Fatal(err)
	}
	return p
}
