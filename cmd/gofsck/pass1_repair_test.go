package main

import (
	"bytes"
	"os"
	"testing"

	"gofsck/internal/testfs"
)

// TestPass1RepairMatchesE2fsck damages inodes with debugfs in ways only
// pass 1 (and then pass 5) repairs: wrong i_blocks and i_size, a dtime on
// a linked file, the immutable flag on a FIFO, an inode checksum, a bad
// extent or indirect block pointer. gofsck -fy must print what e2fsck -fy
// prints, exit the same, leave an image e2fsck -fn finds clean and write
// the same bytes (superblock times and write counter aside).
func TestPass1RepairMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	pop := func(tr *testfs.Tree) {
		tr.File("a/one", 5000)
		tr.File("a/two", 70000)
		tr.Fifo("a/fifo")
		tr.ManyFiles("many", 40)
	}
	specs := map[string]testfs.Spec{
		"ext4": {FSType: "ext4", Size: 16 << 20, Populate: pop},
		"ext2": {FSType: "ext2", Size: 16 << 20, Populate: pop},
	}
	common := map[string][]string{
		"i_blocks":  {"sif /a/one blocks 2"},
		"i_size":    {"sif /a/two size 1"},
		"dtime":     {"sif /a/one dtime 0x12345678"},
		"immutable": {"sif /a/fifo flags 0x10"},
		"fifo-size": {"sif /a/fifo size 7"},
	}
	only := map[string]map[string][]string{
		"ext4": {
			"inode-csum":   {"sif /a/one checksum 0x1234"},
			"extent-pblk":  {"sif /a/two block[5] 99999999"},
			"extent-len-0": {"sif /a/one block[4] 0"},
		},
		"ext2": {
			"direct-pblk":   {"sif /a/two block[3] 99999999"},
			"indirect-pblk": {"sif /a/two block[IND] 99999999"},
		},
	}
	for name, spec := range specs {
		base := testfs.MkImage(t, spec)
		damages := map[string][]string{}
		for k, v := range common {
			damages[k] = v
		}
		for k, v := range only[name] {
			damages[k] = v
		}
		for dname, dmg := range damages {
			label := name + "/" + dname
			img := testfs.CopyImage(t, base)
			testfs.Debugfs(t, img, dmg...)
			gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
			gout, gcode := runGofsck("-fy", gimg)
			eout, ecode := testfs.E2fsckInPlace(t, eimg, "-fy")
			if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
				t.Errorf("%s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", label, gcode, ecode, e, g)
				continue
			}
			if ecode == 0 {
				t.Errorf("%s: the damage was not found:\n%s", label, eout)
			}
			if out, code := testfs.E2fsck(t, gimg, "-fn"); code != 0 {
				t.Errorf("%s: not clean after repair:\n%s", label, out)
			}
			compareRepaired(t, label, gimg, eimg)
		}
	}
}

// TestPass1RepairThreads: a repair gives the same transcript, exit code
// and image bytes with one worker and with four.
func TestPass1RepairThreads(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	base := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 16 << 20, ExtraArgs: []string{"-g", "1024"},
		Populate: func(tr *testfs.Tree) {
			tr.File("a/one", 5000)
			tr.File("a/two", 70000)
			tr.Fifo("a/fifo")
			tr.ManyFiles("b/many", 40)
			tr.ManyFiles("c/many", 40)
		}})
	testfs.Debugfs(t, base, "sif /a/one blocks 2", "sif /a/two block[5] 99999999", "sif /a/fifo flags 0x10",
		"sif /b/many/f1 size 1", "sif /c/many/f2 dtime 0x12345678", "sif /c/many/f3 checksum 0x1234")
	var outs []string
	var imgs []string
	for _, threads := range []string{"threads=1", "threads=4"} {
		img := testfs.CopyImage(t, base)
		out, code := runGofsck("-fy", "-E", threads, img)
		if code != 1 {
			t.Fatalf("%s: exit %d, want 1:\n%s", threads, code, out)
		}
		outs = append(outs, norm(out, img))
		imgs = append(imgs, img)
	}
	if outs[0] != outs[1] {
		t.Errorf("transcripts differ:\n--- threads=1\n%s--- threads=4\n%s", outs[0], outs[1])
	}
	a, _ := os.ReadFile(imgs[0])
	b, _ := os.ReadFile(imgs[1])
	clearSuperTimes(a)
	clearSuperTimes(b)
	if !bytes.Equal(a, b) {
		t.Error("images differ between threads=1 and threads=4")
	}
	if out, code := testfs.E2fsck(t, imgs[0], "-fn"); code != 0 {
		t.Errorf("not clean after repair:\n%s", out)
	}
}

// clearSuperTimes zeroes the primary superblock's fields that depend on
// the clock and on the bytes written (wtime, lastcheck, kbytes_written)
// and its checksum.
func clearSuperTimes(d []byte) {
	testfs.MaskSuperblockStamps(d[1024:])
}

// compareRepaired is compareImages that reports instead of stopping, and
// also ignores deletion times (both set them from their own clock).
func compareRepaired(t *testing.T, name, a, b string) {
	t.Helper()
	da, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	clearSuperTimes(da)
	clearSuperTimes(db)
	if !bytes.Equal(da, db) {
		for i := range da {
			if da[i] != db[i] {
				t.Errorf("%s: images differ first at byte %d (block %d of 4096)", name, i, i/4096)
				return
			}
		}
	}
}
