package ext2fs

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// TestBmap2AgainstDebugfs maps blocks of an empty file with debugfs'
// "bmap -a" (the real library's ext2fs_bmap2 with BMAP_ALLOC, allocating
// from the on-disk bitmap) and with Bmap2 over the same bitmap, on
// images whose free space comes in single blocks (clusters, with
// bigalloc, where the blocks of a logical cluster share one): every call
// must give the same block, and the files' maps (debugfs' stat and
// extent listing) and tree or indirect blocks must come out the same.
// The logical blocks run in order, then leave holes and go back into
// them.
func TestBmap2AgainstDebugfs(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	var lblks []uint64
	for l := uint64(0); l < 300; l++ {
		lblks = append(lblks, l)
	}
	lblks = append(lblks, 320, 310, 305, 400, 399, 600, 301)
	fill := func(tr *testfs.Tree) {
		for i := 0; i < 1200; i++ {
			tr.File(fmt.Sprintf("fill/%04d", i), 1<<10)
		}
	}
	for _, spec := range []testfs.Spec{
		{FSType: "ext4", Size: 16 << 20, BlockSize: 1024, Features: "^metadata_csum", Populate: fill},
		{FSType: "ext3", Size: 16 << 20, BlockSize: 1024, Populate: fill},
		{FSType: "ext4", Size: 32 << 20, BlockSize: 1024, ClusterSize: 4096, Features: "bigalloc,^metadata_csum", Populate: fill},
	} {
		t.Run(fmt.Sprintf("%s-cluster%d", spec.FSType, spec.ClusterSize), func(t *testing.T) {
			img := testfs.MkImage(t, spec)
			var cmds []string
			for i := 0; i < 1200; i += 2 {
				cmds = append(cmds, fmt.Sprintf("rm /fill/%04d", i))
			}
			cmds = append(cmds, "write /dev/null q")
			testfs.Debugfs(t, img, cmds...)
			ino := testfs.Ino(t, img, "/q")
			limg, gimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)

			cmds = cmds[:0]
			for _, l := range lblks {
				cmds = append(cmds, fmt.Sprintf("bmap -a /q %d", l))
			}
			var lib []uint64
			for _, line := range strings.Split(testfs.Debugfs(t, limg, cmds...), "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasPrefix(line, "debugfs") {
					continue
				}
				if b, err := strconv.ParseUint(strings.Fields(line)[0], 10, 64); err == nil {
					lib = append(lib, b)
				}
			}
			if len(lib) != len(lblks) {
				t.Fatalf("debugfs mapped %d of %d blocks", len(lib), len(lblks))
			}

			fsys := openRW(t, gimg)
			n := readInode(t, fsys, ino)
			for i, l := range lblks {
				p, err := Bmap2(fsys, ino, n, l, BmapAlloc)
				if err != nil || p != lib[i] {
					t.Fatalf("block %d: Bmap2 = %d, %v; the library's %d", l, p, err, lib[i])
				}
			}

			pic := func(img string) (string, []byte) {
				out := testfs.DebugfsRO(t, img, "stat /q", "ex /q")
				var keep []string
				var meta []uint64
				for _, line := range strings.Split(out, "\n") {
					if timeLike(line) {
						continue
					}
					keep = append(keep, line)
				}
				// The mapping blocks: IND/DIND and extent tree blocks.
				for _, line := range keep {
					for _, field := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' }) {
						for _, tag := range []string{"(IND):", "(DIND):", "(ETB0):", "(ETB1):"} {
							if v, ok := strings.CutPrefix(field, tag); ok {
								if b, err := strconv.ParseUint(v, 10, 64); err == nil {
									meta = append(meta, b)
								}
							}
						}
					}
				}
				var raw []byte
				for _, b := range meta {
					raw = append(raw, testfs.ReadAt(t, img, int64(b)*1024, 1024)...)
				}
				return strings.Join(keep, "\n"), raw
			}
			ls, lraw := pic(limg)
			gs, graw := pic(gimg)
			if ls != gs {
				t.Errorf("maps differ:\n--- library\n%s\n--- gofsck\n%s", ls, gs)
			}
			if len(lraw) == 0 {
				t.Errorf("no mapping blocks:\n%s", ls)
			}
			if !bytes.Equal(lraw, graw) {
				t.Errorf("mapping blocks differ")
			}
		})
	}
}

// timeLike is a stat line that holds times or checksums, which the two
// sides write differently.
func timeLike(line string) bool {
	for _, w := range []string{"time", "checksum", "Inode checksum"} {
		if strings.Contains(line, w) {
			return true
		}
	}
	return false
}
