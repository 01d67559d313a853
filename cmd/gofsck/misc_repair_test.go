package main

import (
	"strconv"
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
		// e2fsck's fix leaves errors behind: the images must then
		// check the same afterwards instead of clean.
		leftover bool
	}{
		// PR_6_ORPHAN_PRESENT_NO_FILE: orphan_present without orphan_file.
		{"orphan-present-no-file",
			testfs.Spec{FSType: "ext4", Size: 8 << 20, Features: "^orphan_file", Populate: populate},
			[]string{"feature orphan_present"}, false},
		// PR_6_ORPHAN_FILE_WITHOUT_JOURNAL: the file is truncated after
		// pass 5 (its blocks freed from the final bitmap) and its inode
		// zeroed but left in use, so e2fsck's own result still has an
		// inode bitmap difference.
		{"orphan-file-without-journal",
			testfs.Spec{FSType: "ext4", Size: 16 << 20, Features: "orphan_file", Populate: populate},
			[]string{"feature ^has_journal"}, true},
		// PR_6_ORPHAN_FILE_CORRUPTED: a hole in the orphan file; the
		// file is truncated and created anew after pass 5. An extent
		// tree's trailing hole is reported as the block after its last
		// extent (BLOCK_FLAG_HOLE is BLOCK_FLAG_APPEND).
		{"orphan-file-hole-end",
			testfs.Spec{FSType: "ext4", Size: 16 << 20, Features: "orphan_file", Populate: populate},
			[]string{"punch <12> 31 31"}, false},
		{"orphan-file-no-extents",
			testfs.Spec{FSType: "ext4", Size: 16 << 20, Features: "orphan_file,^metadata_csum", Populate: populate},
			[]string{"punch <12> 0 31"}, false},
		{"orphan-file-hole-blockmap",
			testfs.Spec{FSType: "ext4", Size: 16 << 20, Features: "orphan_file,^64bit,^extent", Populate: populate},
			[]string{"punch <12> 5 5"}, false},
		{"orphan-file-hole-blockmap-ind",
			testfs.Spec{FSType: "ext4", Size: 16 << 20, Features: "orphan_file,^64bit,^extent,^metadata_csum", Populate: populate},
			[]string{"punch <12> 20 20"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img := testfs.MkImage(t, tc.spec)
			testfs.Debugfs(t, img, tc.damage...)
			gout, gcode := runGofsck("-fn", img)
			eout, ecode := testfs.E2fsck(t, img, "-fn")
			if g, e := norm(gout, img), norm(eout, img); g != e || gcode != ecode {
				t.Errorf("-fn: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, e, g)
			}
			gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
			gout, gcode = runGofsck("-fy", gimg)
			eout, ecode = testfs.E2fsckInPlace(t, eimg, "-fy")
			if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
				t.Errorf("exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, e, g)
			}
			if ecode == 0 {
				t.Errorf("the damage was not noticed:\n%s", eout)
			}
			if tc.leftover {
				gafter, gc := testfs.E2fsck(t, gimg, "-fn")
				eafter, ec := testfs.E2fsck(t, eimg, "-fn")
				if g, e := norm(gafter, gimg), norm(eafter, eimg); g != e || gc != ec || ec == 0 {
					t.Errorf("e2fsck -fn after the repairs: exit %d vs %d:\n--- after e2fsck\n%s--- after gofsck\n%s", gc, ec, e, g)
				}
			} else {
				if out, code := testfs.E2fsck(t, gimg, "-fn"); code != 0 {
					t.Errorf("e2fsck -fn: not clean after repair:\n%s", out)
				}
				if out, code := runGofsck("-fn", gimg); code != 0 {
					t.Errorf("gofsck -fn: not clean after repair:\n%s", out)
				}
			}
			// A fix that clears EXT2_FLAG_SUPER_ONLY has every backup
			// superblock written, with each program's own times.
			bpg, _ := strconv.Atoi(testfs.Superblock(t, gimg)["Blocks per group"])
			if testfs.BlockSize(t, gimg) != 1024 || bpg == 0 {
				t.Fatal("the comparison expects 1 KiB blocks")
			}
			compareAllSupersMasked(t, tc.name, gimg, eimg, bpg*1024)
		})
	}
}
