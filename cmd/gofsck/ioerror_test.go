package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// Read errors. e2fsck's handler for a failed read prints the block and the
// error, asks "Ignore error?" and then "Force rewrite?"; its callers go on
// according to the answer. Short reads of a truncated image go through the
// same handler, so for -n the oracle is e2fsck on the same truncated image.
// Loop devices cannot fail on demand, so EIO is injected into gofsck's
// device (GOFSCK_TEST_READ_ERRORS) and compared with e2fsck on a copy where
// the unreadable block is zeros: that is what the forced rewrite leaves,
// so after the two handler questions both transcripts and both repaired
// images must be the same.

// TestShortReadsMatchE2fsck truncates images in the middle of an inode
// table, before a directory block, and at points where pass 1's other
// reads fail: gofsck -fn must print what e2fsck -fn prints, handler lines
// included, and exit the same.
func TestShortReadsMatchE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	// ext2, 1 KiB blocks, two groups: group 1's inode table starts after
	// group 0's data, so the scan of group 0 and the root directory read
	// fine.
	base := testfs.MkImage(t, testfs.Spec{FSType: "ext2", Size: 16 << 20, BlockSize: 1024, Inodes: 4096, Populate: populate})
	itable1 := testfs.GroupBlock(t, base, 1, "Inode table")
	// A directory block moved to the last block of the filesystem.
	moved := testfs.CopyImage(t, base)
	old := testfs.Bmap(t, moved, "a", 0)
	last := uint64(16<<10) - 1
	testfs.WriteAt(t, moved, int64(last)<<10, testfs.ReadAt(t, moved, int64(old)<<10, 1024))
	testfs.Debugfs(t, moved, "sif /a block[0] "+fmt.Sprint(last), fmt.Sprintf("setb %d", last), fmt.Sprintf("freeb %d", old))
	testfs.E2fsckInPlace(t, moved, "-fy") // debugfs leaves the group counts stale
	if out, code := testfs.E2fsck(t, moved, "-fn"); code != 0 {
		t.Fatalf("moving the directory block left the image unclean:\n%s", out)
	}
	// The fuzz base image (1 KiB blocks, one group): an htree directory,
	// a slow symlink, files with EA blocks and indirect blocks, all after
	// the inode table (blocks 5-36).
	small := filepath.Join(t.TempDir(), "ext2.img")
	testfs.Decompress(t, filepath.Join("..", "..", "internal", "check", "testdata", "ext2.img.gz"), small)
	cases := []struct {
		name string
		img  string
		size int64  // bytes after truncation
		want string // a line both must print
	}{
		{"mid-inode-table", base, int64(itable1+3) << 10, "while getting next inode from scan.  Ignore error? no"},
		{"directory-block", moved, int64(last) << 10, "while reading directory block.  Ignore error? no"},
		// The root directory (the lost+found lookup at the start of
		// pass 1), an htree root and the inode table itself.
		{"small-20", small, 20<<10 + 100, "Error reading block 37 ("},
		// Also a symlink block, EA blocks and an indirect block.
		{"small-37", small, 37 << 10, "while reading indirect blocks of inode 15.  Ignore error? no"},
		{"small-60", small, 60<<10 + 100, "Error reading block 74 ("},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := testfs.CopyImage(t, c.img)
			if err := os.Truncate(img, c.size); err != nil {
				t.Fatal(err)
			}
			before := testfs.FileSHA256(t, img)
			gout, gcode := runGofsck("-fn", img)
			eout, ecode := runE2fsck(t, "-fn", img)
			g := strings.ReplaceAll(norm(gout, img), "gofsck: aborted", "e2fsck: aborted")
			if e := norm(eout, img); g != e || gcode != ecode {
				t.Errorf("exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, e, g)
			}
			if !strings.Contains(gout, c.want) {
				t.Errorf("no %q in:\n%s", c.want, gout)
			}
			if testfs.FileSHA256(t, img) != before {
				t.Error("-n changed the image")
			}
		})
	}
}

// handlerLines matches the read-error handler's questions with their yes
// answers, as -y prints them.
var handlerLines = regexp.MustCompile(`Error reading block \d+ \(Input/output error\) while [a-z0-9 ]+\.  Ignore error\? yes\n\nForce rewrite\? yes\n\n`)

// TestReadErrorsRepairLikeZeroedBlock injects EIO on a directory block and
// on an inode-table block. With -y gofsck must ignore the error, rewrite
// the block, and then repair exactly as e2fsck -fy repairs the image with
// that block zeroed (same transcript after the handler lines, same exit,
// same bytes). With -n it must report the error, stop as e2fsck's callers
// do (exit 8 or 12) and write nothing; with -p it must halt (exit 4).
func TestReadErrorsRepairLikeZeroedBlock(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	specs := map[string]testfs.Spec{
		"ext2": {FSType: "ext2", Size: 16 << 20, BlockSize: 1024, Populate: populate},
		"ext4": {FSType: "ext4", Size: 16 << 20, Populate: populate},
	}
	for name, spec := range specs {
		base := testfs.MkImage(t, spec)
		bs := testfs.BlockSize(t, base)
		type target struct {
			what   string
			blk    uint64
			op     string
			fnOK   string // what -n prints after the handler
			fnExit int    // 8: a fatal error met first leaves the fs valid; 12: a declined Continue does not
		}
		targets := []target{
			{"directory block", testfs.Bmap(t, base, "a", 0), "reading directory block", "Continue? no", 12},
			{"inode table block", uint64(testfs.InodeOffset(t, base, "a/two") / bs), "getting next inode from scan", "Can't read next inode", 8},
		}
		if bm := testfs.Blocks(t, base, "a/two"); len(bm.Ind) > 0 {
			ino := testfs.Ino(t, base, "a/two")
			targets = append(targets, target{"indirect block", bm.Ind[0], fmt.Sprintf("reading indirect blocks of inode %d", ino),
				fmt.Sprintf("Error while iterating over blocks in inode %d: Input/output error", ino), 8})
		}
		for _, tg := range targets {
			t.Run(name+"/"+tg.what, func(t *testing.T) {
				t.Setenv(readErrorsEnv, fmt.Sprintf("%d+%d", int64(tg.blk)*bs, bs))
				handler := fmt.Sprintf("Error reading block %d (Input/output error) while %s.  Ignore error? ", tg.blk, tg.op)

				nimg := testfs.CopyImage(t, base)
				before := testfs.FileSHA256(t, nimg)
				out, code := runGofsck("-fn", nimg)
				if code != tg.fnExit || !strings.Contains(out, handler+"no\n\n") || !strings.Contains(out, tg.fnOK) {
					t.Errorf("-fn: exit %d, want %d with %q and %q:\n%s", code, tg.fnExit, handler+"no", tg.fnOK, out)
				}
				if testfs.FileSHA256(t, nimg) != before {
					t.Error("-fn changed the image")
				}

				pimg := testfs.CopyImage(t, base)
				out, code = runGofsck("-fp", pimg)
				if code != 4 || !strings.Contains(out, "UNEXPECTED INCONSISTENCY") {
					t.Errorf("-fp: exit %d, want 4 and a preen halt:\n%s", code, out)
				}

				gimg := testfs.CopyImage(t, base)
				gout, gcode := runGofsck("-fy", gimg)
				if !strings.Contains(gout, handler+"yes\n\nForce rewrite? yes\n\n") {
					t.Fatalf("-fy: no handler questions:\n%s", gout)
				}
				eimg := testfs.CopyImage(t, base)
				testfs.WriteAt(t, eimg, int64(tg.blk)*bs, make([]byte, bs))
				eout, ecode := testfs.E2fsckInPlace(t, eimg, "-fy")
				g := handlerLines.ReplaceAllString(norm(gout, gimg), "")
				if e := norm(eout, eimg); g != e || gcode != ecode {
					t.Errorf("-fy: exit %d vs e2fsck %d on the zeroed block; output differs:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, e, g)
				}
				if out, code := testfs.E2fsck(t, gimg, "-fn"); code != 0 {
					t.Errorf("not clean after repair:\n%s", out)
				}
				compareImagesButInodeTimes(t, name, gimg, eimg)
			})
		}
	}
}

// compareImagesButInodeTimes is compareImages allowing differences in the
// inode fields each program stamps from its own clock when it clears or
// changes an inode (i_ctime, i_dtime, their extra bytes and the inode
// checksum over them).
func compareImagesButInodeTimes(t *testing.T, name, a, b string) {
	t.Helper()
	da, db := readMasked(t, name, a, b)
	sb := testfs.Superblock(t, a)
	bs := testfs.BlockSize(t, a)
	isz, _ := strconv.Atoi(sb["Inode size"])
	if isz == 0 && strings.HasPrefix(sb["Filesystem revision #"], "0") {
		isz = 128 // revision 0: dumpe2fs prints no inode size
	}
	groups, _ := strconv.Atoi(sb["Block count"])
	bpg, _ := strconv.Atoi(sb["Blocks per group"])
	if isz == 0 || bpg == 0 {
		t.Fatalf("%s: no inode size or group size in %v", name, sb)
	}
	groups = (groups + bpg - 1) / bpg
	type span struct{ lo, hi int64 }
	var tables []span
	for g := 0; g < groups; g++ {
		first, last, _ := strings.Cut(testfs.GroupDesc(t, a, g)["Inode table"], "-")
		lo, _ := strconv.ParseInt(first, 10, 64)
		hi, err := strconv.ParseInt(last, 10, 64)
		if err != nil {
			hi = lo
		}
		tables = append(tables, span{lo * bs, (hi + 1) * bs})
	}
	stamped := func(off int64) bool {
		for _, sp := range tables {
			if off >= sp.lo && off < sp.hi {
				switch f := (off - sp.lo) % int64(isz); {
				case f >= 0x0C && f < 0x10, f >= 0x14 && f < 0x18, // ctime, dtime
					f >= 0x7C && f < 0x7E, f >= 0x82 && f < 0x88: // checksum, ctime_extra
					return true
				}
			}
		}
		return false
	}
	for i := range da {
		if da[i] != db[i] && !stamped(int64(i)) {
			t.Errorf("%s: images differ first at byte %d (block %d)", name, i, int64(i)/bs)
			return
		}
	}
}
