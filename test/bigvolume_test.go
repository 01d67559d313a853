package test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

// bigTimeout bounds one checker run on the 16 TiB image (e2fsck takes
// 5-20 s on this machine).
const bigTimeout = 5 * time.Minute

// newBigImage makes a 16 TiB ext4 image (2^32 blocks, 131072 groups, all
// but a few BLOCK_UNINIT) on a tmpfs, as an administrator's mke2fs would
// with lazy initialisation, and returns its path and the machine-readable
// group table (dumpe2fs -g).
func newBigImage(t *testing.T) (string, [][]string) {
	t.Helper()
	testfs.RequireE2fsprogs(t)
	img := testfs.SparseDir(t, "3G") + "/big.img"
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(16 << 40); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if out, err := exec.Command("mke2fs", "-F", "-q", "-t", "ext4", "-U", testfs.UUID,
		"-E", "lazy_itable_init=1,lazy_journal_init=1,hash_seed="+testfs.UUID, img).CombinedOutput(); err != nil {
		t.Fatalf("mke2fs: %v\n%s", err, out)
	}
	out, err := exec.Command("dumpe2fs", "-g", img).Output()
	if err != nil {
		t.Fatalf("dumpe2fs -g: %v", err)
	}
	var groups [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n")[1:] {
		groups = append(groups, strings.Split(l, ":"))
	}
	if len(groups) != 131072 {
		t.Fatalf("%d groups, want 131072", len(groups))
	}
	return img, groups
}

// bothCheck runs e2fsck on e and gofsck on g with the same flags at the
// same time (e2fsck takes one CPU; the two runs are independent).
func bothCheck(t *testing.T, e, g, mode string) (eout string, ecode int, gout string, gcode int) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		// run fails the test only when e2fsck cannot start: Goexit
		// then still closes done.
		defer close(done)
		eout, ecode = testfs.E2fsckInPlaceTimeout(t, bigTimeout, e, mode)
	}()
	gout, gcode = testfs.GofsckTimeout(t, bigTimeout, g, mode)
	<-done
	return eout, ecode, gout, gcode
}

// bigNorm drops the version line and names the image "IMG".
func bigNorm(out, img string) string {
	out = strings.ReplaceAll(out, img, "IMG")
	if i := strings.IndexByte(out, '\n'); i >= 0 && (strings.HasPrefix(out, "e2fsck ") || strings.HasPrefix(out, "gofsck ")) {
		out = out[i+1:]
	}
	return out
}

// groupTableDiff compares what two repairs of the 16 TiB image left in
// their group tables: every descriptor's bytes (counts, flags, unused
// inodes, checksums) and the bitmap blocks of the groups whose
// descriptors say they are initialised, at the places dumpe2fs -g gives
// (groups; column 4 the block bitmap, 5 the inode bitmap). That is what
// dumpe2fs's per-group report is made of, read in a fraction of a second
// where dumpe2fs takes 15-50 s to print 2^32 blocks' free ranges. It
// returns "" when they agree, else where they first differ.
func groupTableDiff(t *testing.T, a, b string, groups [][]string) string {
	t.Helper()
	const bs, descSize = 4096, 64
	fa, fb := openImage(t, a), openImage(t, b)
	read := func(f *os.File, off int64, buf []byte) {
		if _, err := f.ReadAt(buf, off); err != nil {
			t.Fatalf("%s: read at %d: %v", f.Name(), off, err)
		}
	}
	// The primary descriptors follow the superblock's block (the image
	// has neither meta_bg nor a 1 KiB block size).
	da, db := make([]byte, len(groups)*descSize), make([]byte, len(groups)*descSize)
	read(fa, bs, da)
	read(fb, bs, db)
	ba, bb := make([]byte, bs), make([]byte, bs)
	for g := range groups {
		ga, gb := ondisk.GroupDesc(da[g*descSize:(g+1)*descSize]), ondisk.GroupDesc(db[g*descSize:(g+1)*descSize])
		if !bytes.Equal(ga, gb) {
			return fmt.Sprintf("group %d's descriptor: flags %#x free blocks %d inodes %d vs flags %#x free blocks %d inodes %d",
				g, ga.Flags(), ga.FreeBlocks(), ga.FreeInodes(), gb.Flags(), gb.FreeBlocks(), gb.FreeInodes())
		}
		for _, m := range []struct {
			col    int
			uninit uint16
			what   string
		}{{4, ondisk.BgBlockUninit, "block"}, {5, ondisk.BgInodeUninit, "inode"}} {
			if ga.Flags()&m.uninit != 0 {
				continue
			}
			blk, err := strconv.ParseInt(groups[g][m.col], 10, 64)
			if err != nil {
				t.Fatalf("group %d's %s bitmap in dumpe2fs -g: %q", g, m.what, groups[g][m.col])
			}
			read(fa, blk*bs, ba)
			read(fb, blk*bs, bb)
			if !bytes.Equal(ba, bb) {
				return fmt.Sprintf("group %d's %s bitmap (block %d)", g, m.what, blk)
			}
		}
	}
	return ""
}

func openImage(t *testing.T, img string) *os.File {
	t.Helper()
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestBigVolumeMatchesE2fsck checks a 16 TiB image, clean and then with
// faults in the last groups (a used inode-table block freed in the last
// flex group's bitmap; a BLOCK_UNINIT group's free count raised past
// what it holds, its descriptor checksum left wrong; blocks marked used
// in an uninitialised group made initialised), with gofsck and e2fsck
// under -fn, -fy and -p: same transcript, exit code and, after a repair,
// the same group table, which e2fsck then finds clean.
func TestBigVolumeMatchesE2fsck(t *testing.T) {
	testfs.RequireLong(t) // 16 TiB sparse images: minutes
	t.Parallel()
	img, groups := newBigImage(t)
	compare := func(what, mode, path string, wantExit int) (string, int) {
		t.Helper()
		e := testfs.CopySparse(t, path, "e.img")
		g := testfs.CopySparse(t, path, "g.img")
		eout, ecode, gout, gcode := bothCheck(t, e, g, mode)
		if bigNorm(eout, e) != bigNorm(gout, g) || ecode != gcode {
			t.Errorf("%s %s: exit %d vs e2fsck %d\n--- e2fsck\n%s--- gofsck\n%s", what, mode, gcode, ecode, eout, gout)
		}
		if wantExit >= 0 && ecode != wantExit {
			t.Errorf("%s %s: e2fsck exits %d, the case expects %d:\n%s", what, mode, ecode, wantExit, eout)
		}
		if mode != "-fn" {
			if d := groupTableDiff(t, e, g, groups); d != "" {
				t.Errorf("%s %s: the repaired group tables differ: %s", what, mode, d)
			}
			if what == "faults" && groupTableDiff(t, path, g, groups) == "" {
				t.Errorf("%s %s: the repaired group table is the damaged one: the comparison sees nothing", what, mode)
			}
			if out, code := testfs.E2fsckInPlaceTimeout(t, bigTimeout, g, "-fn"); code != 0 && mode == "-fy" {
				t.Errorf("%s %s: e2fsck finds gofsck's repair not clean (exit %d):\n%s", what, mode, code, out)
			}
		}
		return eout, ecode
	}
	compare("clean", "-fn", img, 0)

	// The faults, placed from the group table: the last group's inode
	// table (in its flex group's leader), a BLOCK_UNINIT group before it
	// and one before that.
	last := groups[len(groups)-1]
	itable, err := strconv.ParseUint(strings.Split(last[6], "-")[0], 10, 64)
	if err != nil {
		t.Fatalf("inode table of the last group: %q", last[6])
	}
	g2, g3 := len(groups)-2, len(groups)-3
	base3, _ := strconv.ParseUint(groups[g3][1], 10, 64)
	script := fmt.Sprintf("freeb %d\nset_bg %d free_blocks_count 100\nset_bg %d flags 5\nsetb %d 4\n",
		itable, g2, g3, base3+30000)
	cmd := exec.Command("debugfs", "-w", "-f", "-", img)
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("debugfs: %v\n%s", err, out)
	}
	eout, _ := compare("faults", "-fn", img, 4)
	for _, want := range []string{
		fmt.Sprintf("+%d", itable),
		fmt.Sprintf("-(%d--%d)", base3+30000, base3+30003),
		fmt.Sprintf("group #%d (100, counted=32768)", g2),
		fmt.Sprintf("Group descriptor %d checksum", g2),
	} {
		if !regexp.MustCompile(regexp.QuoteMeta(want)).MatchString(eout) {
			t.Errorf("e2fsck -fn does not report %q; the faults are not where the test means them:\n%s", want, eout)
		}
	}
	compare("faults", "-fy", img, 1)
	compare("faults", "-p", img, -1)
}

// TestMemoryLimitStopsCleanly: a check whose estimate exceeds -E
// memory_limit stops before pass 1 with exit 8, under -n and -y alike,
// and writes nothing; with a limit it fits in, it runs as e2fsck does.
func TestMemoryLimitStopsCleanly(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := t.TempDir() + "/small.img"
	if out, err := exec.Command("mke2fs", "-F", "-q", "-t", "ext4", "-U", testfs.UUID, "-E", "hash_seed="+testfs.UUID, img, "64M").CombinedOutput(); err != nil {
		t.Fatalf("mke2fs: %v\n%s", err, out)
	}
	testfs.Debugfs(t, img, "set_bg 1 free_blocks_count 7")
	before := testfs.FileSHA256(t, img)
	for _, mode := range []string{"-fn", "-fy"} {
		out, code := testfs.Gofsck(t, img, mode, "-E", "memory_limit=4M")
		if code != 8 || !strings.Contains(out, "Memory allocation failed") || strings.Contains(out, "Pass 1") {
			t.Errorf("%s with a 4M limit: exit %d, want 8 before pass 1:\n%s", mode, code, out)
		}
		if testfs.FileSHA256(t, img) != before {
			t.Fatalf("%s with a 4M limit changed the image", mode)
		}
	}
	eout, ecode := testfs.E2fsck(t, img, "-fn")
	gout, gcode := testfs.Gofsck(t, img, "-fn", "-E", "memory_limit=1G")
	if bigNorm(eout, img) != bigNorm(gout, img) || gcode != ecode || ecode != 4 {
		t.Errorf("-fn with a 1G limit: exit %d vs e2fsck %d\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, eout, gout)
	}
	if out, code := testfs.Gofsck(t, img, "-fn", "-E", "memory_limit=12x"); code != 16 && code != 1 || !strings.Contains(out, "Invalid memory_limit") {
		t.Errorf("memory_limit=12x: exit %d:\n%s", code, out)
	}
}

// TestBigVolumeDirBlockOrder: e2fsck sorts pass 2's directory blocks with
// int-cast differences of 64-bit block numbers, which past 2^31 blocks
// apart is no block order: a directory whose block sits near the end of
// a 16 TiB volume is checked before one near its start. /a and /b both
// name the directory /a/sub; which entry is the link to clear depends on
// that order. gofsck must say and do what e2fsck does.
func TestBigVolumeDirBlockOrder(t *testing.T) {
	testfs.RequireLong(t) // 16 TiB sparse images: minutes
	t.Parallel()
	img, groups := newBigImage(t)
	testfs.Debugfs(t, img, "mkdir a", "mkdir b", "mkdir a/sub", "ln a/sub b/sub")
	// Move /b's block into the last group (initialised, as the last group
	// always is), 2^32 - 7296 blocks: over 2^31 past every other
	// directory block.
	last, _ := strconv.ParseUint(groups[len(groups)-1][1], 10, 64)
	high := last + 25472
	old := testfs.Bmap(t, img, "/b", 0)
	testfs.WriteAt(t, img, int64(high)*4096, testfs.ReadAt(t, img, int64(old)*4096, 4096))
	testfs.Debugfs(t, img, fmt.Sprintf("setb %d", high), fmt.Sprintf("freeb %d", old), fmt.Sprintf("sif /b block[5] %d", high))
	if got := testfs.Bmap(t, img, "/b", 0); got != high {
		t.Fatalf("/b's block is %d, want %d", got, high)
	}
	for _, mode := range []string{"-fn", "-fy"} {
		e := testfs.CopySparse(t, img, "e.img")
		g := testfs.CopySparse(t, img, "g.img")
		eout, ecode, gout, gcode := bothCheck(t, e, g, mode)
		if bigNorm(eout, e) != bigNorm(gout, g) || ecode != gcode {
			t.Errorf("%s: exit %d vs e2fsck %d\n--- e2fsck\n%s--- gofsck\n%s", mode, gcode, ecode, eout, gout)
		}
		if !strings.Contains(eout, "Entry 'sub' in /a (12) is a link to directory /b/sub") {
			t.Errorf("%s: e2fsck did not check /b first; the test's premise is gone:\n%s", mode, eout)
		}
		if mode == "-fy" {
			if el, gl := testfs.DebugfsRO(t, e, "ls /a", "ls /b"), testfs.DebugfsRO(t, g, "ls /a", "ls /b"); el != gl {
				t.Errorf("-fy: /a and /b differ:\n--- e2fsck\n%s--- gofsck\n%s", el, gl)
			}
			if d := groupTableDiff(t, e, g, groups); d != "" {
				t.Errorf("-fy: the repaired group tables differ: %s", d)
			}
		}
	}
}
