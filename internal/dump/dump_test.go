package dump_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gofsck/internal/blockdev"
	"gofsck/internal/dump"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

func open(t *testing.T, img string) *fs.FS {
	t.Helper()
	dev, err := blockdev.Open(img, true, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	f, err := fs.Open(dev, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// dumpe2fsH runs dumpe2fs -h with the test environment (TZ=UTC).
func dumpe2fsH(t *testing.T, img string) string {
	t.Helper()
	testfs.RequireE2fsprogs(t)
	cmd := exec.Command("dumpe2fs", "-h", img)
	cmd.Env = testfs.Env(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dumpe2fs -h: %v", err)
	}
	return string(out)
}

// header renders what fsinfo -h prints.
func header(t *testing.T, img string) string {
	t.Helper()
	for _, kv := range testfs.Env(t) {
		if k, v, _ := strings.Cut(kv, "="); k == "TZ" {
			t.Setenv("TZ", v)
		}
	}
	f := open(t, img)
	var b bytes.Buffer
	if err := dump.WriteSuper(&b, f.SB); err != nil {
		t.Fatal(err)
	}
	if err := dump.WriteJournal(&b, f); err != nil {
		t.Fatal(err)
	}
	b.WriteString("\n")
	return b.String()
}

func checkHeader(t *testing.T, img string) {
	t.Helper()
	want := dumpe2fsH(t, img)
	got := header(t, img)
	if got != want {
		wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
		for i := 0; i < max(len(wl), len(gl)); i++ {
			var w, g string
			if i < len(wl) {
				w = wl[i]
			}
			if i < len(gl) {
				g = gl[i]
			}
			if w != g {
				t.Errorf("line %d:\n dumpe2fs: %q\n fsinfo:   %q", i+1, w, g)
				break
			}
		}
	}
}

func populate(n int, seed uint64) func(*testfs.Tree) {
	return func(tr *testfs.Tree) {
		r := rand.New(rand.NewPCG(seed, 3))
		tr.Dir("a/b")
		for i := 0; i < n; i++ {
			tr.File(fmt.Sprintf("a/f%d", i), int64(r.IntN(300_000)))
		}
		tr.File("big", 20<<20)
		tr.Sparse("a/b/sparse", 64<<20, 4096, 1<<20)
		tr.ManyFiles("a/many", 400)
	}
}

func TestHeaderMatchesDumpe2fs(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec testfs.Spec
	}{
		{"ext4", testfs.Spec{Size: 256 << 20, FSType: "ext4", Populate: populate(50, 1)}},
		{"ext2-1k", testfs.Spec{Size: 64 << 20, FSType: "ext2", BlockSize: 1024, Populate: populate(30, 2)}},
		{"ext3", testfs.Spec{Size: 64 << 20, FSType: "ext3", Features: "^dir_index"}},
		{"bigalloc", testfs.Spec{Size: 256 << 20, FSType: "ext4", Features: "bigalloc", ClusterSize: 65536}},
		{"meta_bg-32bit", testfs.Spec{Size: 128 << 20, FSType: "ext4", Features: "meta_bg,^resize_inode,^64bit"}},
		{"sparse_super2-quota", testfs.Spec{Size: 128 << 20, FSType: "ext4", Features: "sparse_super2,quota,project", InodeSize: 256}},
		{"uninit_bg-csum_seed", testfs.Spec{Size: 128 << 20, FSType: "ext4", Features: "metadata_csum_seed,orphan_file"}},
		{"fast_commit-casefold", testfs.Spec{Size: 128 << 20, FSType: "ext4", Features: "fast_commit,casefold"}},
		{"raid-label", testfs.Spec{Size: 64 << 20, FSType: "ext4", Extended: []string{"stride=16", "stripe_width=64"}, ExtraArgs: []string{"-L", "vol<&>", "-M", "/mnt/x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkHeader(t, testfs.MkImage(t, tc.spec))
		})
	}
}

// churn creates, appends to and deletes files through the kernel so that
// files and directories end up fragmented.
func churn(seed uint64) func(string) {
	return func(mnt string) {
		r := rand.New(rand.NewPCG(seed, 9))
		buf := make([]byte, 64<<10)
		os.MkdirAll(filepath.Join(mnt, "d"), 0o755)
		var fs []*os.File
		for k := 0; k < 6; k++ {
			f, err := os.Create(filepath.Join(mnt, fmt.Sprintf("grow%d", k)))
			if err == nil {
				fs = append(fs, f)
			}
		}
		for round := 0; round < 40; round++ {
			for _, f := range fs {
				f.Write(buf[:4096*(1+r.IntN(4))])
				f.Sync()
			}
			for i := 0; i < 20; i++ {
				os.WriteFile(filepath.Join(mnt, "d", fmt.Sprintf("long-name-to-fill-directory-blocks-%d-%d", round, i)), buf[:r.IntN(len(buf))], 0o644)
			}
			for i := 0; i < 10; i++ {
				os.Remove(filepath.Join(mnt, "d", fmt.Sprintf("long-name-to-fill-directory-blocks-%d-%d", r.IntN(round+1), r.IntN(20))))
			}
		}
		for _, f := range fs {
			f.Close()
		}
	}
}

func TestKernelImages(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int64
		mkfs []string
	}{
		{"ext4", 128 << 20, []string{"-t", "ext4", "-b", "4096"}},
		{"ext4-1k", 64 << 20, []string{"-t", "ext4", "-b", "1024"}},
		{"ext3", 64 << 20, []string{"-t", "ext3", "-b", "1024"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := testfs.KernelImage(t, tc.size, tc.mkfs, churn(uint64(len(tc.name))))
			checkHeader(t, img)
			checkFrag(t, img, true)
		})
	}
}

// checkFrag compares the block lists of the reported inodes with debugfs
// stat's EXTENTS/BLOCKS lines.
func checkFrag(t *testing.T, img string, wantFragmented bool) {
	t.Helper()
	f := open(t, img)
	r, err := dump.ScanFragmentation(f, dump.FragOptions{N: 8})
	if err != nil {
		t.Fatal(err)
	}
	if r.Corrupt != 0 {
		t.Errorf("%d inodes with corrupt maps on a clean image", r.Corrupt)
	}
	all := append(append([]dump.Frag{}, r.Files...), r.Dirs...)
	if len(all) == 0 {
		t.Fatal("nothing reported")
	}
	if wantFragmented && r.Files[0].Fragments < 2 {
		t.Errorf("most fragmented file has %d fragments", r.Files[0].Fragments)
	}
	for _, x := range all {
		stat := testfs.Stat(t, img, fmt.Sprintf("<%d>", x.Ino))
		want := listLine(stat)
		if got := x.Map.String(); got != want {
			t.Errorf("inode %d:\n debugfs: %s\n fsinfo:  %s", x.Ino, want, got)
		}
	}
}

// listLine extracts the line after EXTENTS: or BLOCKS: in debugfs stat.
func listLine(stat string) string {
	lines := strings.Split(stat, "\n")
	for i, l := range lines {
		if (strings.HasPrefix(l, "EXTENTS:") || strings.HasPrefix(l, "BLOCKS:")) && i+1 < len(lines) {
			return strings.TrimSpace(lines[i+1])
		}
	}
	return ""
}

func TestFragMkfs(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec testfs.Spec
	}{
		{"ext4", testfs.Spec{Size: 128 << 20, FSType: "ext4", Populate: populate(40, 5)}},
		{"ext2-blockmap", testfs.Spec{Size: 96 << 20, FSType: "ext2", BlockSize: 1024, Populate: populate(40, 6)}},
		{"ext3-4k", testfs.Spec{Size: 96 << 20, FSType: "ext3", Populate: populate(40, 7)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkFrag(t, testfs.MkImage(t, tc.spec), false)
		})
	}
}

// TestCorruptMapBounded points an extent index at itself and a block map
// outside the filesystem: the walk stops with an error instead of looping.
func TestCorruptMapBounded(t *testing.T) {
	img := testfs.MkImage(t, testfs.Spec{Size: 64 << 20, FSType: "ext4", Populate: func(tr *testfs.Tree) {
		tr.Sparse("s", 256<<20, 4096, 1<<20) // enough extents for an index node
	}})
	ino := testfs.Ino(t, img, "/s")
	f := open(t, img)
	inode, err := dump.ReadInode(f, ino)
	if err != nil {
		t.Fatal(err)
	}
	m := dump.BlockMap(f, ino, inode)
	var etb uint64
	for _, p := range m.Pieces {
		if p.Kind == dump.ETB {
			etb = p.Pblk
		}
	}
	if etb == 0 {
		t.Fatalf("no index block: %s", m.String())
	}
	// Make the leaf an index node pointing at itself.
	blk := testfs.ReadAt(t, img, int64(etb)*int64(f.BlockSize), f.BlockSize)
	blk[6] = 1 // eh_depth
	copy(blk[12+4:], testfs.Le32(uint32(etb)))
	testfs.WriteAt(t, img, int64(etb)*int64(f.BlockSize), blk)
	f = open(t, img)
	inode, _ = dump.ReadInode(f, ino)
	// The root claims depth 1, the child depth 1: refused.
	m = dump.BlockMap(f, ino, inode)
	if !m.Truncated || m.Err == nil {
		t.Errorf("self-referencing extent tree walked: %v", m.String())
	}
	// Garbage inode bytes never panic.
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		b := make([]byte, f.InodeSize)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		b[1] = 0x80 // regular file
		if i%2 == 0 {
			copy(b[0x20:], testfs.Le32(ondisk.FlagExtents))
			copy(b[0x28:], []byte{0x0a, 0xf3, 1, 0, 4, 0, byte(i % 7), 0})
		}
		dump.BlockMap(f, 12, ondisk.Inode(b))
	}
}
