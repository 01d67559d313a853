package check_test

import (
	"os"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// TestHostileBadBlocksInode gives inode 1 a block map that loops: a
// double indirect block listing itself everywhere (every indirect block
// and every listed block is that same block, 65536 times; a triple
// indirect one, which e2fsck walks 2^24 times, is cut at gofsck's visit
// budget). gofsck must finish -fn and -fy in bounded time without
// crashing, -n must not write, and the exit codes must be e2fsck's.
func TestHostileBadBlocksInode(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	bin := testfs.GofsckPath(t)
	e2fsck := e2fsckPath(t)
	for _, level := range []int{13} {
		r := base(t, "ext2")
		// The last block is free in the base image.
		blk := r.f.BlocksCount - 1
		b := r.block(blk)
		for i := 0; i+4 <= len(b); i += 4 {
			put32(b, i, uint32(blk))
		}
		n := r.inode(1)
		put32(n.IBlock(), 4*level, uint32(blk))
		img := r.write()
		before := testfs.FileSHA256(t, img)
		g := runBounded(t, hostileLimit, bin, "-fn", img)
		if g.timedOut {
			t.Fatalf("level %d: gofsck -fn did not finish within %v", level, hostileLimit)
		}
		if strings.Contains(g.out, "panic:") || strings.Contains(g.out, "goroutine ") {
			t.Fatalf("level %d: gofsck crashed:\n%s", level, g.out)
		}
		if testfs.FileSHA256(t, img) != before {
			t.Errorf("level %d: -n modified the image", level)
		}
		e := runBounded(t, hostileLimit, e2fsck, "-fn", img)
		if !e.timedOut && e.exit != g.exit {
			t.Errorf("level %d: -fn exit %d, e2fsck %d", level, g.exit, e.exit)
		}
		cp := img + ".y"
		if err := os.WriteFile(cp, mustRead(t, img), 0o644); err != nil {
			t.Fatal(err)
		}
		y := runBounded(t, hostileLimit, bin, "-fy", cp)
		if y.timedOut || strings.Contains(y.out, "panic:") {
			t.Fatalf("level %d: gofsck -fy did not finish cleanly:\n%s", level, lastLine(y.out))
		}
		if out, code := testfs.E2fsck(t, cp, "-fn"); code != 0 && y.exit < 4 {
			t.Errorf("level %d: gofsck -fy exit %d but the image is not clean:\n%s", level, y.exit, out)
		}
	}
}
