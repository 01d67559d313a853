package main

import (
	"fmt"
	"regexp"
	"testing"

	"gofsck/internal/testfs"
)

// TestHtreeBadRootStickyDir: PR_2_HTREE_BAD_ROOT prints check_dir_block's
// cd->pctx.dir, which only the end of an htree directory's block sets. Two
// htree directories, /a and /z, with 400 one-block directories between
// their blocks, so that /z's root (its dx_root_info zapped) falls in a
// later pass-2 unit than the last htree block checked before it: a worker
// must leave the number to the replay. The output must be e2fsck's with 1
// and 4 workers.
func TestHtreeBadRootStickyDir(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	spec := testfs.Spec{FSType: "ext4", Size: 32 << 20, BlockSize: 1024, Inodes: 4096, OptimizeDirs: true,
		Populate: func(tr *testfs.Tree) {
			for i := range 200 {
				tr.File(fmt.Sprintf("a/name-number-%03d-padding-padding-padding", i), 0)
			}
			for i := range 400 {
				tr.Dir(fmt.Sprintf("m/d%03d", i))
			}
			for i := range 200 {
				tr.File(fmt.Sprintf("z/name-number-%03d-padding-padding-padding", i), 0)
			}
		}}
	img := testfs.MkImage(t, spec)
	testfs.Debugfs(t, img, "zap_block -f /z -o 24 -l 8 -p 0x5a 0")
	eout, ecode := testfs.E2fsck(t, img, "-fn")
	// The number printed is the last htree directory checked before /z's
	// root, never 0 here: else the image no longer tests the carry-over.
	m := regexp.MustCompile(`HTREE directory inode (\d+): root node is invalid`).FindStringSubmatch(eout)
	if m == nil || m[1] == "0" {
		t.Fatalf("e2fsck -fn does not print a carried-over directory number:\n%s", eout)
	}
	for _, threads := range []string{"threads=1", "threads=4"} {
		gout, gcode := runGofsck("-fn", "-E", threads, img)
		if g, e := norm(gout, img), norm(eout, img); g != e || gcode != ecode {
			t.Errorf("%s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", threads, gcode, ecode, e, g)
		}
	}
}
