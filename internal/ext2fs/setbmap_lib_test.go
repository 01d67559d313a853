//go:build libext2fs

package ext2fs

// A differential test of set_bmap against the real library: the same
// random sequence of ext2fs_extent_set_bmap calls (map holes, often next
// to a mapped neighbour so that extents merge; unmap; remap; some
// uninitialised) is applied to one file by a small C program linked with
// libext2fs and by the handle of setbmap.go, and the trees must
// come out the same: every call's success, debugfs' extent listing, the
// inode's block count and the bytes of every tree block. It needs a C
// compiler and libext2fs's headers (libext2fs-dev), so it only builds
// with the libext2fs tag:
//
//	go test -tags libext2fs ./internal/ext2fs -run TestSetBmapAgainstLibext2fs

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// libHarness is the C side: it opens the image read-write, reads the
// bitmaps, opens an extent handle on the inode and applies each line
// "logical physical uninit" with ext2fs_extent_set_bmap, printing the
// error code of each call.
const libHarness = `#include <stdio.h>
#include <stdlib.h>
#include <ext2fs/ext2fs.h>
int main(int argc, char **argv) {
	ext2_filsys fs;
	ext2_extent_handle_t h;
	unsigned long long l, p;
	int u;
	FILE *ops;
	if (argc != 4 || ext2fs_open(argv[1], EXT2_FLAG_RW | EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &fs) ||
	    ext2fs_read_bitmaps(fs) || ext2fs_extent_open(fs, atoi(argv[2]), &h) || !(ops = fopen(argv[3], "r")))
		return 2;
	while (fscanf(ops, "%llu %llu %d", &l, &p, &u) == 3)
		printf("%ld\n", (long) ext2fs_extent_set_bmap(h, l, p, u ? EXT2_EXTENT_SET_BMAP_UNINIT : 0));
	ext2fs_extent_free(h);
	return ext2fs_close_free(&fs) ? 2 : 0;
}
`

// libIterHarness walks the inode with ext2fs_block_iterate3 (flags from
// the command line) and a visitor that prints each block offered and, by
// a rule both sides share (iterChoice), remaps data blocks to new ones
// from a counter or unmaps them.
const libIterHarness = `#include <stdio.h>
#include <stdlib.h>
#include <ext2fs/ext2fs.h>
static unsigned long long next, seed;
static int visit(ext2_filsys fs, blk64_t *b, e2_blkcnt_t cnt, blk64_t ref, int off, void *p) {
	unsigned long long v;
	printf("%lld %llu\n", (long long) cnt, (unsigned long long) *b);
	if (cnt < 0)
		return 0;
	v = ((unsigned long long) cnt * 2654435761ULL + seed) % 7;
	if (v == 0) {
		*b = next++;
		return BLOCK_CHANGED;
	}
	if (v == 1) {
		*b = 0;
		return BLOCK_CHANGED;
	}
	return 0;
}
int main(int argc, char **argv) {
	ext2_filsys fs;
	errcode_t e;
	if (argc != 6 || ext2fs_open(argv[1], EXT2_FLAG_RW | EXT2_FLAG_64BITS, 0, 0, unix_io_manager, &fs) ||
	    ext2fs_read_bitmaps(fs))
		return 2;
	next = strtoull(argv[3], 0, 10);
	seed = strtoull(argv[4], 0, 10);
	e = ext2fs_block_iterate3(fs, atoi(argv[2]), atoi(argv[5]), 0, visit, 0);
	printf("end %ld\n", (long) e);
	return ext2fs_close_free(&fs) ? 2 : 0;
}
`

// iterChoice is libIterHarness's rule for data block cnt: 0 remap, 1
// unmap, else leave.
func iterChoice(cnt int64, seed uint64) uint64 {
	return (uint64(cnt)*2654435761 + seed) % 7
}

// setBmapOp is one call.
type setBmapOp struct {
	l, p   uint64
	uninit bool
}

// randomSetBmapOps draws n calls against the mapping m (changed as the
// calls would change it); new physical blocks come from next upwards.
func randomSetBmapOps(r *rand.Rand, m map[uint64]uint64, maxL, next uint64, n int) []setBmapOp {
	var ops []setBmapOp
	for len(ops) < n {
		uninit := r.Intn(7) == 0
		mapped := make([]uint64, 0, len(m))
		for l := range m {
			mapped = append(mapped, l)
		}
		slices.Sort(mapped)
		switch k := r.Intn(20); {
		case k == 0 && len(mapped) > 0:
			// The file's last blocks, as a truncation unmaps them:
			// the last leaf empties and goes.
			for i := 0; i < 1+r.Intn(12) && i < len(mapped); i++ {
				l := mapped[len(mapped)-1-i]
				delete(m, l)
				ops = append(ops, setBmapOp{l, 0, uninit})
			}
		case k < 9:
			l := uint64(r.Int63n(int64(maxL)))
			if _, ok := m[l]; ok {
				continue
			}
			var p uint64
			prev, hasPrev := m[l-1]
			nxt, hasNext := m[l+1]
			switch {
			case hasPrev && l > 0 && r.Intn(2) == 0:
				p = prev + 1
			case hasNext && r.Intn(2) == 0:
				p = nxt - 1
			default:
				next += uint64(1 + r.Intn(3))
				p = next
			}
			m[l] = p
			ops = append(ops, setBmapOp{l, p, uninit})
		case k < 15 && len(mapped) > 0:
			l := mapped[r.Intn(len(mapped))]
			delete(m, l)
			ops = append(ops, setBmapOp{l, 0, uninit})
		case len(mapped) > 0:
			// Remapped next to a neighbour's block (joining it) or
			// to a new one.
			l := mapped[r.Intn(len(mapped))]
			prev, hasPrev := m[l-1]
			nxt, hasNext := m[l+1]
			var p uint64
			switch {
			case hasPrev && l > 0 && r.Intn(3) == 0:
				p = prev + 1
			case hasNext && r.Intn(3) == 0:
				p = nxt - 1
			default:
				next++
				p = next
			}
			if p == m[l] {
				continue
			}
			m[l] = p
			ops = append(ops, setBmapOp{l, p, uninit})
		}
	}
	return ops
}

// buildHarness compiles a C harness against libext2fs and returns the
// program's path.
func buildHarness(t *testing.T, code string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "harness.c")
	bin := filepath.Join(dir, "harness")
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cc", "-o", bin, src, "-lext2fs", "-lcom_err").CombinedOutput(); err != nil {
		t.Fatalf("building the libext2fs harness (needs cc and libext2fs-dev): %v\n%s", err, out)
	}
	return bin
}

func TestSetBmapAgainstLibext2fs(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	bin := buildHarness(t, libHarness)
	cases := []struct {
		bs, chunks int64
		ops        int
		seed       int64
	}{
		{1024, 3, 300, 1},    // from the root: it splits, the tree grows
		{1024, 60, 400, 2},   // depth 1, leaves fill and split
		{1024, 250, 3000, 3}, // depth 2
		{4096, 100, 3000, 4},
		{1024, 250, 3000, 5},
		{4096, 400, 3000, 6},
		{1024, 20, 2000, 7},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("bs%d-chunks%d-seed%d", tc.bs, tc.chunks, tc.seed), func(t *testing.T) {
			img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 64 << 20, BlockSize: int(tc.bs),
				Populate: func(tr *testfs.Tree) { tr.Sparse("a/big", tc.chunks*8*tc.bs, 3*tc.bs, 8*tc.bs) }})
			ino := testfs.Ino(t, img, "/a/big")
			start := libMapping(t, img, ino)
			total := uint64(64<<20) / uint64(tc.bs)
			ops := randomSetBmapOps(rand.New(rand.NewSource(tc.seed)), start, uint64(tc.chunks*8+40), total/2, tc.ops)
			var list strings.Builder
			for _, o := range ops {
				u := 0
				if o.uninit {
					u = 1
				}
				fmt.Fprintf(&list, "%d %d %d\n", o.l, o.p, u)
			}
			opsFile := filepath.Join(t.TempDir(), "ops")
			if err := os.WriteFile(opsFile, []byte(list.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			limg, gimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
			out, err := exec.Command(bin, limg, fmt.Sprint(ino), opsFile).Output()
			if err != nil {
				t.Fatalf("harness: %v", err)
			}
			libErrs := strings.Fields(string(out))
			goErrs := goSetBmap(t, gimg, ino, ops)
			if len(libErrs) != len(ops) {
				t.Fatalf("harness ran %d of %d calls", len(libErrs), len(ops))
			}
			for i := range ops {
				if (libErrs[i] != "0") != (goErrs[i] != nil) {
					t.Fatalf("call %d %+v: library error %s, gofsck %v", i, ops[i], libErrs[i], goErrs[i])
				}
			}
			lt, gt := treeDump(t, limg, ino, tc.bs), treeDump(t, gimg, ino, tc.bs)
			if lt.listing != gt.listing || lt.stat != gt.stat {
				t.Fatalf("trees differ:\n--- library\n%s%s--- gofsck\n%s%s", lt.listing, lt.stat, gt.listing, gt.stat)
			}
			if !bytes.Equal(lt.nodes, gt.nodes) {
				t.Fatal("tree blocks differ")
			}
			if !strings.Contains(lt.listing, " 0/ ") {
				t.Fatalf("no tree:\n%s", lt.listing)
			}
		})
	}
}

// libMapping is the file's mapping, read with the handle.
func libMapping(t *testing.T, img string, ino uint32) map[uint64]uint64 {
	fsys := openRW(t, img)
	x, err := OpenExtent(fsys, ino, readInode(t, fsys, ino))
	if err != nil {
		t.Fatal(err)
	}
	return leafMap(t, x)
}

// goSetBmap applies ops with the handle, allocating and freeing tree
// blocks in the on-disk bitmap as the library does without e2fsck's
// callbacks, and returns each call's error.
func goSetBmap(t *testing.T, img string, ino uint32, ops []setBmapOp) []error {
	fsys := openRW(t, img)
	x, err := OpenExtent(fsys, ino, readInode(t, fsys, ino))
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, len(ops))
	for i, o := range ops {
		errs[i] = x.SetBmap(o.l, o.p, o.uninit)
	}
	return errs
}

type treeState struct {
	listing, stat string
	nodes         []byte
}

var etbRE = regexp.MustCompile(`\(ETB\d+\):(\d+)`)

// treeDump is debugfs' extent listing of ino, its stat without times
// and checksum, and the bytes of its tree blocks.
func treeDump(t *testing.T, img string, ino uint32, bs int64) treeState {
	var s treeState
	s.listing = testfs.DebugfsRO(t, img, fmt.Sprintf("ex <%d>", ino))
	st := testfs.DebugfsRO(t, img, fmt.Sprintf("stat <%d>", ino))
	var keep []string
	for _, l := range strings.Split(st, "\n") {
		if !strings.Contains(l, "time") && !strings.Contains(l, "checksum") {
			keep = append(keep, l)
		}
	}
	s.stat = strings.Join(keep, "\n")
	data, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range etbRE.FindAllStringSubmatch(st, -1) {
		var b int64
		fmt.Sscan(m[1], &b)
		s.nodes = append(s.nodes, data[b*bs:(b+1)*bs]...)
	}
	return s
}

// TestBlockIterateAgainstLibext2fs walks a file of many extents with the
// library's ext2fs_block_iterate3 and with the handle's iterator, a
// visitor remapping or unmapping blocks by a shared rule: the blocks
// offered (in order, with their counts), the iterator's error and the
// resulting trees must be the same, with and without
// BLOCK_FLAG_DEPTH_TRAVERSE. The block-mapped cases do the same with
// BlockIter over an ext2 file with indirect, doubly and triply indirect
// blocks, under each of the library's flags; the resulting images must
// be the same bytes.
func TestBlockIterateAgainstLibext2fs(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	bin := buildHarness(t, libIterHarness)
	for _, tc := range []struct {
		bs, chunks int64
		seed       uint64
		flags      BlockFlags // the same values as the library's
		blockMap   bool
	}{
		{1024, 3, 1, 0, false}, {1024, 84, 2, 0, false}, {1024, 250, 3, 0, false}, {4096, 400, 4, 0, false},
		{1024, 250, 5, BlockFlagDepthTraverse, false}, {1024, 84, 6, BlockFlagDepthTraverse, false},
		{1024, 80, 7, 0, true}, {1024, 80, 8, BlockFlagDepthTraverse, true}, {1024, 80, 9, BlockFlagDataOnly, true},
		{1024, 30, 10, BlockFlagAppend, true}, {4096, 3000, 11, 0, true},
	} {
		t.Run(fmt.Sprintf("bs%d-chunks%d-seed%d-flags%d-map%v", tc.bs, tc.chunks, tc.seed, tc.flags, tc.blockMap), func(t *testing.T) {
			spec := testfs.Spec{FSType: "ext4", Size: 64 << 20, BlockSize: int(tc.bs),
				Populate: func(tr *testfs.Tree) { tr.Sparse("a/big", tc.chunks*8*tc.bs, 3*tc.bs, 8*tc.bs) }}
			if tc.blockMap {
				// One block every 128 blocks: a TIND tree with 1 KiB
				// blocks.
				spec.FSType = "ext2"
				spec.Populate = func(tr *testfs.Tree) { tr.Sparse("a/big", tc.chunks*128*1024, tc.bs, 128*1024) }
			}
			img := testfs.MkImage(t, spec)
			ino := testfs.Ino(t, img, "/a/big")
			next := uint64(64<<20) / uint64(tc.bs) / 2
			limg, gimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
			out, err := exec.Command(bin, limg, fmt.Sprint(ino), fmt.Sprint(next), fmt.Sprint(tc.seed), fmt.Sprint(int(tc.flags))).Output()
			if err != nil {
				t.Fatalf("harness: %v", err)
			}
			fsys := openRW(t, gimg)
			var got strings.Builder
			visit := func(blk *uint64, cnt int64) int {
				fmt.Fprintf(&got, "%d %d\n", cnt, *blk)
				if cnt < 0 {
					return 0
				}
				switch iterChoice(cnt, tc.seed) {
				case 0:
					*blk = next
					next++
					return BlockChanged
				case 1:
					*blk = 0
					return BlockChanged
				}
				return 0
			}
			var ierr error
			if tc.blockMap {
				n := readInode(t, fsys, ino)
				it := &BlockIter{FS: fsys.FS, IO: fsys.IO, Flags: tc.flags}
				var changed bool
				changed, ierr = it.Iterate(n, func(blk *uint64, cnt int64, _ uint64, _ int) int { return visit(blk, cnt) })
				if changed {
					fsys.IO.WriteInode(ino, n)
				}
			} else {
				x, err := OpenExtent(fsys, ino, readInode(t, fsys, ino))
				if err != nil {
					t.Fatal(err)
				}
				_, ierr = x.Iterate(tc.flags, visit)
			}
			code := "0"
			if ierr != nil {
				code = ierr.Error()
			}
			fmt.Fprintf(&got, "end %s\n", code)
			// The visits must be the same; of the end line, only
			// whether there was an error (the library prints its code).
			want, have := strings.TrimSpace(string(out)), strings.TrimSpace(got.String())
			wi, hi := strings.LastIndex(want, "\n"), strings.LastIndex(have, "\n")
			if wi < 0 || hi < 0 || want[:wi] != have[:hi] || (want[wi+1:] == "end 0") != (have[hi+1:] == "end 0") {
				t.Fatalf("visits differ:\n--- library\n%s\n--- gofsck\n%s", tail(want), tail(have))
			}
			if min := 2 * tc.chunks; strings.Count(want, "\n") < int(min) && (!tc.blockMap || strings.Count(want, "\n") < int(tc.chunks)) {
				t.Fatalf("only %d visits", strings.Count(want, "\n"))
			}
			if tc.blockMap {
				lb, _ := os.ReadFile(limg)
				gb, _ := os.ReadFile(gimg)
				if lt, gt := testfs.Stat(t, limg, "/a/big"), testfs.Stat(t, gimg, "/a/big"); lt != gt {
					t.Fatalf("maps differ:\n--- library\n%s--- gofsck\n%s", lt, gt)
				}
				if !bytes.Equal(lb, gb) {
					t.Fatal("images differ")
				}
				return
			}
			lt, gt := treeDump(t, limg, ino, tc.bs), treeDump(t, gimg, ino, tc.bs)
			if lt.listing != gt.listing || lt.stat != gt.stat || !bytes.Equal(lt.nodes, gt.nodes) {
				t.Fatalf("trees differ:\n--- library\n%s%s--- gofsck\n%s%s", lt.listing, lt.stat, gt.listing, gt.stat)
			}
		})
	}
}

// tail is the last lines of s.
func tail(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}
