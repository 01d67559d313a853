package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// TestSpeculativePassesMatchSerial runs writable checks with passes 1 and
// 2 speculated in parallel (the default) and with -E no_speculation, on a
// clean image and on faults found in each pass. The transcript, exit code
// and repaired image must be the same both ways and the same as e2fsck's,
// and the JSON report must name the passes kept from the speculation:
// both on a clean image, only those before the first pass with a problem
// otherwise (the failed one ran again serially).
func TestSpeculativePassesMatchSerial(t *testing.T) {
	t.Parallel() // independent of the others; runs beside them on the second CPU
	testfs.RequireE2fsprogs(t)
	populate := func(tr *testfs.Tree) {
		tr.File("a/one", 5000)
		tr.File("a/two", 70000)
		// Pass 2's units are 256 directory blocks: make several.
		for i := range 600 {
			tr.File(fmt.Sprintf("d/%03d/f", i), 100)
		}
		// A linear directory of more than three blocks, which a writable
		// run indexes in pass 3A: a speculating pass-1 worker queues it.
		tr.ManyFiles("big", 300)
	}
	base := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 32 << 20, BlockSize: 1024, Populate: populate})
	// Without huge_file, pass 2 asks to clear i_blocks_hi; in a writable
	// run a declined answer still clears the inode's bad mark, which a
	// failed speculation must not leave behind.
	noHuge := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 32 << 20, BlockSize: 1024, Features: "^huge_file", Populate: populate})
	block := func(path string) string {
		f := strings.Fields(testfs.DebugfsRO(t, base, "bmap "+path+" 0"))
		if len(f) == 0 {
			t.Fatalf("no block for %s", path)
		}
		return f[len(f)-1]
	}
	cases := []struct {
		name string
		cmds []string
		kept []int  // speculated_passes of the -fy run
		want string // in the -fy transcript
		base string // the image damaged (default base)
	}{
		{"clean", nil, []int{1, 2}, "Pass 3A: Optimizing directories", ""},
		{"pass1-size", []string{"sif /a/one size 1"}, []int{2}, "i_size is 1", ""},
		{"pass1-extent-header", []string{"sif /a/one block[0] 7"}, nil, "corrupt extent header", ""},
		// The first extent's start (i_block[5] is ee_start_lo).
		{"pass1b-dup", []string{"sif /a/one block[5] " + block("/a/two")}, []int{2}, "Running additional passes", ""},
		{"pass2-unused-inode", []string{"ln <3000> /d/007/ghost"}, []int{1}, "deleted/unused inode 3000", ""},
		{"pass2-blocks-hi", []string{"sif /a/one blocks_hi 1"}, []int{1}, "i_blocks_hi for inode", noHuge},
		{"pass4-links", []string{"sif /a/two links_count 5"}, []int{1, 2}, "ref count is 5", ""},
		{"pass5-free-block", []string{"freeb " + block("/a/two")}, []int{1, 2}, "Block bitmap differences", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := testfs.CopyImage(t, cmp.Or(c.base, base))
			if len(c.cmds) > 0 {
				testfs.Debugfs(t, img, c.cmds...)
			}
			for _, mode := range []string{"-fy", "-p"} {
				spec, serial, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img), testfs.CopyImage(t, img)
				report := filepath.Join(t.TempDir(), "r.json")
				sout, scode := runGofsck(mode, "-E", "json="+report, spec)
				lout, lcode := runGofsck(mode, "-E", "no_speculation", serial)
				eout, ecode := testfs.E2fsckInPlace(t, eimg, mode)
				s, l, e := norm(sout, spec), norm(lout, serial), norm(eout, eimg)
				if s != l || scode != lcode {
					t.Errorf("%s: speculative exit %d, serial %d; output differs:\n--- serial\n%s--- speculative\n%s", mode, scode, lcode, l, s)
				}
				if s != e || scode != ecode {
					t.Errorf("%s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", mode, scode, ecode, e, s)
				}
				if i := firstDiff(maskedImage(t, spec), maskedImage(t, serial)); i >= 0 {
					t.Errorf("%s: speculative and serial images differ first at byte %d", mode, i)
				}
				if i := firstDiff(maskedImage(t, spec), maskedImage(t, eimg)); i >= 0 {
					t.Errorf("%s: image differs from e2fsck's first at byte %d", mode, i)
				}
				if mode != "-fy" {
					continue
				}
				if !strings.Contains(sout, c.want) {
					t.Errorf("%s: no %q in:\n%s", mode, c.want, sout)
				}
				var r struct {
					Summary struct {
						Speculated []int `json:"speculated_passes"`
					} `json:"summary"`
				}
				data, err := os.ReadFile(report)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(data, &r); err != nil {
					t.Fatalf("%v\n%s", err, data)
				}
				if !slices.Equal(r.Summary.Speculated, c.kept) {
					t.Errorf("%s: passes kept from the speculation %v, want %v\n%s", mode, r.Summary.Speculated, c.kept, sout)
				}
			}
		})
	}
}
