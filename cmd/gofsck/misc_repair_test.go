package main

import (
	"testing"

	"gofsck/internal/testfs"
)

// TestMiscRepairMatchesE2fsck builds damage whose fix is one of the
// assorted "yes" paths of internal/check/misc_repair.go and requires
// gofsck -fy to print what e2fsck -fy prints, exit the same, leave an
// image both checkers find clean, and write the same bytes (except the
// superblock fields each program stamps for itself).
func TestMiscRepairMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	cases := []struct {
		name   string
		spec   testfs.Spec
		damage []string
	}{
		// PR_6_ORPHAN_PRESENT_NO_FILE: orphan_present without orphan_file.
		{"orphan-present-no-file",
			testfs.Spec{FSType: "ext4", Size: 8 << 20, Features: "^orphan_file", Populate: populate},
			[]string{"feature orphan_present"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img := testfs.MkImage(t, tc.spec)
			testfs.Debugfs(t, img, tc.damage...)
			gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
			gout, gcode := runGofsck("-fy", gimg)
			eout, ecode := testfs.E2fsckInPlace(t, eimg, "-fy")
			if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
				t.Errorf("exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, e, g)
			}
			if ecode == 0 {
				t.Errorf("the damage was not noticed:\n%s", eout)
			}
			if out, code := testfs.E2fsck(t, gimg, "-fn"); code != 0 {
				t.Errorf("e2fsck -fn: not clean after repair:\n%s", out)
			}
			if out, code := runGofsck("-fn", gimg); code != 0 {
				t.Errorf("gofsck -fn: not clean after repair:\n%s", out)
			}
			compareImages(t, tc.name, gimg, eimg)
		})
	}
}
