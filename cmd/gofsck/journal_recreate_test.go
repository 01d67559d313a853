package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gofsck/internal/blockdev"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// TestJournalRecreateBigalloc: a dropped journal is re-created on
// bigalloc filesystems as the library does it, at the end of the run or
// before a restart: whole clusters from the midpoint goal, extents of
// whole clusters, i_blocks in sectors, the cluster bitmap, the group's
// free count in clusters and the superblock's in blocks. gofsck -fy must
// print what e2fsck -fy prints, exit the same, leave a clean image and
// write the same bytes except what each program stamps from its clock.
func TestJournalRecreateBigalloc(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	drop := []string{"clri <8>", "ssv jnl_backup_type 0"}
	// Pass 2 restarts: an entry references an inode in group 0's unused
	// area (PR_2_INOREF_IN_UNUSED).
	unusedArea := func(t *testing.T, img string) []string {
		ipg, _ := strconv.Atoi(testfs.Superblock(t, img)["Inodes per group"])
		unused := ipg - int(testfs.Ino(t, img, "a/two")) + 1
		return append(slices.Clone(drop), fmt.Sprintf("set_bg 0 free_inodes_count %d", unused),
			fmt.Sprintf("set_bg 0 itable_unused %d", unused), "set_bg 0 checksum calc")
	}
	dropOnly := func(*testing.T, string) []string { return drop }
	for _, tc := range []struct {
		name    string
		spec    testfs.Spec
		damage  func(t *testing.T, img string) []string
		restart bool
	}{
		{"end-4k-16k", testfs.Spec{FSType: "ext4", Size: 32 << 20, BlockSize: 4096, Features: "bigalloc", ClusterSize: 16384, Populate: populate}, dropOnly, false},
		// Two groups; the journal (4096 blocks, 1024 clusters) starts in
		// the second.
		{"end-1k-4k", testfs.Spec{FSType: "ext4", Size: 64 << 20, BlockSize: 1024, Features: "bigalloc", ClusterSize: 4096, Populate: populate}, dropOnly, false},
		// Without metadata_csum (uninit_bg descriptors).
		{"end-nocsum", testfs.Spec{FSType: "ext4", Size: 32 << 20, BlockSize: 4096, Features: "bigalloc,^metadata_csum,uninit_bg", ClusterSize: 65536, Populate: populate}, dropOnly, false},
		{"restart-pass2", testfs.Spec{FSType: "ext4", Size: 32 << 20, BlockSize: 4096, Features: "bigalloc", ClusterSize: 16384, Populate: populate}, unusedArea, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := testfs.MkImage(t, tc.spec)
			testfs.Debugfs(t, img, tc.damage(t, img)...)
			compareRecreated(t, img, tc.restart, []string{"<8>"})
		})
	}
}

// compareRecreated repairs copies of img with gofsck -fy and e2fsck -fy
// and compares transcripts, exit codes and the images (the inodes named
// and the superblock copies with their stamps masked). e2fsck must
// re-create the journal, before a restart when restart is set.
func compareRecreated(t *testing.T, img string, restart bool, stamped []string) {
	t.Helper()
	gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
	gout, gcode := runGofsck("-fy", gimg)
	eout, ecode := testfs.E2fsckInPlace(t, eimg, "-fy")
	if g, e := normProg(norm(gout, gimg)), normProg(norm(eout, eimg)); g != e || gcode != ecode {
		t.Fatalf("exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, e, g)
	}
	want := "*** journal has been regenerated ***\n"
	if restart {
		want += "Restarting e2fsck"
	}
	if !strings.Contains(eout, want) {
		t.Fatalf("the damage does not make e2fsck re-create the journal (restart %v):\n%s", restart, eout)
	}
	if out, code := testfs.E2fsck(t, gimg, "-fn"); code != 0 {
		t.Errorf("e2fsck -fn: not clean after repair:\n%s", out)
	}
	compareStampedImages(t, gimg, eimg, stamped)
}

// TestJournalRecreateAfterRelocation: the journal is dropped and group
// metadata is relocated at the end of pass 1 (e2fsck's
// handle_fs_bad_blocks, which makes the bitmaps valid again), so the
// journal is re-created: at the end of the run, or before the restart a
// new inode table asks for (where losing the table lost the journal
// inode). gofsck must agree with e2fsck on the transcript, the exit code
// and every byte but the stamps (maskedImage).
func TestJournalRecreateAfterRelocation(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	drop := []string{"clri <8>", "ssv jnl_backup_type 0"}
	with := func(cmds ...string) func(string) []string {
		return func(string) []string { return append(slices.Clone(drop), cmds...) }
	}
	alone := func(cmds ...string) func(string) []string { return func(string) []string { return cmds } }
	ext4 := testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 4096, Populate: populate}
	flex := testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 4096, ExtraArgs: []string{"-g", "1024"}, Populate: populate}
	ext3 := testfs.Spec{FSType: "ext3", Size: 8 << 20, BlockSize: 1024, Journal: "size=1", Populate: populate}
	for _, tc := range []struct {
		name    string
		spec    testfs.Spec
		damage  func(img string) []string
		modes   []string
		restart bool
	}{
		{"ext4-block-bitmap-zero", ext4, with("set_bg 0 block_bitmap 0", "set_bg 0 checksum calc"), []string{"-fy", "-fp"}, false},
		{"ext4-inode-bitmap-outside", ext4, with("set_bg 0 inode_bitmap 99999", "set_bg 0 checksum calc"), []string{"-fy"}, false},
		{"ext4-inode-bitmap-conflict", ext4, func(img string) []string {
			return append(slices.Clone(drop), fmt.Sprintf("set_bg 0 inode_bitmap %d", testfs.GroupBlock(t, img, 0, "Block bitmap")), "set_bg 0 checksum calc")
		}, []string{"-fy"}, false},
		// The inode table moves: the journal inode is lost with it and
		// re-created before the restart.
		{"ext4-inode-table-outside", ext4, alone("set_bg 0 inode_table 99999", "set_bg 0 checksum calc"), []string{"-fy"}, true},
		{"ext4-inode-table-zero", ext4, alone("set_bg 0 inode_table 0", "set_bg 0 checksum calc"), []string{"-fy"}, true},
		// Many groups: -fy would take the backup descriptors, -p may not.
		{"flex-bitmaps-zero", flex, with("set_bg 1 block_bitmap 0", "set_bg 1 inode_bitmap 0", "set_bg 1 checksum calc",
			"set_bg 3 block_bitmap 0", "set_bg 3 checksum calc"), []string{"-fp"}, false},
		{"ext3-block-bitmap-zero", ext3, with("set_bg 0 block_bitmap 0"), []string{"-fy"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := testfs.MkImage(t, tc.spec)
			testfs.Debugfs(t, img, tc.damage(img)...)
			for _, mode := range tc.modes {
				gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
				gout, gcode := runGofsck(mode, gimg)
				eout, ecode := testfs.E2fsckInPlace(t, eimg, mode)
				if g, e := normProg(norm(gout, gimg)), normProg(norm(eout, eimg)); g != e || gcode != ecode {
					t.Errorf("%s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", mode, gcode, ecode, e, g)
					continue
				}
				want := "*** journal has been regenerated ***\n"
				if tc.restart {
					want += "Restarting e2fsck"
				}
				if !strings.Contains(eout, "Relocating group") || !strings.Contains(eout, want) {
					t.Fatalf("%s: e2fsck does not relocate and re-create the journal (restart %v):\n%s", mode, tc.restart, eout)
				}
				if out, code := testfs.E2fsck(t, gimg, "-fn"); code != 0 {
					t.Errorf("%s: e2fsck -fn: not clean after repair:\n%s", mode, out)
				}
				if i := firstDiff(maskedImage(t, gimg), maskedImage(t, eimg)); i >= 0 {
					t.Errorf("%s: images differ first at byte %d", mode, i)
				}
			}
		})
	}
}

// TestInlineDirSizeWithEAs: an inline directory whose system.data size
// is not a multiple of 4 (PR_2_BAD_INLINE_DIR_SIZE) while its other
// attributes also use an EA block or an EA inode. The library rewrites
// every attribute (ext2fs_xattrs_write): the in-inode area and the EA
// block, entries hashed, values in EA inodes referenced with their hash.
// gofsck -fy must agree with e2fsck -fy on the transcript, the exit and
// every byte but the superblock stamps.
func TestInlineDirSizeWithEAs(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	dir := t.TempDir()
	big := dir + "/big"
	huge := dir + "/huge"
	if err := os.WriteFile(big, []byte(strings.Repeat("v", 300)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(huge, []byte(strings.Repeat("w", 6000)), 0o644); err != nil {
		t.Fatal(err)
	}
	block := []string{"ea_set -f " + big + " inldir user.big", "ea_set inldir user.small abc"}
	eaInode := []string{"ea_set -f " + huge + " inldir user.huge", "ea_set inldir user.small abc"}
	both := append(slices.Clone(eaInode), "ea_set -f "+big+" inldir user.big")
	for _, tc := range []struct {
		name     string
		features string
		eas      []string
		data     string
	}{
		{"block-65", "inline_data", block, "xxxxx"},
		{"block-73", "inline_data", block, "xxxxxxxxxxxxx"},
		{"eainode-65", "inline_data,ea_inode", eaInode, "xxxxx"},
		{"eainode-73", "inline_data,ea_inode", eaInode, "xxxxxxxxxxxxx"},
		{"both-73", "inline_data,ea_inode", both, "xxxxxxxxxxxxx"},
		// The EA block is shared with another directory: the library
		// copies it to a new block, which pass 5 then finds missing from
		// the bitmap.
		{"shared-65", "inline_data", nil, "xxxxx"},
		{"shared-73-nocsum", "inline_data,^metadata_csum", nil, "xxxxxxxxxxxxx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 4096, Features: tc.features})
			cmds := append([]string{"mkdir inldir", "mkdir inldir/sub"}, tc.eas...)
			if tc.eas == nil {
				cmds = append(cmds, "mkdir other", "ea_set -f "+big+" other user.big")
			}
			testfs.Debugfs(t, img, append(cmds, "ea_set inldir system.data "+tc.data)...)
			if tc.eas == nil {
				shareEABlock(t, img, "other", "inldir")
			}
			gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
			gout, gcode := runGofsck("-fy", gimg)
			eout, ecode := testfs.E2fsckInPlace(t, eimg, "-fy")
			if g, e := normProg(norm(gout, gimg)), normProg(norm(eout, eimg)); g != e || gcode != ecode {
				t.Fatalf("exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, e, g)
			}
			if !strings.Contains(eout, "must be a multiple of 4") {
				t.Fatalf("the damage does not make e2fsck fix the inline size:\n%s", eout)
			}
			if tc.eas == nil && !strings.Contains(eout, "Block bitmap differences:  +") {
				t.Fatalf("e2fsck did not copy the shared EA block:\n%s", eout)
			}
			if out, code := testfs.E2fsck(t, gimg, "-fn"); code != 0 {
				t.Errorf("e2fsck -fn: not clean after repair:\n%s", out)
			}
			compareStampedImages(t, gimg, eimg, nil)
		})
	}
}

// shareEABlock makes inode to share from's EA block: its file_acl and
// i_blocks, and the block's reference count 2 (checksum recomputed).
func shareEABlock(t *testing.T, img, from, to string) {
	t.Helper()
	data := mustRead(t, img)
	f, err := fs.Open(&blockdev.Mem{Data: data, ReadOnly: true}, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	buf := make(ondisk.Inode, f.InodeSize)
	if err := f.ReadInode(testfs.Ino(t, img, from), buf, make([]byte, f.BlockSize)); err != nil {
		t.Fatal(err)
	}
	blk := buf.FileACL(f.SB.Is64bit())
	if blk == 0 {
		t.Fatalf("%s has no EA block", from)
	}
	testfs.Debugfs(t, img, fmt.Sprintf("sif %s file_acl %d", to, blk), fmt.Sprintf("sif %s blocks %d", to, f.BlockSize/512))
	b := make([]byte, f.BlockSize)
	copy(b, data[blk*uint64(f.BlockSize):])
	binary.LittleEndian.PutUint32(b[4:], 2)
	if f.MetadataCsum {
		binary.LittleEndian.PutUint32(b[0x10:], ondisk.XattrBlock(b).ComputeChecksum(f.CsumSeed, blk))
	}
	fh, err := os.OpenFile(img, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteAt(b, int64(blk)*int64(f.BlockSize)); err != nil {
		t.Fatal(err)
	}
}

// TestJournalRecreateFragmented: the free space is cut into runs of three
// blocks, so the re-created journal needs hundreds of extents: the
// library's ext_falloc_helper inserts them through the extent handle,
// which grows the tree (a leaf block taken from the bitmap when the
// inode's four extents are full, more leaves as those fill). gofsck must
// agree with e2fsck on the transcript, the exit and every byte but the
// stamps.
func TestJournalRecreateFragmented(t *testing.T) {
	t.Parallel() // independent of the others; runs beside them on the second CPU
	testfs.RequireE2fsprogs(t)
	for _, tc := range []struct {
		name string
		spec testfs.Spec
		// journal is tune2fs's -J size (MiB): 1024 blocks.
		journal string
		// restart adds a pass-2 restart (an entry in group 0's unused
		// inode area): the journal is made before it, from pass 1's
		// found map.
		restart bool
		// files of three blocks (clusters) each are written, every
		// other one removed.
		files int
	}{
		{"1k", testfs.Spec{FSType: "ext4", Size: 8 << 20, BlockSize: 1024, Features: "^has_journal"}, "size=1", false, 1400},
		{"4k-nocsum", testfs.Spec{FSType: "ext4", Size: 32 << 20, BlockSize: 4096, Features: "^has_journal,^metadata_csum"}, "size=4", false, 1400},
		{"1k-restart", testfs.Spec{FSType: "ext4", Size: 8 << 20, BlockSize: 1024, Features: "^has_journal"}, "size=1", true, 1400},
		// Whole clusters: runs of three, a tree block takes a cluster.
		{"bigalloc", testfs.Spec{FSType: "ext4", Size: 64 << 20, BlockSize: 4096, ClusterSize: 16384, Features: "^has_journal,bigalloc"}, "size=4", false, 600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			unit := max(spec.BlockSize, spec.ClusterSize)
			spec.Populate = func(tr *testfs.Tree) {
				for i := range tc.files {
					tr.File(fmt.Sprintf("f%d", i), int64(3*unit))
				}
			}
			img := testfs.MkImage(t, spec)
			var rm []string
			for i := 0; i < tc.files; i += 2 {
				rm = append(rm, fmt.Sprintf("rm f%d", i))
			}
			testfs.Debugfs(t, img, rm...)
			if out, err := exec.Command("tune2fs", "-O", "has_journal", "-J", tc.journal, img).CombinedOutput(); err != nil {
				t.Fatalf("tune2fs: %v\n%s", err, out)
			}
			if tc.restart {
				ipg, _ := strconv.Atoi(testfs.Superblock(t, img)["Inodes per group"])
				unused := ipg - int(testfs.Ino(t, img, "f1")) + 1
				testfs.Debugfs(t, img, fmt.Sprintf("set_bg 0 free_inodes_count %d", unused),
					fmt.Sprintf("set_bg 0 itable_unused %d", unused), "set_bg 0 checksum calc")
			}
			testfs.Debugfs(t, img, "clri <8>", "ssv jnl_backup_type 0")
			eimg := testfs.CopyImage(t, img)
			testfs.E2fsckInPlace(t, eimg, "-fy")
			if out := testfs.DebugfsRO(t, eimg, "stat <8>"); !strings.Contains(out, "(ETB0)") {
				t.Fatalf("e2fsck's journal has no extent tree:\n%s", out)
			}
			compareRecreated(t, img, tc.restart, []string{"<8>"})
		})
	}
}

// TestJournalRecreateFastCommit: with fast_commit the re-created journal
// has a 64th more blocks for fast commits (ext2fs_get_journal_params):
// the transcript names the normal blocks only, the inode and s_maxlen
// cover both, s_num_fc_blks the fast-commit area; at the end of the run,
// on bigalloc, and before a restart.
func TestJournalRecreateFastCommit(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	drop := []string{"clri <8>", "ssv jnl_backup_type 0"}
	unusedArea := func(t *testing.T, img string) []string {
		ipg, _ := strconv.Atoi(testfs.Superblock(t, img)["Inodes per group"])
		unused := ipg - int(testfs.Ino(t, img, "a/two")) + 1
		return append(slices.Clone(drop), fmt.Sprintf("set_bg 0 free_inodes_count %d", unused),
			fmt.Sprintf("set_bg 0 itable_unused %d", unused), "set_bg 0 checksum calc")
	}
	dropOnly := func(*testing.T, string) []string { return drop }
	for _, tc := range []struct {
		name    string
		spec    testfs.Spec
		damage  func(t *testing.T, img string) []string
		restart bool
	}{
		{"4k", testfs.Spec{FSType: "ext4", Size: 32 << 20, BlockSize: 4096, Features: "fast_commit", Populate: populate}, dropOnly, false},
		{"1k", testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 1024, Features: "fast_commit", Populate: populate}, dropOnly, false},
		{"bigalloc", testfs.Spec{FSType: "ext4", Size: 32 << 20, BlockSize: 4096, Features: "fast_commit,bigalloc", ClusterSize: 16384, Populate: populate}, dropOnly, false},
		{"restart-pass2", testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 4096, Features: "fast_commit", ExtraArgs: []string{"-g", "1024"}, Populate: populate}, unusedArea, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := testfs.MkImage(t, tc.spec)
			testfs.Debugfs(t, img, tc.damage(t, img)...)
			compareRecreated(t, img, tc.restart, []string{"<8>"})
		})
	}
}
