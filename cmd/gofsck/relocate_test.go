package main

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"gofsck/internal/blockdev"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// TestRelocateRepairMatchesE2fsck damages group metadata locations and the
// resize inode on filesystems where e2fsck cannot fall back on backup
// descriptors (one group, or -p), so that it relocates bitmaps and inode
// tables (with a restart for a table) and re-creates the resize inode.
// gofsck must print what e2fsck prints, exit the same, leave an image
// e2fsck -fn finds clean, and write the same bytes: the new bitmaps, inode
// tables and descriptors, every superblock copy, the resize inode and its
// indirect blocks. Only what each program stamps from its own clock or
// write counter is masked (see maskedImage).
func TestRelocateRepairMatchesE2fsck(t *testing.T) {
	t.Parallel() // independent of the others; runs beside them on the second CPU
	testfs.RequireE2fsprogs(t)
	type damage struct {
		name string
		cmds func(img string) []string
		// modes are the runs compared (default -fy); a damage that needs
		// no question is repaired by -p too.
		modes []string
	}
	fixed := func(cmds ...string) func(string) []string { return func(string) []string { return cmds } }
	// inodeBitmapOnBlockBitmap makes group 0's inode bitmap share the
	// block bitmap's block (PR_1_IB_CONFLICT: relocated with a copy).
	inodeBitmapOnBlockBitmap := func(img string) []string {
		return []string{fmt.Sprintf("set_bg 0 inode_bitmap %d", testfs.GroupBlock(t, img, 0, "Block bitmap")), "set_bg 0 checksum calc"}
	}
	cases := []struct {
		name    string
		spec    testfs.Spec
		damages []damage
	}{
		// Without a journal: losing group 0's inode table loses the
		// journal inode, which e2fsck re-creates before its restart
		// (TestJournalRecreateAfterRelocation covers that).
		{"ext4-4k-1group", testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 4096, Features: "^has_journal", Populate: populate}, []damage{
			{"block-bitmap-zero", fixed("set_bg 0 block_bitmap 0", "set_bg 0 checksum calc"), []string{"-fy", "-fp"}},
			{"inode-bitmap-outside", fixed("set_bg 0 inode_bitmap 99999", "set_bg 0 checksum calc"), nil},
			{"inode-table-outside", fixed("set_bg 0 inode_table 99999", "set_bg 0 checksum calc"), nil},
			{"inode-bitmap-conflict", inodeBitmapOnBlockBitmap, nil},
			{"resize-inode-cleared", fixed("clri <7>"), nil},
		}},
		{"ext2-1k-1group", testfs.Spec{FSType: "ext2", Size: 8 << 20, BlockSize: 1024, Populate: populate}, []damage{
			{"block-bitmap-zero", fixed("set_bg 0 block_bitmap 0"), nil},
			{"inode-table-zero", fixed("set_bg 0 inode_table 0"), nil},
			{"resize-dind-zero", fixed("sif <7> block[DIND] 0"), nil},
		}},
		// Many groups: -fy would take the backup descriptors, -p may not;
		// zero locations need no question.
		{"ext4-4k-flex", testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 4096, ExtraArgs: []string{"-g", "1024"}, Populate: populate}, []damage{
			{"bitmaps-zero", fixed("set_bg 1 block_bitmap 0", "set_bg 1 inode_bitmap 0", "set_bg 1 checksum calc",
				"set_bg 3 block_bitmap 0", "set_bg 3 checksum calc"), []string{"-fp"}},
		}},
		{"ext4-1k-4groups", testfs.Spec{FSType: "ext4", Size: 32 << 20, BlockSize: 1024, Populate: populate}, []damage{
			{"resize-inode-cleared", fixed("clri <7>"), nil},
			{"resize-inode-mode", fixed("sif <7> mode 0x41c0"), nil},
			// Unreadable (checksum): re-created silently over the old
			// double-indirect block once pass 1 has fixed the checksum.
			{"resize-inode-csum", fixed("sif <7> checksum 0x1234"), nil},
		}},
		// The damages of e2fsprogs' f_resize_inode test.
		{"ext2-1k-16groups", testfs.Spec{FSType: "ext2", Size: 16 << 20, BlockSize: 1024, Features: "resize_inode",
			ExtraArgs: []string{"-g", "1024"}, Populate: populate}, []damage{
			{"resize-block2", fixed("sif <7> block[2] 42"), nil},
			{"resize-cleared", fixed("clri <7>"), nil},
			{"resize-bmap524", fixed("sif <7> bmap[524] 57"), nil},
		}},
	}
	for _, tc := range cases {
		base := testfs.MkImage(t, tc.spec)
		for _, d := range tc.damages {
			name := tc.name + "/" + d.name
			img := testfs.CopyImage(t, base)
			testfs.Debugfs(t, img, d.cmds(img)...)
			modes := d.modes
			if modes == nil {
				modes = []string{"-fy"}
			}
			for _, mode := range modes {
				gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
				gout, gcode := runGofsck(mode, gimg)
				eout, ecode := testfs.E2fsckInPlace(t, eimg, mode)
				if g, e := normProg(norm(gout, gimg)), normProg(norm(eout, eimg)); g != e || gcode != ecode {
					t.Errorf("%s %s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", name, mode, gcode, ecode, e, g)
					continue
				}
				if ecode == 0 {
					t.Errorf("%s %s: the damage did not make e2fsck change anything:\n%s", name, mode, eout)
				}
				if out, code := testfs.E2fsck(t, gimg, "-fn"); code != 0 {
					t.Errorf("%s %s: not clean after repair:\n%s", name, mode, out)
				}
				ga, ea := maskedImage(t, gimg), maskedImage(t, eimg)
				if i := firstDiff(ga, ea); i >= 0 {
					t.Errorf("%s %s: images differ first at byte %d", name, mode, i)
				}
			}
		}
	}
}

// firstDiff returns the first offset where a and b differ, -1 if none.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// maskedImage reads a repaired image with the fields each program stamps
// for itself cleared: in every superblock copy s_wtime, s_lastcheck,
// s_kbytes_written, the high bytes of the times and s_checksum; in every
// inode its times and checksum (gofsck's own checks of them are the
// e2fsck -fn run).
func maskedImage(t *testing.T, img string) []byte {
	t.Helper()
	data, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fs.Open(&blockdev.Mem{Data: bytes.Clone(data), ReadOnly: true}, fs.Options{})
	if err != nil {
		t.Fatalf("%s: %v", img, err)
	}
	bs := int64(f.BlockSize)
	for g := uint32(0); g < f.Groups; g++ {
		l := f.Layout(g)
		off := int64(ondisk.SuperblockOffset)
		if g > 0 {
			if l.Super == 0 {
				continue
			}
			off = int64(l.Super) * bs
		}
		testfs.MaskSuperblockStamps(data[off:])
	}
	for ino := uint32(1); ino <= f.InodesCount; ino++ {
		blk, ioff, ok := f.InodeLoc(ino)
		if !ok || (int64(blk)+1)*bs > int64(len(data)) {
			continue
		}
		n := data[int64(blk)*bs+int64(ioff):][:f.InodeSize]
		// i_atime, i_ctime, i_mtime, i_dtime, i_checksum_lo; i_checksum_hi
		// and the *_extra and i_crtime fields of a large inode: both
		// programs stamp the inodes they write (the resize inode, a new
		// root or lost+found, cleared inodes) from their own clocks,
		// which may be a second apart.
		for _, r := range [][2]int{{0x08, 16}, {0x7C, 2}, {0x82, 2}, {0x84, 12}, {0x90, 8}} {
			if r[0]+r[1] <= len(n) {
				clear(n[r[0] : r[0]+r[1]])
			}
		}
	}
	return data
}
