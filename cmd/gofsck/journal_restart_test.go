package main

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// TestJournalRestartMatchesE2fsck: the journal is dropped (inode 8 and
// its backup in the superblock cleared) and a pass asks for a restart.
// e2fsck re-creates the journal before it restarts, in the blocks pass 1
// found free (the old journal's among them), counting them off the group
// and superblock free counts it then finds wrong after the restart.
// gofsck -fy must print the same, exit the same, leave a clean image and
// write the same bytes as e2fsck -fy, except what each program stamps
// with its own clock: the superblock copies' times, s_kbytes_written and
// checksum, the new journal inode's times and a cleared file's dtime (and
// those inodes' checksums).
func TestJournalRestartMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	// Pass 3 stamps the lost+found it re-creates with the run's time.
	fixClock(t)
	drop := []string{"clri <8>", "ssv jnl_backup_type 0"}
	// Pass 1: a file with twelve illegal block numbers (block-mapped also
	// on an extent filesystem) is cleared part way through its blocks.
	illegal := func(t *testing.T, img string) []string {
		d := append(slices.Clone(drop), "sif a/two flags 0")
		for i := range 12 {
			d = append(d, fmt.Sprintf("sif a/two block[%d] 9999999", i))
		}
		return d
	}
	// Pass 2: an entry references an inode in group 0's unused area
	// (PR_2_INOREF_IN_UNUSED restarts after pass 2).
	unusedArea := func(t *testing.T, img string) []string {
		ipg, _ := strconv.Atoi(testfs.Superblock(t, img)["Inodes per group"])
		unused := ipg - int(testfs.Ino(t, img, "a/two")) + 1
		return append(slices.Clone(drop), fmt.Sprintf("set_bg 0 free_inodes_count %d", unused),
			fmt.Sprintf("set_bg 0 itable_unused %d", unused), "set_bg 0 checksum calc")
	}
	// Pass 3: /lost+found is an inline directory; a new one is made and
	// the check restarts.
	inlineLPF := func(t *testing.T, img string) []string {
		return append(slices.Clone(drop), "rmdir lost+found", "mkdir lost+found")
	}
	for _, tc := range []struct {
		name   string
		spec   testfs.Spec
		damage func(t *testing.T, img string) []string
		// cleared names the file pass 1 clears (its dtime is stamped).
		cleared string
	}{
		// Block-mapped journal, 1 KiB blocks.
		{"pass1-ext3", testfs.Spec{FSType: "ext3", Size: 16 << 20, BlockSize: 1024, Journal: "size=1", Populate: populate}, illegal, "a/two"},
		// Extents from the midpoint group; a group's free count wraps
		// below zero.
		{"pass1-ext4", testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 4096, ExtraArgs: []string{"-g", "1024"}, Populate: populate}, illegal, "a/two"},
		{"pass2-ext4", testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 4096, ExtraArgs: []string{"-g", "1024"}, Populate: populate}, unusedArea, ""},
		{"pass3-inline", testfs.Spec{FSType: "ext4", Size: 8 << 20, Features: "inline_data", Populate: populate}, inlineLPF, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := testfs.MkImage(t, tc.spec)
			stamped := []string{"<8>"}
			if tc.cleared != "" {
				stamped = append(stamped, "<"+strconv.Itoa(int(testfs.Ino(t, img, tc.cleared)))+">")
			}
			testfs.Debugfs(t, img, tc.damage(t, img)...)
			gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
			gout, gcode := runGofsck("-fy", gimg)
			eout, ecode := testfs.E2fsckInPlace(t, eimg, "-fy")
			if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
				t.Errorf("exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, e, g)
			}
			if !strings.Contains(eout, "regenerated ***\nRestarting e2fsck") {
				t.Fatalf("the damage does not re-create the journal before a restart:\n%s", eout)
			}
			if out, code := testfs.E2fsck(t, gimg, "-fn"); code != 0 {
				t.Errorf("e2fsck -fn: not clean after repair:\n%s", out)
			}
			compareStampedImages(t, gimg, eimg, stamped)
		})
	}
}

// compareStampedImages requires two repaired images to be equal except
// for the times, s_kbytes_written and checksum of every superblock copy
// and the times (dtime included) and checksum of the inodes named.
func compareStampedImages(t *testing.T, a, b string, inodes []string) {
	t.Helper()
	da, db := mustRead(t, a), mustRead(t, b)
	if len(da) != len(db) {
		t.Fatal("sizes differ")
	}
	sb := da[1024:2048]
	first := int(binary.LittleEndian.Uint32(sb[0x14:]))
	bpg := int(binary.LittleEndian.Uint32(sb[0x20:]))
	bs := 1024 << binary.LittleEndian.Uint32(sb[0x18:])
	for g := 0; ; g++ {
		off := (first + g*bpg) * bs
		if g == 0 {
			off = 1024
		}
		if off+1024 > len(da) {
			break
		}
		if binary.LittleEndian.Uint16(da[off+0x38:]) != 0xEF53 {
			continue
		}
		testfs.MaskSuperblockStamps(da[off:])
		testfs.MaskSuperblockStamps(db[off:])
	}
	isize := int(binary.LittleEndian.Uint16(sb[0x58:]))
	for _, ino := range inodes {
		off := int(testfs.InodeOffset(t, a, ino))
		// atime, ctime, mtime, dtime; the checksum halves; the extra times.
		for _, r := range [][2]int{{0x08, 16}, {0x7C, 2}, {0x82, 2}, {0x84, 20}} {
			if r[0]+r[1] > isize {
				continue
			}
			clear(da[off+r[0] : off+r[0]+r[1]])
			clear(db[off+r[0] : off+r[0]+r[1]])
		}
	}
	if i := firstDiff(da, db); i >= 0 {
		t.Errorf("images differ first at byte %d (block %d)", i, i/bs)
	}
}
