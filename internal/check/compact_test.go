package check

import (
	"fmt"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// TestCompactingKeepsOutput: compacting the maps after every unit, in
// pass 1 with the workers paused and in pass 2 beside them, changes no
// finding. The image puts 32 groups in one bitmap page and thousands of
// small files in them, so the workers claim blocks of a dense page while
// the replay compacts it; CI runs this under the race detector, which
// reports the claims of a worker that the pause did not stop.
func TestCompactingKeepsOutput(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{
		Size: 32 << 20, BlockSize: 1024, FSType: "ext4", Features: "^extent,^64bit", ExtraArgs: []string{"-g", "1024", "-N", "8192"},
		Populate: func(tr *testfs.Tree) {
			for i := 0; i < 3000; i++ {
				tr.File(fmt.Sprintf("d%d/f%04d", i%3, i), int64(1+i%3)<<10)
			}
		},
	})
	// Damage for passes 1, 1B-1D, 2 and 5: a block claimed twice, a
	// cleared inode, a freed block.
	testfs.Debugfs(t, img, "sif /d0/f0300 block[0] 20000", "sif /d1/f0301 block[0] 20000", "clri /d2/f0302", "freeb 9000")
	want := runCheckOpts(t, img, Options{ReadOnly: true, Workers: 1})
	for _, s := range []string{"Multiply-claimed", "deleted/unused inode", "Block bitmap differences"} {
		if !strings.Contains(want, s) {
			t.Errorf("the damage does not show (%q):\n%s", s, want)
		}
	}
	for _, w := range []int{1, 4} {
		if got := runCheckOpts(t, img, Options{ReadOnly: true, Workers: w, compactAlways: true}); got != want {
			t.Errorf("workers=%d, compacting after every unit:\n%s\nwant:\n%s", w, got, want)
		}
	}
}
