package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// TestFastCommitScanMatchesE2fsck recovers the journal of the e2fsprogs
// image j_recover_fast_commit (a full commit followed by fast commits)
// with the fast-commit area damaged in the ways e2fsck's scan tells apart,
// with gofsck and with e2fsck: same transcript and exit code, same image
// block for block (except the superblock's times and s_kbytes_written).
// A first record that is not a head leaves only the normal log to replay;
// a bad tail checksum, a head for another transaction, a head with unknown
// features and an unknown record each fail the recovery before anything
// is replayed. The undamaged image needs the fast commits applied, which
// gofsck does not do: it must stop with exit 8 and write nothing.
func TestFastCommitScanMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	src := filepath.Join(testCorpusDir(t), "j_recover_fast_commit", "image.gz")
	img := filepath.Join(t.TempDir(), "fc.img")
	testfs.Decompress(t, src, img)
	// The journal has s_maxlen 1040 with 16 fast-commit blocks: the
	// fast-commit area starts at log block 1040-16+1.
	const fcFirst = 1025
	bs := testfs.BlockSize(t, img)
	fcOff := int64(testfs.Bmap(t, img, "<8>", fcFirst)) * bs
	first := testfs.ReadAt(t, img, fcOff, 64)
	if binary.LittleEndian.Uint16(first) != 9 {
		t.Fatalf("log block %d does not start with a fast-commit head: % x", fcFirst, first[:16])
	}
	// Records: HEAD (4+8 bytes) at 0, then INODE at 12.
	for _, c := range []struct {
		name string
		off  int64 // in the first fast-commit block
		val  []byte
		want string // in e2fsck's output
	}{
		{"no-head", 0, []byte{7, 0}, "recovering journal"},
		{"bad-crc", 12 + 4 + 8, []byte{0x5a}, "Journal checksum error found"},
		{"head-tid", 4 + 4, []byte{0x77}, "Invalid argument while recovering journal"},
		{"head-features", 4, []byte{1}, "Operation not supported while recovering journal"},
		{"unknown-tag", 12, []byte{0x55, 0}, "Operation canceled while recovering journal"},
	} {
		for _, mode := range []string{"-fy", "-p"} {
			base := testfs.CopyImage(t, img)
			testfs.WriteAt(t, base, fcOff+c.off, c.val)
			gimg, eimg := testfs.CopyImage(t, base), testfs.CopyImage(t, base)
			gout, gcode := runGofsck(mode, gimg)
			eout, ecode := testfs.E2fsckInPlace(t, eimg, mode)
			if !strings.Contains(eout, c.want) {
				t.Errorf("%s %s: e2fsck does not say %q:\n%s", c.name, mode, c.want, eout)
			}
			if g, e := normProg(norm(gout, gimg)), normProg(norm(eout, eimg)); g != e || gcode != ecode {
				t.Errorf("%s %s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", c.name, mode, gcode, ecode, e, g)
			}
			compareRecovered(t, c.name+" "+mode, gimg, eimg)
		}
	}
	gimg := testfs.CopyImage(t, img)
	out, code := runGofsck("-fy", gimg)
	if code != 8 || !strings.Contains(out, "fast commits") {
		t.Errorf("fast commits to apply: exit %d, want 8 and a refusal:\n%s", code, out)
	}
	if !sameFile(t, gimg, img) {
		t.Errorf("a refused fast-commit recovery wrote to the image")
	}
	_ = os.Remove(gimg)
}

// normProg names the program "e2fsck" in com_err lines, whatever path it
// ran from.
func normProg(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if p, rest, ok := strings.Cut(l, ": "); ok && !strings.Contains(p, " ") &&
			(p == "gofsck" || filepath.Base(p) == "e2fsck") {
			l = "e2fsck: " + rest
		}
		b.WriteString(l)
	}
	return b.String()
}
