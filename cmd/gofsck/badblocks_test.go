package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// bbCase is one bad-block list update: the damage done first (debugfs
// commands), then the gofsck/e2fsck arguments before the image.
type bbCase struct {
	name   string
	damage []string
	args   []string
}

// writeList writes a bad-blocks file and returns its path.
func writeList(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// seqList is the numbers from..to (step 1), one a line.
func seqList(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// compareBadBlockImages is compareImages with inode 1's times and
// checksum masked too (each program stamps the times with its own clock).
func compareBadBlockImages(t *testing.T, name, a, b string) {
	t.Helper()
	off := testfs.InodeOffset(t, a, "<1>")
	for _, img := range []string{a, b} {
		for _, f := range [][2]int64{{0x08, 4}, {0x0C, 4}, {0x10, 4}, {0x7C, 2}, {0x82, 2}} {
			testfs.WriteAt(t, img, off+f[0], make([]byte, f[1]))
		}
	}
	compareImages(t, name, a, b)
}

// TestBadBlocksListMatchesE2fsck updates the bad-block inode with -l and
// -L on several layouts (direct, indirect and double indirect mapping,
// lists merged with an existing one, out-of-range and junk lines, an
// illegal block already in inode 1, blocks in use by files and in
// BLOCK_UNINIT groups): the transcript, exit code, the list dumpe2fs -b
// shows and the image bytes must be e2fsck's.
func TestBadBlocksListMatchesE2fsck(t *testing.T) {
	t.Parallel() // independent of the others; runs beside them on the second CPU
	testfs.RequireE2fsprogs(t)
	specs := map[string]testfs.Spec{
		"ext2-1k": {FSType: "ext2", BlockSize: 1024, Size: 16 << 20, Populate: populate},
		"ext4-1k": {FSType: "ext4", BlockSize: 1024, Size: 32 << 20, Populate: populate},
		"ext4-4k": {FSType: "ext4", BlockSize: 4096, Size: 64 << 20, Populate: populate},
	}
	big := writeList(t, "big", seqList(5000, 5400))
	small := writeList(t, "small", "20000\n  7000 trailing words\n7000\nabc\n\n0\n99999999\n+9000\n")
	more := writeList(t, "more", seqList(5390, 5410)+"6000\n")
	// Descending, with every number twice: the list is sorted and unique.
	var desc strings.Builder
	for i := 5600; i >= 5450; i-- {
		fmt.Fprintf(&desc, "%d\n%d\n", i, i)
	}
	reversed := writeList(t, "reversed", desc.String())
	cases := []bbCase{
		{name: "add-big", args: []string{"-fy", "-l", big}},
		{name: "replace-small", args: []string{"-fy", "-L", small}},
		{name: "add-to-existing", damage: nil, args: []string{"-fy", "-l", more}},
		{name: "replace-existing", args: []string{"-fy", "-L", small}},
		{name: "preen-add", args: []string{"-p", "-l", small}},
		{name: "add-reversed-to-existing", args: []string{"-fy", "-l", reversed}},
		{name: "illegal-in-inode", damage: []string{"sif <1> block[2] 99999999", "sif <1> block[IND] 88888888"}, args: []string{"-fy", "-l", small}},
	}
	for name, spec := range specs {
		base := testfs.MkImage(t, spec)
		// An image whose bad-block inode already maps blocks through
		// indirect blocks, made by e2fsck itself.
		withList := testfs.CopyImage(t, base)
		if out, code := testfs.E2fsckInPlace(t, withList, "-fy", "-l", big); code > 1 {
			t.Fatalf("%s: e2fsck -l: exit %d\n%s", name, code, out)
		}
		for _, tc := range cases {
			img := testfs.CopyImage(t, base)
			if strings.Contains(tc.name, "existing") {
				img = testfs.CopyImage(t, withList)
			}
			if len(tc.damage) > 0 {
				testfs.Debugfs(t, img, tc.damage...)
			}
			gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
			gout, gcode := runGofsck(append(tc.args, gimg)...)
			eout, ecode := testfs.E2fsckInPlace(t, eimg, tc.args...)
			label := name + "/" + tc.name
			if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
				t.Errorf("%s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", label, gcode, ecode, e, g)
				continue
			}
			if out, code := testfs.E2fsck(t, gimg, "-fn"); code != 0 && gcode < 4 {
				t.Errorf("%s: not clean after the update:\n%s", label, out)
			}
			gl := testfs.DebugfsRO(t, gimg, "stat <1>")
			el := testfs.DebugfsRO(t, eimg, "stat <1>")
			if i, j := strings.Index(gl, "BLOCKS:"), strings.Index(el, "BLOCKS:"); i < 0 || j < 0 || gl[i:] != el[j:] {
				t.Errorf("%s: bad-block inode maps differ:\n--- e2fsck\n%s--- gofsck\n%s", label, el, gl)
			}
			compareBadBlockImages(t, label, gimg, eimg)
		}
	}
}

// TestBadBlocksOptionErrors checks the refused combinations and the
// failures of reading the list against e2fsck: same output, same exit
// code, and nothing written.
func TestBadBlocksOptionErrors(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	base := testfs.MkImage(t, testfs.Spec{FSType: "ext4", BlockSize: 1024, Size: 8 << 20})
	list := writeList(t, "list", "100\n")
	huge := writeList(t, "huge", "100\n4294967296\n")
	neg := writeList(t, "neg", "-5\n")
	missing := filepath.Join(t.TempDir(), "missing")
	// badCsum has inode 1's checksum broken: the sanity check cannot
	// read it.
	badCsum := testfs.CopyImage(t, base)
	off := testfs.InodeOffset(t, badCsum, "<1>")
	testfs.WriteAt(t, badCsum, off+0x7C, []byte{^testfs.ReadAt(t, badCsum, off+0x7C, 1)[0]})
	for _, args := range [][]string{
		{"-n", "-c"}, {"-n", "-cc"}, {"-n", "-l", list}, {"-n", "-L", list},
		{"-y", "-c", "-l", list}, {"-y", "-l", missing}, {"-fy", "-l", huge}, {"-fy", "-L", neg},
		{"csum", "-fy", "-l", list},
	} {
		img := base
		if args[0] == "csum" {
			img, args = badCsum, args[1:]
		}
		gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
		before, err := os.ReadFile(gimg)
		if err != nil {
			t.Fatal(err)
		}
		gout, gcode := runGofsck(append(args, gimg)...)
		eout, ecode := runE2fsck(t, append(args, eimg)...)
		g := strings.ReplaceAll(norm(gout, gimg), "gofsck:", "e2fsck:")
		if e := norm(eout, eimg); g != e || gcode != ecode {
			t.Errorf("%v: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", args, gcode, ecode, e, g)
		}
		after, err := os.ReadFile(gimg)
		if err != nil {
			t.Fatal(err)
		}
		if string(before) != string(after) {
			t.Errorf("%v: the image was written", args)
		}
	}
}

// TestBadBlocksCheckRunsBadblocks runs -c (read-only test), -cc
// (non-destructive read-write test) and -c -k with the real badblocks
// program on an image that already has a bad-block list: without -k the
// list is replaced by what badblocks finds (nothing on an image file),
// with -k it is kept. Transcript (without badblocks' own progress line),
// exit code and image must be e2fsck's.
func TestBadBlocksCheckRunsBadblocks(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	base := testfs.MkImage(t, testfs.Spec{FSType: "ext4", BlockSize: 1024, Size: 8 << 20, Populate: populate})
	if out, code := testfs.E2fsckInPlace(t, base, "-fy", "-l", writeList(t, "l", seqList(3000, 3020))); code > 1 {
		t.Fatalf("e2fsck -l: exit %d\n%s", code, out)
	}
	dropProgress := func(s string) string {
		var b strings.Builder
		for _, l := range strings.SplitAfter(s, "\n") {
			if !strings.Contains(l, "Checking for bad blocks") {
				b.WriteString(l)
			}
		}
		return b.String()
	}
	for _, args := range [][]string{{"-fy", "-c"}, {"-fy", "-cc"}, {"-fy", "-c", "-k"}, {"-p", "-c"}} {
		gimg, eimg := testfs.CopyImage(t, base), testfs.CopyImage(t, base)
		gout, gcode := runGofsck(append(args, gimg)...)
		eout, ecode := runE2fsck(t, append(args, eimg)...)
		if g, e := dropProgress(norm(gout, gimg)), dropProgress(norm(eout, eimg)); g != e || gcode != ecode {
			t.Errorf("%v: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", args, gcode, ecode, e, g)
			continue
		}
		if !strings.Contains(gout, "Updating bad block inode.") {
			t.Errorf("%v: no update:\n%s", args, gout)
		}
		compareBadBlockImages(t, strings.Join(args, " "), gimg, eimg)
	}
}
