package test

import (
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// TestCasefoldCheckEncoding: -E check_encoding validates the names of
// casefolded directories without the strict flag and compares them folded
// in pass 2, as e2fsck does: a name with a bad byte is reported and
// fixed, and the '.' it becomes makes a duplicate of another name that
// differs only in case; pass 3A renames it. -fn and -fy are compared with
// e2fsck (transcript, exit code, repaired image) and -fn writes nothing.
func TestCasefoldCheckEncoding(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	testfs.GofsckPath(t)
	base := testfs.MkImage(t, casefoldSpec([]string{"-g", "1024"}))
	c := &cx{t: t, img: base}
	// "BET\xff" becomes "BET." once fixed, the same name as "bet." folded.
	c.cfRename(c.cfFind("/cf/sub", "Gamma"), []byte("BET\xff"))
	c.cfRename(c.cfFind("/cf/sub", "beta"), []byte("bet."))
	for _, mode := range []string{"-fn", "-fy"} {
		eimg, gimg := testfs.CopyImage(t, base), testfs.CopyImage(t, base)
		before := testfs.FileSHA256(t, gimg)
		eout, eexit := testfs.E2fsckInPlace(t, eimg, mode, "-E", "check_encoding")
		gout, gexit := testfs.Gofsck(t, gimg, mode, "-E", "check_encoding")
		if gexit != eexit || transcript(gout, gimg) != transcript(eout, eimg) {
			t.Errorf("%s -E check_encoding: gofsck exit %d, e2fsck %d; first difference: %s\n--- e2fsck:\n%s--- gofsck:\n%s",
				mode, gexit, eexit, firstDiffLine(transcript(eout, eimg), transcript(gout, gimg)), eout, gout)
		}
		if mode == "-fn" {
			if testfs.FileSHA256(t, gimg) != before {
				t.Error("gofsck -fn wrote to the image")
			}
			continue
		}
		if g, e := treeDigest(t, gimg), treeDigest(t, eimg); g != e {
			t.Errorf("repaired trees differ: %s", firstDiffLine(e, g))
		}
		if out, exit := testfs.E2fsck(t, gimg, "-fn", "-E", "check_encoding"); exit != 0 {
			t.Errorf("e2fsck -fn after gofsck -fy: exit %d\n%s", exit, out)
		}
	}
	// Without the option (and without strict mode) the names are not
	// checked, and their bytes differ: nothing to report.
	if out, exit := testfs.Gofsck(t, testfs.CopyImage(t, base), "-fn"); exit != 0 {
		t.Errorf("gofsck -fn without check_encoding: exit %d\n%s", exit, out)
	}
}

// TestCasefoldInlineDuplicate: in strict mode pass 2 finds names of an
// inline casefolded directory that differ only in case, and pass 3A,
// which leaves inline directories alone, neither renames them nor (with
// -n) reports them, as e2fsck.
func TestCasefoldInlineDuplicate(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	testfs.GofsckPath(t)
	img := testfs.MkImage(t, testfs.Spec{Size: 16 * mib, FSType: "ext4", Features: "casefold,inline_data,^metadata_csum",
		Debugfs: []string{"mkdir /d", "sif /d flags 0x50000000", "write /dev/null /d/Abc", "write /dev/null /d/ABC", "write /dev/null /d/x"}})
	(&cx{t: t, img: img}).cfStrict()
	for _, mode := range []string{"-fn", "-fy"} {
		eimg, gimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
		eout, eexit := testfs.E2fsckInPlace(t, eimg, mode)
		gout, gexit := testfs.Gofsck(t, gimg, mode)
		if !strings.Contains(eout, "Duplicate entry 'ABC' found.") {
			t.Fatalf("e2fsck %s did not find the duplicate:\n%s", mode, eout)
		}
		if gexit != eexit || transcript(gout, gimg) != transcript(eout, eimg) {
			t.Errorf("%s: gofsck exit %d, e2fsck %d; first difference: %s\n--- e2fsck:\n%s--- gofsck:\n%s",
				mode, gexit, eexit, firstDiffLine(transcript(eout, eimg), transcript(gout, gimg)), eout, gout)
		}
	}
}
