package main

import (
	"fmt"
	"strings"
	"testing"

	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// TestOrphanXattrReleaseMatchesE2fsck: an orphan whose extended
// attributes live in a block of their own (what a crash leaves for a file
// with an ACL, a security label or a large user attribute, unlinked while
// open) is released before pass 1 as e2fsck's release_inode_blocks does:
// the block's reference count dropped, the block freed when it reaches
// zero (and kept, one reference fewer, when another inode shares it),
// i_file_acl cleared, for deleted and truncated orphans alike, on
// extent-mapped and block-mapped filesystems, and on bigalloc (where
// e2fsck adds one block per released cluster to the free count the clean
// skip writes). A bigalloc truncation releases only each cluster's first
// block past the end and leaves the rest of the cluster mapped, which
// pass 1 of -f then clears with a restart (the check after it reads the
// bitmaps the release wrote). gofsck -fy and -p must print what e2fsck
// prints, exit as it exits and leave the same bytes.
func TestOrphanXattrReleaseMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	fixClock(t)
	cases := []struct {
		name string
		spec testfs.Spec
		// links: the orphan's link count (0: deleted, 1: truncated to
		// size); shared: a second file refers to the same EA block.
		links  int
		size   int
		shared bool
	}{
		{name: "ext4-delete", spec: testfs.Spec{FSType: "ext4", Size: 16 << 20}},
		{name: "ext4-1k-truncate", spec: testfs.Spec{FSType: "ext4", Size: 16 << 20, BlockSize: 1024}, links: 1, size: 3000},
		{name: "ext4-nocsum-shared", spec: testfs.Spec{FSType: "ext4", Size: 16 << 20, Features: "^metadata_csum"}, shared: true},
		{name: "ext3-delete", spec: testfs.Spec{FSType: "ext3", Size: 16 << 20, BlockSize: 1024}},
		{name: "ext3-truncate", spec: testfs.Spec{FSType: "ext3", Size: 16 << 20, BlockSize: 1024}, links: 1, size: 20000},
		{name: "bigalloc-delete", spec: testfs.Spec{FSType: "ext4", Size: 64 << 20, ClusterSize: 16384, Features: "bigalloc"}},
		{name: "bigalloc-1k-truncate", spec: testfs.Spec{FSType: "ext4", Size: 64 << 20, BlockSize: 1024, ClusterSize: 16384, Features: "bigalloc"}, links: 1, size: 3000},
		{name: "bigalloc-nocsum-truncate", spec: testfs.Spec{FSType: "ext4", Size: 64 << 20, BlockSize: 1024, ClusterSize: 16384, Features: "bigalloc,^metadata_csum"}, links: 1, size: 20000},
		{name: "bigalloc-4k-truncate-shared", spec: testfs.Spec{FSType: "ext4", Size: 64 << 20, BlockSize: 4096, ClusterSize: 65536, Features: "bigalloc"}, links: 1, size: 5000, shared: true},
	}
	value := hostFile(t, 600) // too big for the inode: an EA block
	data := hostFile(t, 100000)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img := testfs.MkImage(t, tc.spec)
			testfs.Debugfs(t, img, "write "+data+" f", "write "+data+" g", "ea_set -f "+value+" f user.big")
			ino := testfs.Ino(t, img, "/f")
			acl := testfs.Blocks(t, img, "/f").FileACL
			if acl == 0 {
				t.Fatal("/f has no EA block")
			}
			cmds := []string{"unlink f", fmt.Sprintf("sif <%d> links_count %d", ino, tc.links),
				fmt.Sprintf("ssv last_orphan %d", ino)}
			if tc.links > 0 {
				cmds = append(cmds, "ln <"+fmt.Sprint(ino)+"> f2", fmt.Sprintf("sif <%d> size %d", ino, tc.size))
			}
			if tc.shared {
				// /g refers to the same block, which counts both.
				cmds = append(cmds, fmt.Sprintf("sif /g file_acl %d", acl))
			}
			testfs.Debugfs(t, img, cmds...)
			if tc.shared {
				bs := int64(testfs.BlockSize(t, img))
				x := ondisk.XattrBlock(testfs.ReadAt(t, img, int64(acl)*bs, int(bs)))
				x.SetRefcount(2)
				testfs.WriteAt(t, img, int64(acl)*bs, x)
			}
			for _, mode := range []string{"-fy", "-p"} {
				gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
				gout, gcode, eout, ecode := checkPair(t, gimg, eimg, mode)
				if !strings.Contains(eout, "orphaned inode") {
					t.Fatalf("%s: e2fsck releases no orphan:\n%s", mode, eout)
				}
				if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
					t.Errorf("%s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", mode, gcode, ecode, e, g)
				}
				compareImages(t, tc.name+" "+mode, gimg, eimg)
				// -p leaves what a full check would find (a truncated
				// orphan's i_blocks): e2fsck must say the same of both.
				out, code := testfs.E2fsckInPlace(t, gimg, "-fn")
				if _, ref := testfs.E2fsckInPlace(t, eimg, "-fn"); code != ref {
					t.Errorf("%s: e2fsck -fn exits %d after gofsck, %d after e2fsck:\n%s", mode, code, ref, out)
				}
			}
		})
	}
}

// TestOrphanBrokenMapMatchesE2fsck: an orphan whose block map the
// library cannot follow is released as e2fsck 1.47.0 releases it. An
// extent root that does not verify makes ext2fs_block_iterate3 map
// nothing and return no error (the inode is cleared, its blocks left to
// pass 5); an indirect block outside the filesystem makes it return
// EXT2_ET_BAD_IND_BLOCK after the other blocks, which release_inode_blocks
// prints with com_err before ending the orphan processing (the pointers
// cleared so far written, the filesystem marked not valid). gofsck -fy and
// -p must print what e2fsck prints, exit as it exits and leave the same
// bytes.
func TestOrphanBrokenMapMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	fixClock(t)
	cases := []struct {
		name  string
		spec  testfs.Spec
		links int
		size  int
		set   string // the sif that breaks the map
	}{
		{name: "ext4-bad-extent-root", spec: testfs.Spec{FSType: "ext4", Size: 16 << 20, Features: "^metadata_csum"}, set: "block[0] 0x1234"},
		{name: "ext3-bad-ind-delete", spec: testfs.Spec{FSType: "ext3", Size: 16 << 20, BlockSize: 1024}, set: "block[IND] 99999999"},
		{name: "ext3-bad-ind-truncate", spec: testfs.Spec{FSType: "ext3", Size: 16 << 20, BlockSize: 1024}, links: 1, size: 3000, set: "block[IND] 99999999"},
	}
	data := hostFile(t, 100000)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img := testfs.MkImage(t, tc.spec)
			testfs.Debugfs(t, img, "write "+data+" f")
			ino := testfs.Ino(t, img, "/f")
			cmds := []string{"unlink f", fmt.Sprintf("sif <%d> links_count %d", ino, tc.links),
				fmt.Sprintf("ssv last_orphan %d", ino), fmt.Sprintf("sif <%d> %s", ino, tc.set)}
			if tc.links > 0 {
				cmds = append(cmds, "ln <"+fmt.Sprint(ino)+"> f2", fmt.Sprintf("sif <%d> size %d", ino, tc.size))
			}
			testfs.Debugfs(t, img, cmds...)
			for _, mode := range []string{"-fy", "-p"} {
				gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
				gout, gcode, eout, ecode := checkPair(t, gimg, eimg, mode)
				if !strings.Contains(eout, "orphaned inode") {
					t.Fatalf("%s: e2fsck releases no orphan:\n%s", mode, eout)
				}
				if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
					t.Errorf("%s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", mode, gcode, ecode, e, g)
				}
				compareImages(t, tc.name+" "+mode, gimg, eimg)
			}
		})
	}
}

// TestOrphanQuotaInitFailureStops: with a quota file that does not open
// (its header zeroed), e2fsck's e2fsck_read_all_quotas fails before the
// orphan list is touched and PR_0_QUOTA_INIT_CTX is fatal: e2fsck exits 8
// having written nothing. gofsck stops there too (exit 8, the image
// untouched), reporting the fix as not made (docs/repair.md).
func TestOrphanQuotaInitFailureStops(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	fixClock(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 16 << 20, Features: "quota"})
	testfs.Debugfs(t, img, "write "+hostFile(t, 100000)+" f")
	ino := testfs.Ino(t, img, "/f")
	testfs.Debugfs(t, img, "unlink f", fmt.Sprintf("sif <%d> links_count 0", ino), fmt.Sprintf("ssv last_orphan %d", ino))
	bs := int64(testfs.BlockSize(t, img))
	out := testfs.DebugfsRO(t, img, "bmap <3> 0")
	var blk int64
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if _, err := fmt.Sscan(lines[len(lines)-1], &blk); err != nil || blk == 0 {
		t.Fatalf("no user quota block: %q", out)
	}
	testfs.WriteAt(t, img, blk*bs, make([]byte, bs))
	orig := testfs.CopyImage(t, img)
	gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
	gout, gcode, eout, ecode := checkPair(t, gimg, eimg, "-fy")
	if ecode != 8 || gcode != 8 {
		t.Fatalf("exit %d vs e2fsck %d, want 8:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, eout, gout)
	}
	if !strings.Contains(eout, "Error initializing quota context") || !strings.Contains(gout, "PR_0_QUOTA_INIT_CTX") {
		t.Errorf("unexpected transcripts:\n--- e2fsck\n%s--- gofsck\n%s", eout, gout)
	}
	compareImages(t, "e2fsck", eimg, orig)
	compareImages(t, "gofsck", gimg, orig)
}
