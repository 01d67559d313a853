package test

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gofsck/internal/testfs"
)

// TestQuotaRewrite repairs quota files that no longer match the usage
// (owners changed behind the quota's back with debugfs) with gofsck -fy
// and e2fsck -fy: the transcripts (stdout and the library's stderr lines)
// must be the same, e2fsck -fn must find gofsck's result clean (as
// e2fsck's own, which is not always clean), and the
// rewritten files must be e2fsck's: the quota listings, the quota inodes
// (block maps, sizes, i_blocks) and the allocation picture (dumpe2fs
// without times and checksums), which a different block choice would
// change.
func TestQuotaRewrite(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	gofsck := testfs.GofsckPath(t)
	e2fsck := "/usr/sbin/e2fsck"
	files := func(n int) func(*testfs.Tree) {
		return func(tr *testfs.Tree) {
			tr.Dir("dir")
			tr.File("dir/big", 300<<10)
			for i := 0; i < n; i++ {
				tr.File(fmt.Sprintf("dir/f%03d", i), int64(1+i%5)<<10)
			}
		}
	}
	// owners gives file i of files(n) uid/gid (and project) ids spread over
	// the radix tree: step 70000 uses three tree levels, 1<<24 all four.
	owners := func(n int, step uint32) []string {
		var cmds []string
		for i := 0; i < n; i++ {
			id := uint32(i+1) * step
			cmds = append(cmds, fmt.Sprintf("sif /dir/f%03d uid %d", i, id),
				fmt.Sprintf("sif /dir/f%03d gid %d", i, id+1))
		}
		return cmds
	}
	cases := []quotaCase{
		{name: "ext4-4k-uid", spec: testfs.Spec{Size: 16 << 20, FSType: "ext4", BlockSize: 4096, Features: "quota,project", Populate: files(3), OptimizeDirs: true},
			cmds: []string{"sif /dir/big uid 1234"}},
		{name: "ext4-1k-uid-gid-projid", spec: testfs.Spec{Size: 16 << 20, FSType: "ext4", BlockSize: 1024, InodeSize: 256, Features: "quota,project", Populate: files(3), OptimizeDirs: true},
			cmds: []string{"sif /dir/big uid 1234", "sif /dir/f000 gid 77", "sif /dir/f001 projid 5"}},
		// Limits kept from the old file (one of them exceeded: a grace time
		// starts).
		{name: "ext4-1k-limits", spec: testfs.Spec{Size: 16 << 20, FSType: "ext4", BlockSize: 1024, Features: "quota", Populate: files(3), OptimizeDirs: true},
			cmds:  []string{"sif /dir/big uid 1234"},
			setup: func(t *testing.T, img string) { setQuotaLimits(t, img, "<3>", 0, 100, 200, 2, 50) }},
		// Many ids over every level of the tree: a file of dozens of blocks.
		{name: "ext4-1k-many-ids", spec: testfs.Spec{Size: 32 << 20, FSType: "ext4", BlockSize: 1024, Features: "quota", Populate: files(40), OptimizeDirs: true},
			cmds: owners(40, 1<<24+70000)},
		// Without extents the new file needs an indirect block.
		{name: "ext3-1k-indirect", spec: testfs.Spec{Size: 32 << 20, FSType: "ext3", BlockSize: 1024, Features: "quota", Populate: files(30), OptimizeDirs: true},
			cmds: owners(30, 1<<24+70000)},
		// Free space in single blocks: every block of the new file is an
		// extent of its own, the root splits into a leaf block; with more
		// ids the leaf splits too (at the end of the file: one extent
		// moves; in the middle: half of them).
		{name: "ext4-1k-fragmented", spec: fragmentedSpec(12), setup: fragment(12)},
		{name: "ext4-1k-fragmented-leaves", spec: fragmentedSpec(60), setup: fragment(60)},
		// Clusters of 4 blocks: the file's blocks come in clusters.
		{name: "bigalloc-many-ids", spec: testfs.Spec{Size: 32 << 20, FSType: "ext4", BlockSize: 1024, ClusterSize: 4096, Features: "bigalloc,quota", Populate: files(20), OptimizeDirs: true},
			cmds: owners(20, 1<<24+70000)},
		// 128-byte inodes: no i_crtime, no project ids.
		{name: "ext4-128-inodes", spec: testfs.Spec{Size: 16 << 20, FSType: "ext4", BlockSize: 1024, InodeSize: 128, Features: "quota", Populate: files(3), OptimizeDirs: true},
			cmds: []string{"sif /dir/big uid 1234", "sif /dir/f000 gid 1234"}},
		// A visible quota file (/aquota.user) is moved to its reserved
		// inode before pass 1 (PR_0_HIDE_QUOTA); the reserved inode's old
		// blocks are left to pass 5.
		{name: "ext4-1k-hide-quota", spec: testfs.Spec{Size: 16 << 20, FSType: "ext4", BlockSize: 1024, Features: "quota,project", Populate: files(3), OptimizeDirs: true},
			cmds: []string{"sif /dir/big uid 1234"},
			setup: func(t *testing.T, img string) {
				dump := filepath.Join(t.TempDir(), "aquota.user")
				testfs.DebugfsRO(t, img, "dump <3> "+dump)
				testfs.Debugfs(t, img, "write "+dump+" aquota.user")
				testfs.Debugfs(t, img, fmt.Sprintf("ssv usr_quota_inum %d", testfs.Ino(t, img, "/aquota.user")))
			}},
		// A quota inode that has no aquota.* name in the root: the move
		// stops at the unlink (the library's error on stderr), the
		// superblock keeps the number, and the rewrite at the end goes to
		// the reserved inode all the same.
		{name: "ext4-1k-hide-quota-unlinked", spec: testfs.Spec{Size: 16 << 20, FSType: "ext4", BlockSize: 1024, Features: "quota", Populate: files(3), OptimizeDirs: true},
			cmds: []string{"sif /dir/big uid 1234", "ssv grp_quota_inum 11"}},
		// The quota file's first block destroyed: the file cannot be read,
		// and is written from the usage alone.
		{name: "ext4-4k-zapped", spec: testfs.Spec{Size: 16 << 20, FSType: "ext4", BlockSize: 4096, Features: "quota", Populate: files(3), OptimizeDirs: true},
			setup: func(t *testing.T, img string) {
				testfs.Debugfs(t, img, fmt.Sprintf("zap_block %d", testfs.Bmap(t, img, "<3>", 0)))
			}},
	}
	// Orphans released before pass 1 with quotas: the quota files are read
	// (usage and limits), the released blocks and inodes taken off, and
	// every quota file rewritten before pass 1.
	orphans := func(t *testing.T, img string) {
		s1, s2, big := testfs.Ino(t, img, "/dir/f000"), testfs.Ino(t, img, "/dir/f001"), testfs.Ino(t, img, "/dir/big")
		testfs.Debugfs(t, img, "unlink /dir/f000", "unlink /dir/f001",
			fmt.Sprintf("sif <%d> links_count 0", s1), fmt.Sprintf("sif <%d> links_count 0", s2),
			fmt.Sprintf("sif <%d> dtime %d", s1, s2), fmt.Sprintf("sif <%d> dtime %d", s2, big),
			fmt.Sprintf("sif <%d> size 10000", big), fmt.Sprintf("sif <%d> dtime 0", big),
			fmt.Sprintf("ssv last_orphan %d", s1))
	}
	cases = append(cases,
		quotaCase{name: "orphans-1k", spec: testfs.Spec{Size: 16 << 20, FSType: "ext4", BlockSize: 1024, InodeSize: 256, Features: "quota,project", Populate: files(3), OptimizeDirs: true},
			setup: orphans},
		quotaCase{name: "orphans-4k-owners", spec: testfs.Spec{Size: 16 << 20, FSType: "ext4", BlockSize: 4096, Features: "quota", Populate: files(3), OptimizeDirs: true},
			cmds: []string{"sif /dir/f001 uid 77"}, setup: func(t *testing.T, img string) {
				testfs.E2fsckInPlace(t, img, "-fy") // quotas consistent first
				orphans(t, img)
			}},
	)
	for _, tc := range cases {
		if tc.want == "" {
			tc.want = "Update quota info"
		}
		if strings.HasPrefix(tc.name, "orphans") {
			tc.want = "orphaned inode"
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			img := testfs.MkImage(t, tc.spec)
			if len(tc.cmds) > 0 {
				testfs.Debugfs(t, img, tc.cmds...)
			}
			if tc.setup != nil {
				tc.setup(t, img)
			}
			dir := t.TempDir()
			eimg := filepath.Join(dir, "e.img")
			gimg := filepath.Join(dir, "g.img")
			copyTo(t, img, eimg)
			copyTo(t, img, gimg)
			eout, eerr, eexit, _ := runSplit2(t, 60*time.Second, e2fsck, "-fy", eimg)
			gout, gerr, gexit, _ := runSplit2(t, 60*time.Second, gofsck, "-fy", gimg)
			if !strings.Contains(eout, tc.want) {
				t.Fatalf("e2fsck -fy does not print %q:\n%s", tc.want, eout)
			}
			gout = strings.ReplaceAll(gout, gimg, eimg)
			if eout != gout || eexit != gexit {
				t.Errorf("transcripts differ:\n--- e2fsck -fy (exit %d):\n%s--- gofsck -fy (exit %d):\n%s", eexit, eout, gexit, gout)
			}
			if e, g := stderrLines(eerr), stderrLines(gerr); e != g {
				t.Errorf("stderr differs:\n--- e2fsck:\n%s--- gofsck:\n%s", e, g)
			}
			// Clean afterwards, unless e2fsck leaves its own result unclean.
			_, want := testfs.E2fsck(t, eimg, "-fn")
			if out, exit := testfs.E2fsck(t, gimg, "-fn"); exit != want {
				t.Errorf("e2fsck -fn after gofsck -fy exits %d, after e2fsck -fy %d:\n%s", exit, want, out)
			}
			if e, g := quotaPicture(t, eimg), quotaPicture(t, gimg); e != g {
				t.Errorf("repaired images differ (-e2fsck +gofsck):\n%s", lineDiff(e, g))
			}
		})
	}
}

// fragmentedSpec is a 1k ext4 image with n small files in /dir and 1200
// one-block files in /fill.
func fragmentedSpec(n int) testfs.Spec {
	return testfs.Spec{Size: 8 << 20, FSType: "ext4", BlockSize: 1024, Features: "quota", Populate: func(tr *testfs.Tree) {
		tr.Dir("dir")
		for i := 0; i < n; i++ {
			tr.File(fmt.Sprintf("dir/f%03d", i), 1<<10)
		}
		tr.Dir("fill")
		for i := 0; i < 1200; i++ {
			tr.File(fmt.Sprintf("fill/%04d", i), 1<<10)
		}
	}, OptimizeDirs: true}
}

// fragment removes every other file of /fill (free space in single
// blocks) and gives the n files of /dir owners spread over the tree.
func fragment(n int) func(t *testing.T, img string) {
	return func(t *testing.T, img string) {
		var cmds []string
		for i := 0; i < 1200; i += 2 {
			cmds = append(cmds, fmt.Sprintf("rm /fill/%04d", i))
		}
		testfs.Debugfs(t, img, cmds...)
		testfs.E2fsckInPlace(t, img, "-fy")
		cmds = nil
		for i := 0; i < n; i++ {
			cmds = append(cmds, fmt.Sprintf("sif /dir/f%03d uid %d", i, uint32(i+1)*(1<<24+70000)))
		}
		testfs.Debugfs(t, img, cmds...)
	}
}

// quotaCase is one image of TestQuotaRewrite: made from spec, damaged by
// the debugfs commands cmds and then setup.
type quotaCase struct {
	name  string
	spec  testfs.Spec
	cmds  []string
	setup func(t *testing.T, img string)
	want  string // in e2fsck's transcript ("Update quota info" if empty)
}

// stderrLines drops the version banner from a checker's stderr.
func stderrLines(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, "e2fsck 1.") || strings.HasPrefix(l, "gofsck ") {
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}

var timeLine = regexp.MustCompile(`(?i)(time|checksum|csum|mount count|lifetime writes|^Last |ctime|atime|mtime|crtime|Inode checksum)`)

// quotaPicture is what a quota rewrite decides, without times and
// checksums: the quota listings, the quota inodes and dumpe2fs.
func quotaPicture(t *testing.T, img string) string {
	t.Helper()
	var b strings.Builder
	for _, typ := range []string{"user", "group", "project"} {
		b.WriteString(testfs.DebugfsRO(t, img, "lq "+typ))
	}
	sb := testfs.Superblock(t, img)
	for _, k := range []string{"User quota inode", "Group quota inode", "Project quota inode"} {
		ino := sb[k]
		if ino == "" {
			continue
		}
		for _, l := range strings.Split(testfs.DebugfsRO(t, img, "stat <"+ino+">"), "\n") {
			if !timeLine.MatchString(l) {
				b.WriteString(l + "\n")
			}
		}
	}
	o, err := exec.Command("dumpe2fs", img).CombinedOutput()
	if err != nil {
		t.Fatalf("dumpe2fs: %v\n%s", err, o)
	}
	out := string(o)
	for _, l := range strings.Split(out, "\n") {
		if !timeLine.MatchString(l) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// lineDiff lists the lines of a and b that differ, by position.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out strings.Builder
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			fmt.Fprintf(&out, "-%s\n+%s\n", x, y)
		}
	}
	return out.String()
}

// setQuotaLimits writes limits into id's entry of quota file qfile (a
// debugfs file spec), in place: debugfs cannot set quota limits.
func setQuotaLimits(t *testing.T, img, qfile string, id uint32, bsoft, bhard, isoft, ihard uint64) {
	t.Helper()
	dump := filepath.Join(t.TempDir(), "q")
	testfs.DebugfsRO(t, img, fmt.Sprintf("dump %s %s", qfile, dump))
	data, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	// Data blocks hold 72-byte v2r1 entries after a 16-byte header; find
	// the entry of id that has usage (tree blocks hold references only).
	bs := testfs.BlockSize(t, img)
	for blk := 2; (blk+1)*1024 <= len(data); blk++ {
		for i := 0; i < 14; i++ {
			off := blk*1024 + 16 + i*72
			e := data[off : off+72]
			if binary.LittleEndian.Uint32(e) != id || binary.LittleEndian.Uint64(e[24:]) == 0 {
				continue
			}
			le := binary.LittleEndian
			le.PutUint64(e[8:], ihard)
			le.PutUint64(e[16:], isoft)
			le.PutUint64(e[32:], bhard)
			le.PutUint64(e[40:], bsoft)
			pblk := testfs.Bmap(t, img, qfile, uint64(int64(off)/bs))
			testfs.WriteAt(t, img, int64(pblk)*bs+int64(off)%bs, e)
			return
		}
	}
	t.Fatalf("no entry for id %d in %s", id, qfile)
}

// TestQuotaRewriteNoSpace: on a full filesystem e2fsck's rewrite fails
// half-way (library errors, a damaged file); gofsck does not imitate that
// and stops before the question, writing nothing (exit 8).
func TestQuotaRewriteNoSpace(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	t.Parallel()
	img := testfs.MkImage(t, testfs.Spec{Size: 4 << 20, FSType: "ext4", BlockSize: 1024, Features: "quota"})
	free, err := strconv.Atoi(testfs.Superblock(t, img)["Free blocks"])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fill := func(name string, kib int) string {
		p := filepath.Join(dir, name)
		data := make([]byte, kib<<10)
		for i := range data {
			data[i] = byte(i*7) | 1
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("write %s %s", p, name)
	}
	cmds := []string{fill("big", free-40)}
	for i := 0; i < 40; i++ {
		cmds = append(cmds, fill(fmt.Sprintf("s%02d", i), 1))
	}
	testfs.Debugfs(t, img, cmds...)
	testfs.E2fsckInPlace(t, img, "-fy")
	if f := testfs.Superblock(t, img)["Free blocks"]; f != "0" {
		t.Fatalf("%s free blocks left", f)
	}
	testfs.Debugfs(t, img, "sif /big uid 16777216")
	before := testfs.FileSHA256(t, img)
	out, exit := testfs.Gofsck(t, img, "-fy")
	if exit != 8 || !strings.Contains(out, "PR_6_UPDATE_QUOTAS") {
		t.Errorf("gofsck -fy exits %d, want 8 at PR_6_UPDATE_QUOTAS:\n%s", exit, out)
	}
	if testfs.FileSHA256(t, img) != before {
		t.Errorf("the image changed")
	}
}

// TestQuotaRewriteTooDeep: a new quota file in hundreds of fragments
// needs a second index level in its extent tree, which gofsck does not
// build: it stops before the question, writing nothing.
func TestQuotaRewriteTooDeep(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	t.Parallel()
	img := testfs.MkImage(t, fragmentedSpec(120))
	fragment(120)(t, img)
	if out, _ := testfs.E2fsck(t, img, "-fy"); !strings.Contains(out, "Update quota info") {
		t.Fatalf("the damage does not need a quota rewrite:\n%s", out)
	}
	before := testfs.FileSHA256(t, img)
	out, exit := testfs.Gofsck(t, img, "-fy")
	if exit != 8 || !strings.Contains(out, "PR_6_UPDATE_QUOTAS") {
		t.Errorf("gofsck -fy exits %d, want 8 at PR_6_UPDATE_QUOTAS:\n%s", exit, out)
	}
	if testfs.FileSHA256(t, img) != before {
		t.Errorf("the image changed")
	}
}
