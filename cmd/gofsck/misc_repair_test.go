package main

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"
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
		// Inodes the fix writes anew: their times are each program's
		// clock.
		newInodes []string
	}{
		// PR_6_ORPHAN_PRESENT_NO_FILE: orphan_present without orphan_file.
		{"orphan-present-no-file",
			testfs.Spec{FSType: "ext4", Size: 8 << 20, Features: "^orphan_file", Populate: populate},
			[]string{"feature orphan_present"}, false, nil},
		// PR_6_ORPHAN_FILE_WITHOUT_JOURNAL: the file is truncated after
		// pass 5 (its blocks freed from the final bitmap) and its inode
		// zeroed but left in use, so e2fsck's own result still has an
		// inode bitmap difference.
		{"orphan-file-without-journal",
			testfs.Spec{FSType: "ext4", Size: 16 << 20, Features: "orphan_file", Populate: populate},
			[]string{"feature ^has_journal"}, true, nil},
		// PR_6_ORPHAN_FILE_CORRUPTED: a hole in the orphan file; the
		// file is truncated and created anew after pass 5. An extent
		// tree's trailing hole is reported as the block after its last
		// extent (BLOCK_FLAG_HOLE is BLOCK_FLAG_APPEND).
		{"orphan-file-hole-end",
			testfs.Spec{FSType: "ext4", Size: 16 << 20, Features: "orphan_file", Populate: populate},
			[]string{"punch <12> 31 31"}, false, []string{"<12>"}},
		{"orphan-file-no-extents",
			testfs.Spec{FSType: "ext4", Size: 16 << 20, Features: "orphan_file,^metadata_csum", Populate: populate},
			[]string{"punch <12> 0 31"}, false, []string{"<12>"}},
		{"orphan-file-hole-blockmap",
			testfs.Spec{FSType: "ext4", Size: 16 << 20, Features: "orphan_file,^64bit,^extent", Populate: populate},
			[]string{"punch <12> 5 5"}, false, []string{"<12>"}},
		{"orphan-file-hole-blockmap-ind",
			testfs.Spec{FSType: "ext4", Size: 16 << 20, Features: "orphan_file,^64bit,^extent,^metadata_csum", Populate: populate},
			[]string{"punch <12> 20 20"}, false, []string{"<12>"}},
		// PR_0_CLEAR_TESTFS_FLAG: the test_fs flag is cleared when the
		// running kernel has ext4 (both programs ask the same kernel).
		{"test-fs-flag",
			testfs.Spec{FSType: "ext4", Size: 8 << 20, Populate: populate},
			[]string{"ssv flags 4"}, false, nil},
		// PR_3_LPF_INLINE_DATA: /lost+found is an inline directory. It
		// is unlinked, a new one is made, and the check restarts with
		// the bitmaps written; the old one is then reconnected into it.
		{"lpf-inline-data",
			testfs.Spec{FSType: "ext4", Size: 8 << 20, Features: "inline_data", Populate: populate},
			[]string{"rmdir lost+found", "mkdir lost+found"}, false, []string{"/lost+found"}},
		// The same met while reconnecting a directory: pass 3 stops at
		// the next directory and the check restarts.
		{"lpf-inline-data-reconnect",
			testfs.Spec{FSType: "ext4", Size: 8 << 20, Features: "inline_data", Populate: populate},
			[]string{"rmdir lost+found", "mkdir lost+found", "mkdir x", "mkdir y", "mkdir x/z", "unlink x"},
			false, []string{"/lost+found"}},
		// PR_0_MOVE_JOURNAL: the journal is an ordinary file in the root
		// (what tune2fs -j on a mounted ext3 filesystem made): moved to
		// inode 8, the name unlinked, the old inode freed.
		{"move-journal-ext3",
			testfs.Spec{FSType: "ext3", Size: 8 << 20, InodeSize: 128, Populate: populate},
			visibleJournal(".journal", 1), false, []string{"<500>"}},
		{"move-journal-csum",
			testfs.Spec{FSType: "ext4", Size: 8 << 20, Populate: populate},
			visibleJournal("journal.dat", 1), false, []string{"<500>"}},
		// Not moved: two links, or a name e2fsck does not look for.
		{"move-journal-two-links",
			testfs.Spec{FSType: "ext4", Size: 8 << 20, Populate: populate},
			append(visibleJournal("journal", 2), "ln <500> a/j2"), false, nil},
		{"move-journal-other-name",
			testfs.Spec{FSType: "ext3", Size: 8 << 20, Populate: populate},
			visibleJournal("jnl", 1), false, nil},
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
			compareMiscImages(t, gimg, eimg, tc.newInodes)
		})
	}
}

// visibleJournal are the debugfs commands that turn the hidden journal
// (inode 8) into the file /name, inode 500, with links links: the old
// inode 8 is zeroed but stays marked in use, as reserved inodes are.
// seti leaves the free inode counts for pass 5.
func visibleJournal(name string, links int) []string {
	return []string{"copy_inode <8> <500>", "seti <500>", "ln <500> " + name,
		"sif <500> links_count " + strconv.Itoa(links), "ssv journal_inum 500", "clri <8>"}
}

// compareMiscImages requires two repaired images (1 KiB blocks) to be
// equal except for what each program stamps for itself: the times,
// s_kbytes_written and checksum of every superblock copy (a fix that
// clears EXT2_FLAG_SUPER_ONLY writes the backups) and the times and
// checksum of the inodes named (as debugfs names them) that a fix wrote
// anew or deleted.
func compareMiscImages(t *testing.T, a, b string, inodes []string) {
	t.Helper()
	bpg, _ := strconv.Atoi(testfs.Superblock(t, a)["Blocks per group"])
	if testfs.BlockSize(t, a) != 1024 || bpg == 0 {
		t.Fatal("the comparison expects 1 KiB blocks")
	}
	da, db := readMasked(t, a, a, b)
	for g := 1024 + bpg*1024; g+1024 <= len(da); g += bpg * 1024 {
		if binary.LittleEndian.Uint16(da[g+0x38:]) != 0xEF53 {
			continue
		}
		testfs.MaskSuperblockStamps(da[g:])
		testfs.MaskSuperblockStamps(db[g:])
	}
	for _, ino := range inodes {
		off := int(testfs.InodeOffset(t, a, ino))
		// atime, ctime, mtime, dtime; the checksum halves; the extra
		// times.
		for _, r := range [][2]int{{0x08, 16}, {0x7C, 2}, {0x82, 2}, {0x84, 20}} {
			clear(da[off+r[0] : off+r[0]+r[1]])
			clear(db[off+r[0] : off+r[0]+r[1]])
		}
	}
	for i := 0; i < len(da); i += 1024 {
		if !bytes.Equal(da[i:i+1024], db[i:i+1024]) {
			t.Errorf("images differ first in block %d", i/1024)
			return
		}
	}
}

// TestMoveJournalPreen: preen moves a visible journal too, and since the
// filesystem is clean the check is then skipped; the superblock's free
// inode count is set from the group counts as they were before the move
// (e2fsck's ctx->free_inodes), so the old journal inode still counts.
func TestMoveJournalPreen(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext3", Size: 8 << 20, Populate: populate})
	testfs.Debugfs(t, img, visibleJournal(".journal", 1)...)
	gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
	gout, gcode := runGofsck("-p", gimg)
	eout, ecode := testfs.E2fsckInPlace(t, eimg, "-p")
	if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
		t.Errorf("exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, e, g)
	}
	if !strings.Contains(eout, "Moving journal from /.journal to hidden inode.") || !strings.Contains(eout, "clean,") {
		t.Fatalf("e2fsck -p did not move the journal and skip the check:\n%s", eout)
	}
	compareMiscImages(t, gimg, eimg, []string{"<500>"})
}
