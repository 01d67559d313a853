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
