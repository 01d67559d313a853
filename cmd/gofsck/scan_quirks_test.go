package main

import (
	"fmt"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// TestScanQuirksMatchE2fsck: corruptions whose report depends on details
// of the library's inode scan and block iterator, found by corrupting
// whole blocks of small images at random. For each, gofsck -fn must print
// what e2fsck -fn prints, byte for byte, with the same exit status, and
// gofsck -fy must print and write what e2fsck -fy does.
func TestScanQuirksMatchE2fsck(t *testing.T) {
	t.Parallel() // independent of the others; runs beside them on the second CPU
	testfs.RequireE2fsprogs(t)
	ext4 := testfs.Spec{FSType: "ext4", Size: 8 << 20, BlockSize: 1024, Populate: populateQuirks}
	ext3 := testfs.Spec{FSType: "ext3", Size: 8 << 20, BlockSize: 1024, InodeSize: 128, Populate: populateQuirks}
	sparse4k := testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 4096, Populate: populateSparse}
	cases := []struct {
		name   string
		spec   testfs.Spec
		damage func(t *testing.T, img string)
		// noRepair: compare -fn only (the repair takes paths compared
		// elsewhere, or stops as a fix gofsck does not make).
		noRepair bool
		// firstLine: compare the first line of -fn only.
		firstLine bool
	}{
		// Three of the four inodes of an inode-table block fail their
		// checksums, so the scan calls all four garbage; the first, whose
		// checksum holds, gets no checksum question when it is kept
		// (recheck_bad_inode_checksum rereads it).
		{"garbage-block-first-inode-valid", ext4, func(t *testing.T, img string) {
			for _, ino := range []string{"<14>", "<15>", "<16>"} {
				testfs.WriteAt(t, img, testfs.InodeOffset(t, img, ino)+0x64, []byte{0x5a})
			}
		}, false, false},
		// An unused inode whose first 128 bytes are zero passes its
		// checksum whatever its extra fields hold (a deleted file's
		// inode, zeroed, below the group's itable_unused mark).
		{"zero-inode-junk-extra", ext4, func(t *testing.T, img string) {
			off := testfs.InodeOffset(t, img, "/a/one")
			testfs.Debugfs(t, img, "rm /a/one")
			testfs.WriteAt(t, img, off, make([]byte, 256))
			testfs.WriteAt(t, img, off+252, []byte{0x29, 0xaf, 0x67, 0x4f})
		}, false, false},
		// Without metadata_csum an inode-table block is still garbage
		// when more than half its inodes have block maps pointing out of
		// the filesystem (block_map_looks_insane).
		{"garbage-block-no-csum", ext3, func(t *testing.T, img string) {
			var cmds []string
			for ino := 17; ino <= 21; ino++ {
				for b := 0; b < 8; b++ {
					cmds = append(cmds, fmt.Sprintf("sif <%d> block[%d] %d", ino, b, 9000000+ino*16+b))
				}
			}
			testfs.Debugfs(t, img, cmds...)
		}, false, false},
		// Files with indirect blocks are checked in batches sorted by
		// process_inode_cmp, whose int differences make no total order
		// for these block numbers: glibc's merge sort decides, and the
		// first inode checked (whose bad indirect block stops the run)
		// is 21, where Go's stable sort would take 24. Only these seven
		// files have indirect blocks.
		{"deferred-order", testfs.Spec{FSType: "ext3", Size: 8 << 20, BlockSize: 1024, InodeSize: 128,
			Populate: func(tr *testfs.Tree) { tr.ManyFiles("many", 40) }}, func(t *testing.T, img string) {
			vals := []uint32{0x70000000, 0x30000000, 0x50000000, 0x10000000, 0xf0000000, 0xb0000000, 0xd0000000}
			var cmds []string
			for i, v := range vals {
				cmds = append(cmds, fmt.Sprintf("sif <%d> block[IND] %d", 20+i, v))
			}
			testfs.Debugfs(t, img, cmds...)
		}, true, false},
		// A symlink with an EA block and i_size_high set: the library
		// tests i_size alone, so it is taken for a fast symlink.
		{"symlink-ea-size-high", ext3, func(t *testing.T, img string) {
			testfs.Debugfs(t, img, "symlink sl /some/target", "ea_set sl user.x "+strings.Repeat("v", 200))
			testfs.WriteAt(t, img, testfs.InodeOffset(t, img, "sl")+108, []byte{7}) // i_size_high
		}, true, false},
		// A double indirect block whose second entry is out of range:
		// the iterator stops walking that block there.
		{"dind-child-illegal", ext3, func(t *testing.T, img string) {
			d := statBlockAfter(t, img, "big", "(DIND):")
			testfs.WriteAt(t, img, int64(d)*1024+4, append(testfs.Le32(0xF0000001), testfs.Le32(0xF0000002)...))
		}, true, false},
		// An out-of-range indirect block does not advance the iterator's
		// block counter, so the blocks under the double indirect block
		// are numbered from 12; and the next block read clears the
		// error, so the walk does not fail.
		{"ind-illegal-numbering", ext3, func(t *testing.T, img string) {
			ind := statBlockAfter(t, img, "big", "(DIND):", "(IND):")
			testfs.WriteAt(t, img, int64(ind)*1024+20, testfs.Le32(0xF0000005))
			testfs.Debugfs(t, img, "sif big block[IND] 4026531840")
		}, true, false},
		// 1 KiB blocks with bigalloc: block 0 (the boot block) is taken
		// before the descriptors are checked, so the bitmap there is the
		// first bad block. (e2fsck -n then relocates the bitmap and
		// tries to write it, which gofsck -n does not copy.)
		{"bigalloc-bitmap-at-zero", testfs.Spec{FSType: "ext4", Size: 8 << 20, BlockSize: 1024, ClusterSize: 4096,
			Features: "bigalloc", Populate: populate}, func(t *testing.T, img string) {
			testfs.Debugfs(t, img, "set_bg 0 block_bitmap 0", "set_bg 0 checksum calc")
		}, true, true},
		// Pass 1B's inode scan verifies every checksum: under -n the
		// inode whose checksum pass 1 was not allowed to fix stops the
		// run there (PR_1B_ISCAN_ERROR); under -y it was fixed.
		{"pass1b-scan-checksum", testfs.Spec{FSType: "ext4", Size: 8 << 20, BlockSize: 1024, Features: "^extent,^64bit",
			Populate: populateQuirks}, func(t *testing.T, img string) {
			shared := testfs.Bmap(t, img, "a/one", 0)
			testfs.Debugfs(t, img, fmt.Sprintf("sif a/two block[3] %d", shared))
			testfs.WriteAt(t, img, testfs.InodeOffset(t, img, "<30>")+8, []byte{0x77}) // i_atime
		}, false, false},
		// Pass 1B's walk of a file whose indirect block is out of range
		// but whose double indirect block reads: the read clears the
		// error, so pass 1B reports no failed iteration.
		{"pass1b-ind-illegal", ext3, func(t *testing.T, img string) {
			shared := testfs.Bmap(t, img, "big", 300)
			testfs.Debugfs(t, img, fmt.Sprintf("sif a/one block[0] %d", shared), "sif big block[IND] 4026531840")
		}, false, false},
		// The bad-blocks inode in a garbage block, its own checksum
		// intact: the block iterator's checked read of it succeeds.
		{"bad-blocks-inode-garbage-block", ext4, func(t *testing.T, img string) {
			for _, ino := range []string{"<2>", "<3>", "<4>"} {
				testfs.WriteAt(t, img, testfs.InodeOffset(t, img, ino)+8, []byte{0x77})
			}
		}, true, false},
		// INLINE_DATA_FL on a slow symlink with an EA block, without the
		// inline_data feature: the symlink counts as having blocks, and
		// the block iterator refuses an inline-data inode.
		{"inline-flag-symlink", ext3, func(t *testing.T, img string) {
			testfs.Debugfs(t, img, "symlink sl /"+strings.Repeat("long/", 20)+"target",
				"ea_set sl user.x "+strings.Repeat("v", 200), "sif sl flags 0x10000000")
		}, true, false},
		// A version 1 journal superblock with fields of version 2 set:
		// they are cleared through the journal's buffer, which does not
		// mark the filesystem changed (exit 0, no "MODIFIED" line).
		{"journal-v1-stray-v2-fields", testfs.Spec{FSType: "ext3", Size: 8 << 20, BlockSize: 1024, Populate: populate},
			func(t *testing.T, img string) {
				jsb := testfs.Bmap(t, img, "<8>", 0)
				testfs.WriteAt(t, img, int64(jsb)*1024+4, []byte{0, 0, 0, 3}) // h_blocktype: JBD2_SUPERBLOCK_V1
			}, false, false},
		// The label names the device in messages, white space and ':'
		// replaced byte by byte.
		{"label-control-bytes", testfs.Spec{FSType: "ext2", Size: 4 << 20, BlockSize: 1024, Populate: populate},
			func(t *testing.T, img string) {
				testfs.WriteAt(t, img, 1024+0x78, []byte("a\rb\vc:d e\xcb\xed\x7f\x00"))
				testfs.Debugfs(t, img, "sif /a/one links_count 3")
			}, false, false},
		// Bytes flipped in the first extent of a depth-1 tree's leaf,
		// which then fails its checksum too. The high half of its
		// ee_block: the index above no longer matches, and e2fsck, which
		// asks for the level's information there, forgets the checksum
		// error (-fn: no checksum question), while under -fy fix_parents
		// cannot go back down into the block.
		{"extent-leaf-flip-lblk", sparse4k, flipLeaf(14), false, false},
		// The top byte of its ee_start and the low byte of the second
		// extent's ee_block: under -fy fix_parents, after the first
		// extent is cleared, cannot find the second one's block.
		{"extent-leaf-flip-pblk", sparse4k, flipLeaf(23), false, false},
		// The same on bigalloc: the checksum message names the blocks of
		// the misaligned cluster report, physical as logical, and pass
		// 1B's walk stops at the step down into the leaf.
		{"extent-leaf-flip-pblk-bigalloc", testfs.Spec{FSType: "ext4", Size: 32 << 20, BlockSize: 4096,
			Features: "bigalloc", ClusterSize: 16384, Populate: populateSparse}, flipLeaf(23), false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img := testfs.MkImage(t, tc.spec)
			tc.damage(t, img)
			gout, gcode := runGofsck("-fn", img)
			eout, ecode := testfs.E2fsck(t, img, "-fn")
			if tc.firstLine {
				g, _, _ := strings.Cut(norm(gout, img), "\n")
				e, _, _ := strings.Cut(norm(eout, img), "\n")
				if g != e || !strings.Contains(e, "ext2fs_check_desc: ") {
					t.Errorf("-fn: first line %q, e2fsck %q", g, e)
				}
				return
			}
			if g, e := norm(gout, img), norm(eout, img); g != e || gcode != ecode {
				t.Errorf("-fn: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, e, g)
			}
			if ecode == 0 && !strings.Contains(tc.name, "zero-inode") && !strings.Contains(tc.name, "journal-v1") {
				t.Errorf("e2fsck -fn found nothing:\n%s", eout)
			}
			if tc.noRepair {
				return
			}
			gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
			gout, gcode = runGofsck("-fy", gimg)
			eout, ecode = testfs.E2fsckInPlace(t, eimg, "-fy")
			if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
				t.Errorf("-fy: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, e, g)
				return
			}
			compareImagesButInodeTimes(t, tc.name, gimg, eimg)
		})
	}
}

// populateQuirks is populate with a file large enough (400 KiB in 1 KiB
// blocks) to use its double indirect block.
func populateQuirks(tr *testfs.Tree) {
	populate(tr)
	tr.File("big", 400<<10)
}

// populateSparse is populate with a file of 128 one-block extents, which
// need a tree block (depth 1) in 4 KiB blocks.
func populateSparse(tr *testfs.Tree) {
	populate(tr)
	tr.Sparse("sparse", 1<<20, 1024, 8192)
}

// flipLeaf inverts two bytes at offset off of the extent tree block of
// /sparse (populateSparse).
func flipLeaf(off int64) func(t *testing.T, img string) {
	return func(t *testing.T, img string) {
		b := statBlockAfter(t, img, "/sparse", "(ETB0):")
		at := int64(b)*4096 + off
		v := testfs.ReadAt(t, img, at, 2)
		testfs.WriteAt(t, img, at, []byte{v[0] ^ 0xff, v[1] ^ 0xff})
	}
}

// statBlockAfter is the block number debugfs "stat" prints for file
// after the labels given, found one after the other: "(DIND):" is the
// double indirect block, "(DIND):", "(IND):" the first indirect block
// under it.
func statBlockAfter(t *testing.T, img, file string, labels ...string) uint64 {
	t.Helper()
	out := testfs.DebugfsRO(t, img, "stat "+file)
	at := 0
	for _, l := range labels {
		i := strings.Index(out[at:], l)
		if i < 0 {
			t.Fatalf("%s: no %s in debugfs stat:\n%s", file, strings.Join(labels, " "), out)
		}
		at += i + len(l)
	}
	var b uint64
	fmt.Sscanf(out[at:], "%d", &b)
	return b
}
