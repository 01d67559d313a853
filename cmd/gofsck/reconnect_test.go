package main

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// TestReconnectMatchesE2fsck: inodes and directories nothing refers to
// are linked into /lost+found as e2fsck does it (pass 4's "Connect to
// /lost+found", pass 3's unconnected directory and '..' fix), creating
// /lost+found when it is missing and growing it when it is full. gofsck
// -fy must print what e2fsck -fy prints and exit the same, leave an image
// e2fsck -fn finds clean, and /lost+found must hold the same names.
func TestReconnectMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	var unlinkMany []string
	for i := 0; i < 100; i++ {
		unlinkMany = append(unlinkMany, fmt.Sprintf("unlink big/f%03d", i))
	}
	cases := map[string][]string{
		"file":           {"unlink a/one"},
		"two-links":      {"link a/two a/three", "unlink a/two", "unlink a/three"},
		"dir":            {"unlink many"},
		"no-lost+found":  {"unlink a/one", "rmdir lost+found"},
		"lost+found-one": {"rmdir lost+found", "mkdir lost+found"},
		"expand":         append([]string{"rmdir lost+found", "mkdir lost+found"}, unlinkMany...),
	}
	specs := map[string]testfs.Spec{
		"ext4": {FSType: "ext4", Size: 16 << 20, Features: "^dir_index", Populate: populateReconnect},
		"ext2": {FSType: "ext2", Size: 16 << 20, Features: "^dir_index", Populate: populateReconnect},
	}
	for sname, spec := range specs {
		base := testfs.MkImage(t, spec)
		for cname, dmg := range cases {
			name := sname + "/" + cname
			img := testfs.CopyImage(t, base)
			testfs.Debugfs(t, img, dmg...)
			gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
			gout, gcode := runGofsck("-fy", gimg)
			eout, ecode := testfs.E2fsckInPlace(t, eimg, "-fy")
			if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
				t.Errorf("%s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", name, gcode, ecode, e, g)
				continue
			}
			if out, code := testfs.E2fsck(t, gimg, "-fn"); code != 0 {
				t.Errorf("%s: not clean after repair:\n%s", name, out)
			}
			if g, e := lostFoundNames(t, gimg), lostFoundNames(t, eimg); g != e {
				t.Errorf("%s: /lost+found holds %s, e2fsck's %s", name, g, e)
			}
		}
	}
}

func populateReconnect(tr *testfs.Tree) {
	populate(tr)
	for i := 0; i < 100; i++ {
		tr.File(fmt.Sprintf("big/f%03d", i), 10)
	}
}

// lostFoundNames lists /lost+found's entries with their inode numbers.
func lostFoundNames(t *testing.T, img string) string {
	t.Helper()
	out := testfs.DebugfsRO(t, img, "ls /lost+found")
	var names []string
	for _, f := range strings.Fields(out) {
		if strings.HasPrefix(f, "(") {
			continue
		}
		names = append(names, f)
	}
	sort.Strings(names)
	return strings.Join(names, " ")
}

// TestLostFoundGrowsThroughIndirectBlock: on a block-mapped filesystem
// with 1 KiB blocks, /lost+found's twelve direct blocks hold about a
// thousand "#N" entries; more disconnected files make pass 4 expand it
// past them, which needs an indirect block (e2fsck_expand_directory over
// the library's iterator with BLOCK_FLAG_APPEND). The same happens in pass
// 3 when /lost+found is full (hard links with short names fill it) and a
// directory is disconnected: e2fsck reports "Unconnected directory inode
// 13 (was in /)", expands /lost+found and reconnects it. gofsck -fy must
// print e2fsck's transcript, exit the same, and leave the same image (but
// for the inode times each program stamps), which e2fsck -fn finds clean.
func TestLostFoundGrowsThroughIndirectBlock(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	manyFiles := func(tr *testfs.Tree) {
		for i := 0; i < 1300; i++ {
			tr.File(fmt.Sprintf("d/f%04d", i), 10)
		}
	}
	fullLPF := []string{}
	for i := 0; i < 1100; i++ {
		fullLPF = append(fullLPF, fmt.Sprintf("ln /f /lost+found/%x", 0x1000+i))
	}
	cases := []struct {
		name     string
		populate func(*testfs.Tree)
		damage   []string
		want     string // in e2fsck's transcript
	}{
		{"pass4-files", manyFiles, []string{"clri d"}, "No room in lost+found directory.  Expand? yes"},
		{"pass3-dir", func(tr *testfs.Tree) {
			tr.Dir("a")
			tr.File("b/c", 10)
			tr.File("f", 10)
		}, append(fullLPF, "unlink /b"), "Unconnected directory inode 13 (was in /)\nConnect to /lost+found? yes\n\nNo room in lost+found directory.  Expand? yes"},
	}
	for _, fstype := range []string{"ext2", "ext3"} {
		for _, tc := range cases {
			name := fstype + "/" + tc.name
			spec := testfs.Spec{FSType: fstype, Size: 8 << 20, BlockSize: 1024, Inodes: 2048, Populate: tc.populate}
			img := testfs.MkImage(t, spec)
			testfs.Debugfs(t, img, tc.damage...)
			gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
			gout, gcode := runGofsck("-fy", gimg)
			eout, ecode := testfs.E2fsckInPlace(t, eimg, "-fy")
			if !strings.Contains(eout, tc.want) {
				t.Fatalf("%s: e2fsck did not expand /lost+found as expected:\n%s", name, eout)
			}
			if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
				t.Errorf("%s: exit %d vs e2fsck %d; output differs:\n%s", name, gcode, ecode, firstLineDiff(e, g))
				continue
			}
			if out, code := testfs.E2fsck(t, gimg, "-fn"); code != 0 {
				t.Errorf("%s: not clean after repair:\n%s", name, out)
			}
			compareImagesButInodeTimes(t, name, gimg, eimg)
		}
	}
}

// firstLineDiff shows where two transcripts part: the first line that
// differs, with a few lines of context, from e2fsck's (want) and gofsck's.
func firstLineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	from := max(0, i-3)
	show := func(l []string) string { return strings.Join(l[min(from, len(l)):min(i+4, len(l))], "\n") }
	return fmt.Sprintf("at line %d\n--- e2fsck\n%s\n--- gofsck\n%s", i+1, show(w), show(g))
}

// TestRootNotDirDeepTree: the root becomes a regular file on an ext2
// filesystem whose first directory holds a chain of 29 nested directories
// (a file in each). Pass 1 clears the root, pass 3 recreates it and
// reconnects every top-level directory; the message for a directory
// checked after the chain names a path 30 components deep, longer than the
// cache of directory names the path lookup keeps, so a name taken from a
// cache entry must survive that entry being refilled by the lookup of its
// parents. gofsck -fy must print e2fsck's transcript (-fn too, which
// stops in pass 3), exit
// the same and leave an image e2fsck -fn finds clean.
func TestRootNotDirDeepTree(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	spec := testfs.Spec{FSType: "ext2", Size: 16 << 20, BlockSize: 1024, Populate: func(tr *testfs.Tree) {
		p := "deep"
		for i := 1; i <= 29; i++ {
			p += fmt.Sprintf("/l%d", i)
			tr.File(fmt.Sprintf("%s/f%d", p, i), 10)
		}
		tr.File("zz/y/q", 10)
	}}
	img := testfs.MkImage(t, spec)
	testfs.Debugfs(t, img, "sif <2> mode 0100644")
	for _, opt := range []string{"-fn", "-fy"} {
		gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
		gout, gcode := runGofsck(opt, gimg)
		eout, ecode := testfs.E2fsckInPlace(t, eimg, opt)
		if opt == "-fy" && !strings.Contains(eout, "/l28)") {
			t.Fatalf("%s: e2fsck names no deep path:\n%s", opt, eout)
		}
		if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
			t.Errorf("%s: exit %d vs e2fsck %d; output differs:\n%s", opt, gcode, ecode, firstLineDiff(e, g))
			continue
		}
		if opt == "-fy" {
			if out, code := testfs.E2fsck(t, gimg, "-fn"); code != 0 {
				t.Errorf("not clean after repair:\n%s", out)
			}
		}
	}
}
