package main

import (
	"bytes"
	"strconv"
	"testing"

	"gofsck/internal/testfs"
)

// TestFirstMetaBGTooBig: s_first_meta_bg beyond the descriptor blocks in
// every superblock copy, so that e2fsck opens the filesystem despite the
// errors and asks PR_0_FIRST_META_BG_TOO_BIG. Under -fn both programs
// must print the same; under -fy both must clear meta_bg and
// first_meta_bg, leave the same image (but for the clock stamps) and a filesystem e2fsck finds clean.
func TestFirstMetaBGTooBig(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 1024,
		Features: "meta_bg,^resize_inode,^metadata_csum", Populate: populate})
	sb := testfs.Superblock(t, img)
	bpg, _ := strconv.ParseInt(sb["Blocks per group"], 10, 64)
	blocks, _ := strconv.ParseInt(sb["Block count"], 10, 64)
	if bpg == 0 || blocks <= bpg {
		t.Fatalf("want two groups or more: %v", sb)
	}
	// Group 0's superblock at byte 1024 and group 1's backup (sparse_super
	// keeps one in group 1) at block bpg+1.
	for _, off := range []int64{1024, (bpg + 1) * 1024} {
		testfs.WriteAt(t, img, off+0x104, testfs.Le32(5))
	}
	gout, gcode := runGofsck("-fn", img)
	eout, ecode := testfs.E2fsck(t, img, "-fn")
	if g, e := norm(gout, img), norm(eout, img); g != e || gcode != ecode {
		t.Fatalf("-fn: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, e, g)
	}
	if !bytes.Contains([]byte(eout), []byte("First_meta_bg is too big")) {
		t.Fatalf("e2fsck did not report first_meta_bg:\n%s", eout)
	}
	gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
	gout, gcode = runGofsck("-fy", gimg)
	eout, ecode = testfs.E2fsckInPlace(t, eimg, "-fy")
	if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
		t.Fatalf("-fy: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, e, g)
	}
	if out, code := testfs.E2fsck(t, gimg, "-fn"); code != 0 {
		t.Errorf("e2fsck -fn after gofsck -fy: exit %d\n%s", code, out)
	}
	if f := testfs.Superblock(t, gimg)["Filesystem features"]; bytes.Contains([]byte(f), []byte("meta_bg")) {
		t.Errorf("meta_bg still set: %s", f)
	}
	ga := maskedImage(t, gimg)
	if i := firstDiff(ga, maskedImage(t, eimg)); i >= 0 {
		t.Errorf("images differ first at byte %d (block %d)", i, i/1024)
	}
}
