package check

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gofsck/internal/blockdev"
	"gofsck/internal/fs"
	"gofsck/internal/problem"
	"gofsck/internal/testfs"
)

// runCheck runs a full read-only check of img with the given worker count
// and returns what the reporter printed.
func runCheck(t *testing.T, img string, workers int) string {
	t.Helper()
	return runCheckOpts(t, img, Options{ReadOnly: true, Workers: workers})
}

// runCheckOpts is runCheck with the checker's options given.
func runCheckOpts(t *testing.T, img string, opt Options) string {
	t.Helper()
	dev, err := blockdev.Open(img, true, false)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	f, err := fs.Open(dev, fs.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", img, err)
	}
	var out bytes.Buffer
	ropt := problem.Options{Mode: problem.ModeNo, Device: "test"}
	namer := New(f, problem.NewReporter(&bytes.Buffer{}, ropt), Options{})
	ropt.Namer = namer
	rep := problem.NewReporter(&out, ropt)
	c := New(f, rep, opt)
	c.CheckSuper(uint64(dev.Size()) >> f.BlockBits)
	rep.MarkValid()
	if err := c.Run(context.Background()); err != nil && err != ErrAborted {
		t.Fatalf("%s: %v", img, err)
	}
	return out.String()
}

// TestWorkersGiveSameOutput checks the engine's promise: the findings and
// their order do not depend on the number of workers. It uses damaged
// images with many groups and several kinds of problem in pass 1 and 2.
func TestWorkersGiveSameOutput(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	spec := testfs.Spec{
		Size: 16 << 20, BlockSize: 1024, FSType: "ext4", OptimizeDirs: true,
		Populate: func(tr *testfs.Tree) {
			tr.ManyFiles("many", 600)
			for i := 0; i < 20; i++ {
				tr.Sparse(filepath.Join("sparse", "f"+string(rune('a'+i))), 4<<20, 4096, 65536)
			}
		},
	}
	img := testfs.MkImage(t, spec)
	// Damage spread over groups: wiped inodes, wrong sizes and link
	// counts, blocks claimed twice, a zapped directory block.
	testfs.Debugfs(t, img,
		"clri <20>", "clri <400>",
		"sif /sparse/fa size 1", "sif <300> links_count 7",
		"sif /sparse/fa block[2] 3000", "sif /sparse/fb block[2] 3000",
		"freeb 5000", "setb 9000",
	)
	one := runCheck(t, img, 1)
	// The damage must really reach several passes, or the comparison
	// proves little.
	for _, want := range []string{"deleted/unused inode", "i_size is 1", "ref count is 7", "Block bitmap differences", "Inode bitmap differences"} {
		if !strings.Contains(one, want) {
			t.Errorf("expected %q in the check output:\n%s", want, one)
		}
	}
	for _, n := range []int{2, 3, 8} {
		if got := runCheck(t, img, n); got != one {
			t.Errorf("workers=%d output differs from workers=1:\n--- 1\n%s\n--- %d\n%s", n, one, n, got)
		}
	}
	// Compacting the maps after every unit (in pass 1 with the workers
	// paused, in pass 2 beside them) changes no finding; CI runs this
	// under the race detector.
	if got := runCheckOpts(t, img, Options{ReadOnly: true, Workers: 4, compactAlways: true}); got != one {
		t.Errorf("compacting after every unit changed the output:\n--- 1\n%s\n--- compacting\n%s", one, got)
	}
	// The read-ahead depth changes only when blocks are read.
	for _, pf := range []int{-1, 1, 64} {
		if got := runCheckOpts(t, img, Options{ReadOnly: true, Workers: 4, PrefetchUnits: pf}); got != one {
			t.Errorf("prefetch=%d output differs:\n--- 1\n%s\n--- prefetch\n%s", pf, one, got)
		}
	}
	// And on the e2fsprogs corpus images.
	root, err := testfs.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "..", "shared")
	if d := os.Getenv("GOFSCK_SHARED"); d != "" {
		dir = d
	}
	for _, name := range []string{"f_dup", "f_dup2", "f_lotsbad", "f_h_badnode", "f_ea_checks", "f_baddir", "f_extents", "f_bbinode"} {
		src := filepath.Join(dir, "e2fsprogs-tests", name, "image.gz")
		if _, err := os.Stat(src); err != nil {
			continue
		}
		img := filepath.Join(t.TempDir(), name+".img")
		testfs.Decompress(t, src, img)
		a, b := runCheck(t, img, 1), runCheck(t, img, 4)
		if a != b {
			t.Errorf("%s: workers=4 output differs from workers=1:\n--- 1\n%s\n--- 4\n%s", name, a, b)
		}
	}
}
