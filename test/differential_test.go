package test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"gofsck/internal/testfs"
)

// The differential suite: build small images with mke2fs for many feature
// sets, apply one corruption per case with debugfs or a raw write, run the
// installed e2fsck -fn and gofsck -fn on the same image, and require the
// same exit code and the same set of passes reporting problems (cases where
// gofsck is known to disagree are listed in testdata/known_differences.txt)
// and, where those agree and e2fsck did not crash, the same transcript
// (normalised as the -fy leg's: version banner, program name, clocks;
// known differences in testdata/fn_transcript_known.txt).
//
//	go test ./test -run '^TestDifferential$'                 # all cases
//	go test ./test -run 'Differential/case/ext4/'            # one feature set
//	go test ./test -run '^TestDifferential$' -update-known   # rewrite the list
//	go test ./test -run Differential -diff-report /tmp/d.tsv -diff-keep /tmp/bases
//	go test -short ./test                                    # generic cases only
//
// GOFSCK_BIN=/path/to/gofsck uses a prebuilt binary instead of building
// ./cmd/gofsck.

var diffReport = flag.String("diff-report", "",
	"write a TSV of every differential case's e2fsck and gofsck results to this file")

var diffKeep = flag.String("diff-keep", "",
	"copy every differential base image into this directory (for debugging cases by hand)")

const knownDiffPath = "testdata/known_differences.txt"

const knownDiffHeader = `# Differential cases on which gofsck is allowed to disagree with e2fsck -fn.
# One line per case: name<TAB>reason. The list may only shrink: the test
# fails when a listed case agrees. Regenerate with
#   go test ./test -run '^TestDifferential$' -update-known
`

const fnTextKnownPath = "testdata/fn_transcript_known.txt"

const fnTextKnownHeader = `# Differential cases whose -fn verdict agrees with e2fsck's but whose -fn
# transcript may differ (compared only where e2fsck did not crash). One
# line per case: name<TAB>reason. The list may only shrink. Regenerate with
#   go test ./test -run '^TestDifferential$' -update-known
`

// fsDef is one feature set: the base image every case of that set copies.
type fsDef struct {
	name string
	spec testfs.Spec
}

// dcase is one differential case.
type dcase struct {
	name  string // "<fs>/<corruption>"
	fs    string
	clean bool // e2fsck -fn must exit 0
	msgs  bool // with clean: e2fsck prints problems all the same (else: none, a no-effect case)
	base  bool // the untouched base image (the image may not change)
	do    func(c *cx)
}

const mib = 1 << 20

// stdTree is the content of every base image: regular files of several
// sizes, a sparse file with many extents (extent tree depth 1, or indirect
// blocks on ext2/3), fast and slow symlinks, a hard link, a fifo, device
// nodes, xattrs in the inode and in an EA block, small directories and one
// big directory that e2fsck -D turns into an htree.
func stdTree(bigdir int, extra func(*testfs.Tree)) func(*testfs.Tree) {
	return func(tr *testfs.Tree) {
		plainTree(bigdir)(tr)
		tr.Xattr("dir/file", "user.small", "hello")
		tr.XattrSize("dir/file2", "user.big", 600)
		if extra != nil {
			extra(tr)
		}
	}
}

// plainTree is stdTree without the xattrs, for a filesystem without
// features (revision 0); its big directory stays linear.
func plainTree(bigdir int) func(*testfs.Tree) {
	return func(tr *testfs.Tree) {
		tr.File("dir/empty", 0)
		tr.File("dir/small", 100)
		tr.File("dir/file", 5000)
		tr.File("dir/file2", 3000)
		tr.File("dir/big", 40*1024)
		tr.Sparse("dir/sparse", 1*mib, 1024, 8192)
		tr.Symlink("dir/fast", "small")
		tr.Symlink("dir/slow", strings.Repeat("long-target/", 10))
		tr.Hardlink("dir/hard", "dir/file")
		tr.Fifo("dir/fifo")
		tr.Device("dir/null", 'c', 1, 3)
		tr.Device("dir/sda", 'b', 8, 0)
		tr.File("dir/sub/inner", 200)
		tr.File("dir/two/aa", 10)
		tr.File("dir/two/bb", 10)
		tr.Dir("emptydir")
		tr.ManyFiles("dir/bigdir", bigdir)
	}
}

func fsDefs() []fsDef {
	g := func(n int) []string { return []string{"-g", fmt.Sprint(n)} }
	std := stdTree(400, nil)
	return []fsDef{
		{"ext2", testfs.Spec{Size: 16 * mib, FSType: "ext2", BlockSize: 1024, Populate: stdTree(600, nil), OptimizeDirs: true}},
		{"ext3", testfs.Spec{Size: 16 * mib, FSType: "ext3", BlockSize: 1024, Journal: "size=1", Populate: std, OptimizeDirs: true}},
		{"ext4", testfs.Spec{Size: 16 * mib, FSType: "ext4", BlockSize: 4096, ExtraArgs: g(1024), Populate: std, OptimizeDirs: true}},
		{"ext4-noflex", testfs.Spec{Size: 16 * mib, FSType: "ext4", BlockSize: 4096, Features: "^flex_bg", ExtraArgs: g(1024), Populate: std, OptimizeDirs: true}},
		{"ext4-uninit", testfs.Spec{Size: 16 * mib, FSType: "ext4", BlockSize: 4096, Features: "^metadata_csum,uninit_bg", ExtraArgs: g(1024), Populate: std, OptimizeDirs: true}},
		{"ext4-32bit", testfs.Spec{Size: 16 * mib, FSType: "ext4", BlockSize: 4096, Features: "^64bit", ExtraArgs: g(1024), Populate: std, OptimizeDirs: true}},
		{"ext4-1k", testfs.Spec{Size: 16 * mib, FSType: "ext4", BlockSize: 1024, Populate: std, OptimizeDirs: true}},
		{"ext4-128", testfs.Spec{Size: 16 * mib, FSType: "ext4", BlockSize: 4096, InodeSize: 128, ExtraArgs: g(1024), Populate: std, OptimizeDirs: true}},
		{"bigalloc", testfs.Spec{Size: 32 * mib, FSType: "ext4", BlockSize: 4096, Features: "bigalloc", ClusterSize: 16384, Populate: std, OptimizeDirs: true}},
		{"inline", testfs.Spec{Size: 16 * mib, FSType: "ext4", BlockSize: 4096, Features: "inline_data", ExtraArgs: g(1024), Populate: stdTree(400, func(tr *testfs.Tree) {
			tr.File("dir/tiny", 40)
			tr.File("inldir/x", 1)
			tr.File("inldir/y", 2)
			tr.File("inldir/z", 9000)
		}), OptimizeDirs: true}},
		{"metabg", testfs.Spec{Size: 16 * mib, FSType: "ext4", BlockSize: 1024, Features: "meta_bg,^resize_inode", ExtraArgs: g(1024), Populate: std, OptimizeDirs: true}},
		{"sparse2", testfs.Spec{Size: 16 * mib, FSType: "ext4", BlockSize: 1024, Features: "sparse_super2", ExtraArgs: g(1024), Populate: std, OptimizeDirs: true}},
		{"largedir", testfs.Spec{Size: 16 * mib, FSType: "ext4", BlockSize: 1024, Features: "large_dir", Populate: stdTree(3000, nil), OptimizeDirs: true}},
		{"htree", testfs.Spec{Size: 16 * mib, FSType: "ext4", BlockSize: 1024, Inodes: 8192, Populate: stdTree(5000, nil), OptimizeDirs: true}},
		{"quota", testfs.Spec{Size: 16 * mib, FSType: "ext4", BlockSize: 4096, Features: "quota,project", ExtraArgs: g(1024), Populate: std, OptimizeDirs: true}},
		{"eainode", testfs.Spec{Size: 16 * mib, FSType: "ext4", BlockSize: 4096, Features: "ea_inode", ExtraArgs: g(1024), Populate: stdTree(400, func(tr *testfs.Tree) {
			tr.File("dir/file3", 10)
			tr.XattrSize("dir/file3", "user.huge", 9000)
		}), OptimizeDirs: true}},
		{"orphan", testfs.Spec{Size: 16 * mib, FSType: "ext4", BlockSize: 4096, Features: "orphan_file", ExtraArgs: g(1024), Populate: std, OptimizeDirs: true}},
		{"mmp", testfs.Spec{Size: 16 * mib, FSType: "ext4", BlockSize: 4096, Features: "mmp", ExtraArgs: g(1024), Populate: std, OptimizeDirs: true}},
		{"casefold", casefoldSpec(g(1024))},
		{"rev0", testfs.Spec{Size: 16 * mib, FSType: "ext2", BlockSize: 1024, ExtraArgs: []string{"-r", "0"}, Populate: plainTree(600)}},
	}
}

// cx is what a corruption works with: the test and the image copy.
type cx struct {
	t   testing.TB
	img string
	bsz int64
}

// dbg runs debugfs -w commands and fails if debugfs complained.
func (c *cx) dbg(cmds ...string) {
	c.t.Helper()
	out := testfs.Debugfs(c.t, c.img, cmds...)
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "debugfs ") || strings.HasPrefix(l, "debugfs: ") || strings.HasPrefix(l, "Checksum set to") {
			continue
		}
		for _, bad := range []string{"Usage", "not found", "nvalid", "ouldn't", "Bad ", "bad ", "llegal",
			"out of range", "rror", "nknown", "not open", "No such", "already", "not in use", "Warning"} {
			if strings.Contains(l, bad) {
				c.t.Fatalf("debugfs %q: %s\n%s", cmds, l, out)
			}
		}
	}
}

func (c *cx) bs() int64 {
	if c.bsz == 0 {
		c.bsz = testfs.BlockSize(c.t, c.img)
	}
	return c.bsz
}

func (c *cx) ino(p string) uint32                      { return testfs.Ino(c.t, c.img, p) }
func (c *cx) blocks(p string) testfs.BlockMap          { return testfs.Blocks(c.t, c.img, p) }
func (c *cx) write(off int64, b []byte)                { testfs.WriteAt(c.t, c.img, off, b) }
func (c *cx) read(off int64, n int) []byte             { return testfs.ReadAt(c.t, c.img, off, n) }
func (c *cx) inodeOff(p string) int64                  { return testfs.InodeOffset(c.t, c.img, p) }
func (c *cx) blockOff(b uint64) int64                  { return int64(b) * c.bs() }
func (c *cx) data(p string, i int) uint64              { return c.need(c.blocks(p).Data, p, "data", i) }
func (c *cx) dirOff(p string, i int) int64             { return c.blockOff(c.data(p, i)) }
func (c *cx) group(g int, field string) uint64         { return testfs.GroupBlock(c.t, c.img, g, field) }
func (c *cx) sb() map[string]string                    { return testfs.Superblock(c.t, c.img) }
func (c *cx) dbgf(format string, a ...any)             { c.t.Helper(); c.dbg(fmt.Sprintf(format, a...)) }
func (c *cx) etb(p string) uint64                      { return c.need(c.blocks(p).ETB, p, "extent tree", 0) }
func (c *cx) eaBlock(p string) uint64                  { return c.need([]uint64{c.blocks(p).FileACL}, p, "EA", 0) }
func (c *cx) ind(p string) uint64                      { return c.need(c.blocks(p).Ind, p, "IND", 0) }
func (c *cx) writeBlock(b uint64, off int64, v []byte) { c.write(c.blockOff(b)+off, v) }

func (c *cx) need(list []uint64, p, what string, i int) uint64 {
	c.t.Helper()
	if i >= len(list) || list[i] == 0 {
		c.t.Fatalf("%s has no %s block #%d (%v)", p, what, i, list)
	}
	return list[i]
}

// htreeDir is the big directory that the base images index.
const htreeDir = "/dir/bigdir"

// generic are the corruptions run on every feature set.
func generic(fs string) []dcase {
	return []dcase{
		{name: "baseline", base: true, clean: true, do: func(c *cx) {}},
		{name: "noeffect-atime", clean: true, do: func(c *cx) { c.dbg("sif /dir/file atime 20200101000000") }},
		{name: "noeffect-mnt-count", clean: true, do: func(c *cx) { c.dbg("ssv mnt_count 77") }},
		{name: "file-links-count", do: func(c *cx) { c.dbg("sif /dir/file links_count 5") }},
		{name: "dir-links-count", do: func(c *cx) { c.dbg("sif /dir/sub links_count 7") }},
		{name: "file-i-blocks", do: func(c *cx) { c.dbg("sif /dir/big blocks 2") }},
		{name: "clri-file", do: func(c *cx) { c.dbg("clri /dir/file2") }},
		{name: "clri-dir", do: func(c *cx) { c.dbg("clri /dir/sub") }},
		{name: "freeb-file-block", do: func(c *cx) { c.dbgf("freeb %d", c.data("/dir/big", 0)) }},
		{name: "freei-file", do: func(c *cx) { c.dbg("freei /dir/small") }},
		{name: "zap-htree-leaf", do: func(c *cx) { c.dbgf("zap_block -p 0 %d", c.data(htreeDir, 1)) }},
		{name: "bg0-free-blocks", do: func(c *cx) { c.dbg("set_bg 0 free_blocks_count 3") }},
		// The root's dx_root_info (reserved_zero to unused_flags) all 0x5a:
		// PR_2_HTREE_BAD_ROOT prints check_dir_block's sticky pctx.dir.
		{name: "htree-root-info-5a", do: func(c *cx) { c.dbgf("zap_block -f %s -o 24 -l 8 -p 0x5a 0", htreeDir) }},
	}
}

// cases returns every differential case, named "<fs>/<corruption>".
func cases() []dcase {
	var all []dcase
	add := func(fs string, cs ...dcase) {
		for _, c := range cs {
			c.fs = fs
			c.name = fs + "/" + c.name
			all = append(all, c)
		}
	}
	for _, d := range fsDefs() {
		add(d.name, generic(d.name)...)
	}
	add("ext2", ext2Cases()...)
	add("ext2", badBlocksCases()...)
	add("ext4", badBlocksCases()...)
	add("ext4", bbExtentCases()...)
	add("ext4-1k", bbExtentCases()...)
	add("ext3", ext3Cases()...)
	for _, fs := range []string{"ext3", "ext4", "ext4-uninit", "ext4-32bit"} {
		add(fs, journalRestartCase())
	}
	add("ext4", ext4Cases()...)
	add("ext4-noflex", noflexCases()...)
	add("ext4-uninit", uninitCases()...)
	add("ext4-32bit", bit32Cases()...)
	add("ext4-1k", ext41kCases()...)
	add("ext4-128", ino128Cases()...)
	add("bigalloc", bigallocCases()...)
	add("inline", inlineCases()...)
	add("metabg", metabgCases()...)
	add("sparse2", sparse2Cases()...)
	add("largedir", largedirCases()...)
	add("htree", htreeCases()...)
	add("quota", quotaCases()...)
	add("eainode", eainodeCases()...)
	add("orphan", orphanCases()...)
	add("mmp", mmpCases()...)
	add("casefold", casefoldCases()...)
	add("rev0", rev0Cases()...)
	return all
}

// result is one checker's verdict on a case.
type result struct {
	exit   int
	passes []string
	out    string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d passes [%s]", r.exit, strings.Join(r.passes, " "))
}

// differentialSample is the default tier's share of TestDifferential's
// cases: one in six (about 140 of 820, every feature set represented).
const differentialSample = 6

func TestDifferential(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	testfs.GofsckPath(t) // build first, so a broken build fails once, clearly

	all := cases()
	names := make([]string, 0, len(all))
	seen := map[string]bool{}
	for _, c := range all {
		if seen[c.name] {
			t.Fatalf("duplicate case name %s", c.name)
		}
		seen[c.name] = true
		names = append(names, c.name)
	}
	if testing.Short() {
		// Only the corruptions every feature set shares.
		var short []dcase
		for _, c := range all {
			if slices.ContainsFunc(generic(c.fs), func(g dcase) bool { return c.name == c.fs+"/"+g.name }) {
				short = append(short, c)
			}
		}
		all = short
	}
	// The default tier runs a fixed sample of one case in
	// differentialSample (of every feature set); the long tier all.
	var sample []dcase
	for _, c := range all {
		if testfs.InSample(c.name, differentialSample) {
			sample = append(sample, c)
		}
	}
	all = sample
	known := loadKnown(t, knownDiffPath)
	textKnown := loadKnown(t, fnTextKnownPath)
	repairKnown := loadKnown(t, repairKnownPath)
	preenKnown := loadKnown(t, preenKnownPath)

	// Base images are built on first use, once per feature set.
	defs := map[string]fsDef{}
	for _, d := range fsDefs() {
		defs[d.name] = d
	}
	baseDir := t.TempDir()
	type baseImg struct {
		once sync.Once
		path string
		err  string
	}
	bases := map[string]*baseImg{}
	for n := range defs {
		bases[n] = &baseImg{}
	}
	base := func(t *testing.T, fs string) string {
		b := bases[fs]
		b.once.Do(func() {
			// The subtest that needs the base first builds it; the image is
			// then moved out of its temp dir into baseDir, which lives as
			// long as the whole test.
			b.err = "building it failed in " + t.Name()
			img := testfs.MkImage(t, defs[fs].spec)
			dst := filepath.Join(baseDir, fs+".img")
			if err := os.Rename(img, dst); err != nil {
				b.err = err.Error()
				return
			}
			b.err = ""
			if out, exit := testfs.E2fsck(t, dst, "-fn"); exit != 0 {
				b.err = fmt.Sprintf("base image %s is not clean (e2fsck -fn exit %d):\n%s", fs, exit, out)
				return
			}
			b.path = dst
			if *diffKeep != "" {
				os.MkdirAll(*diffKeep, 0o755)
				testfs.CopyImage(t, dst) // fails loudly if unreadable
				if data, err := os.ReadFile(dst); err == nil {
					os.WriteFile(filepath.Join(*diffKeep, fs+".img"), data, 0o644)
				}
			}
		})
		if b.err != "" || b.path == "" {
			t.Fatalf("base image %s: %s", fs, b.err)
		}
		return b.path
	}

	var mu sync.Mutex
	report := map[string][2]result{}
	t.Run("case", func(t *testing.T) {
		for _, dc := range all {
			t.Run(dc.name, func(t *testing.T) {
				t.Parallel()
				img := testfs.CopyImage(t, base(t, dc.fs))
				before := testfs.FileSHA256(t, img)
				dc.do(&cx{t: t, img: img})
				after := testfs.FileSHA256(t, img)
				if changed := after != before; changed == dc.base {
					t.Fatalf("corruption changed the image: %v, want %v", changed, !dc.base)
				}
				eout, eexit := testfs.E2fsckInPlace(t, img, "-fn") // -n: no copy needed
				ref := result{exit: eexit, passes: testfs.ProblemPasses(eout), out: eout}
				if dc.clean && eexit != 0 {
					t.Fatalf("no-effect case, but e2fsck -fn reports problems (exit %d):\n%s", eexit, eout)
				}
				if dc.clean && !dc.msgs && len(ref.passes) > 0 {
					t.Fatalf("no-effect case, but e2fsck -fn prints problems in passes %v:\n%s", ref.passes, eout)
				}
				if dc.msgs && len(ref.passes) == 0 {
					t.Fatalf("message-only case, but e2fsck -fn prints no problem:\n%s", eout)
				}
				if !dc.clean && eexit == 0 {
					t.Fatalf("corruption case, but e2fsck -fn reports the image clean; make it a no-effect case or fix it:\n%s", eout)
				}
				gout, gexit := testfs.Gofsck(t, img, "-fn")
				got := result{exit: gexit, passes: testfs.ProblemPasses(gout), out: gout}
				if testfs.FileSHA256(t, img) != after {
					t.Errorf("gofsck -fn modified the image")
				}
				mu.Lock()
				report[dc.name] = [2]result{ref, got}
				mu.Unlock()

				agree := gexit == eexit && slices.Equal(got.passes, ref.passes)
				reason := fmt.Sprintf("e2fsck %v; gofsck %v", ref, got)
				detail := fmt.Sprintf("--- e2fsck -fn:\n%s--- gofsck -fn:\n%s", eout, gout)
				known.record(t, dc.name, agree, reason, detail)
				// Where the verdicts agree and e2fsck did not crash, the
				// whole transcript, normalised as the -fy leg's.
				tagree, treason := true, ""
				if agree && !e2fsckCrashed(eout, eexit) {
					if g, e := transcript(gout, img), transcript(eout, img); g != e {
						tagree, treason = false, "-fn transcript differs: "+firstDiffLine(e, g)
					}
				}
				textKnown.record(t, dc.name, tagree, treason, detail)

				ragree, rreason, rdetail := repairLeg(t, img)
				repairKnown.record(t, dc.name, ragree, rreason, rdetail)
				pagree, preason, pdetail := preenLeg(t, img)
				preenKnown.record(t, dc.name, pagree, preason, pdetail)
			})
		}
	})
	if *diffReport != "" {
		writeDiffReport(t, *diffReport, all, report)
	}
	known.finish(t, "differential", names, knownDiffHeader)
	textKnown.finish(t, "-fn transcript", names, fnTextKnownHeader)
	repairKnown.finish(t, "repair", names, repairKnownHeader)
	preenKnown.finish(t, "preen", names, preenKnownHeader)
}

// e2fsckCrashed reports whether e2fsck died of a signal (its own handler
// prints "Signal (N) SIG..." and exits 8), when its transcript is not one
// to reproduce.
func e2fsckCrashed(out string, exit int) bool {
	return exit >= 128 || (exit == 8 && strings.Contains(out, "\nSignal ("))
}

func writeDiffReport(t *testing.T, path string, all []dcase, report map[string][2]result) {
	var b strings.Builder
	b.WriteString("case\tclean\te2fsck_exit\te2fsck_passes\tgofsck_exit\tgofsck_passes\n")
	sorted := slices.Clone(all)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	for _, c := range sorted {
		r, ok := report[c.name]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "%s\t%v\t%d\t%s\t%d\t%s\n", c.name, c.clean, r[0].exit, strings.Join(r[0].passes, ","),
			r[1].exit, strings.Join(r[1].passes, ","))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Error(err)
	}
}
