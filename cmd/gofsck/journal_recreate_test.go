package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

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
