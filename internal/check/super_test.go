package check_test

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gofsck/internal/testfs"
)

// superBases are the images the superblock cases corrupt, built once.
var superBases = map[string]testfs.Spec{
	"ext2":    {Size: 8 << 20, FSType: "ext2", BlockSize: 1024},
	"ext4":    {Size: 16 << 20, FSType: "ext4", BlockSize: 4096, ExtraArgs: []string{"-g", "1024"}},
	"ext4-1k": {Size: 16 << 20, FSType: "ext4", BlockSize: 1024},
	"metabg":  {Size: 16 << 20, FSType: "ext4", BlockSize: 1024, Features: "meta_bg,^resize_inode", ExtraArgs: []string{"-g", "1024"}},
	"sparse2": {Size: 16 << 20, FSType: "ext4", BlockSize: 1024, Features: "sparse_super2", ExtraArgs: []string{"-g", "1024"}},
	"orphan":  {Size: 16 << 20, FSType: "ext4", BlockSize: 4096, Features: "orphan_file", ExtraArgs: []string{"-g", "1024"}},
}

var (
	superBaseMu  sync.Mutex
	superBaseImg = map[string]string{} // superBaseMu protects superBaseImg.
)

// superBase returns the base image name, building it on first use.
func superBase(t *testing.T, name string) string {
	t.Helper()
	superBaseMu.Lock()
	defer superBaseMu.Unlock()
	if img, ok := superBaseImg[name]; ok {
		return img
	}
	spec, ok := superBases[name]
	if !ok {
		t.Fatalf("no base image %q", name)
	}
	// Built under the parent test, so the image lives as long as all cases.
	img := testfs.MkImage(superParent, spec)
	superBaseImg[name] = img
	return img
}

// superParent owns the base images (set by TestSuperDifferential).
var superParent testing.TB

// pr6Prefixes start the end-of-run orphan file messages (PR_6_ORPHAN_*).
var pr6Prefixes = []string{
	"Superblock has orphan file without journal",
	"Orphan file (inode",
	"Feature orphan_present is set",
	"Failed to initialize orphan file",
}

// nowRE matches the current time in the future-time messages, which
// differs between two runs. (go-cmp is not a dependency of the module, so
// the comparisons print both line lists.)
var nowRE = regexp.MustCompile(`now = [^)]*\)`)

// prePass returns the problem lines before "Pass 1" and the end-of-run
// orphan file lines (from the first PR_6_ORPHAN_* message on).
func prePass(out string) (pre, end []string) {
	tr := testfs.ParseTranscript(nowRE.ReplaceAllString(out, "now = NOW)"))
	pre = tr.Problems["0"]
	p5 := tr.Problems["5"]
	for i, l := range p5 {
		if slices.ContainsFunc(pr6Prefixes, func(p string) bool { return strings.HasPrefix(l, p) }) {
			end = p5[i:]
			break
		}
	}
	return pre, end
}

// TestSuperDifferential corrupts superblock fields, the resize inode and
// the orphan file with debugfs and requires gofsck's exit status, its
// problem lines before pass 1 and its end-of-run orphan file lines to be
// e2fsck -fn's (or e2fsck -n's for the clean-skip cases).
func TestSuperDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images and runs e2fsck")
	}
	superParent = t
	future := time.Now().Add(3 * 24 * time.Hour).UTC().Format("20060102150405")
	cases := []struct {
		name  string
		base  string
		cmds  []string
		flags string // default -fn
		// pending: gofsck agrees only once cmd/gofsck stops after a
		// superblock check that aborts (Checker.SuperAborted) or passes
		// -f to the checker; the case documents e2fsck's behaviour.
		pending string
	}{
		// Superblock values and features (spec 2.4).
		{name: "r-blocks", base: "ext4", cmds: []string{"ssv r_blocks_count 99999999"}, pending: "abort"},
		{name: "first-data-block", base: "ext2", cmds: []string{"ssv first_data_block 0"}, pending: "abort"},
		{name: "first-data-block-1k-ext4", base: "ext4-1k", cmds: []string{"ssv first_data_block 0"}, pending: "abort"},
		{name: "inodes-count", base: "ext4", cmds: []string{"ssv inodes_count 100"}, pending: "abort"},
		{name: "reserved-gdt-too-big", base: "ext4", cmds: []string{"ssv reserved_gdt_blocks 2000"}, pending: "abort"},
		{name: "mtime-future", base: "ext2", cmds: []string{"ssv mtime " + future}},
		{name: "mtime-future-no-force", base: "ext2", cmds: []string{"ssv mtime " + future}, flags: "-n", pending: "force"},
		{name: "64bit-without-extents", base: "ext4", cmds: []string{"feature -extent"}},
		{name: "metadata-csum-and-uninit-bg", base: "ext4", cmds: []string{"feature uninit_bg"}},
		{name: "min-extra-isize", base: "ext4", cmds: []string{"ssv min_extra_isize 1000"}},
		{name: "want-extra-isize", base: "ext4", cmds: []string{"ssv want_extra_isize 6"}},
		{name: "usr-quota-inum-5", base: "ext4", cmds: []string{"ssv usr_quota_inum 5"}},
		{name: "prj-quota-inum-3", base: "ext4", cmds: []string{"ssv prj_quota_inum 3"}},
		{name: "grp-quota-inum-huge", base: "ext4", cmds: []string{"ssv grp_quota_inum 99999"}},
		// Resize inode (spec 2.8).
		{name: "reserved-gdt-without-resize", base: "metabg", cmds: []string{"ssv reserved_gdt_blocks 5"}},
		{name: "resize-inode-with-meta-bg", base: "metabg", cmds: []string{"feature resize_inode"}},
		{name: "resize-feature-cleared", base: "ext4", cmds: []string{"feature -resize_inode"}},
		{name: "resize-inode-direct-block", base: "ext4", cmds: []string{"sif <7> block[2] 5"}},
		{name: "resize-inode-mode-dir", base: "ext4", cmds: []string{"sif <7> mode 040755"}},
		{name: "resize-inode-links-zero", base: "ext4-1k", cmds: []string{"sif <7> links_count 0"}},
		{name: "resize-dind-out-of-range", base: "ext4-1k", cmds: []string{"sif <7> block[DIND] 99999999"}},
		{name: "reserved-gdt-fewer", base: "ext4-1k", cmds: []string{"ssv reserved_gdt_blocks 3"}},
		{name: "sparse2-backup-moved", base: "sparse2", cmds: []string{"ssv backup_bgs[1] 3"}},
		{name: "sparse2-cleared", base: "sparse2", cmds: []string{"feature -sparse_super2"}},
		// Orphan file at the end of the run (spec 2.7, 3.9).
		{name: "orphan-present-clean-file", base: "orphan", cmds: []string{"feature orphan_present"}},
		{name: "orphan-present-no-file", base: "ext4", cmds: []string{"feature orphan_present"}},
		{name: "orphan-file-size", base: "orphan", cmds: []string{"sif <12> size 100"}},
		{name: "orphan-file-without-journal", base: "orphan", cmds: []string{"feature -has_journal"}},
		{name: "orphan-file-dirty", base: "orphan", cmds: []string{"zap_block -f <12> -p 0x55 0"}},
		{name: "orphan-file-inum-zero", base: "orphan", cmds: []string{"ssv orphan_file_inum 0"}},
		// The clean-skip decision (spec 1.6), without -f.
		{name: "skip-clean", base: "ext4", flags: "-n"},
		{name: "skip-orphan-present", base: "orphan", cmds: []string{"feature orphan_present"}, flags: "-n"},
		{name: "skip-not-clean", base: "ext4", cmds: []string{"ssv state 0"}, flags: "-n"},
		{name: "skip-errors", base: "ext4", cmds: []string{"ssv state 3"}, flags: "-n"},
		{name: "skip-mount-count", base: "ext4", cmds: []string{"ssv max_mnt_count 20", "ssv mnt_count 20"}, flags: "-n"},
		{name: "skip-mount-count-hint", base: "ext4", cmds: []string{"ssv max_mnt_count 20", "ssv mnt_count 17"}, flags: "-n"},
		{name: "skip-mount-count-next", base: "ext4", cmds: []string{"ssv max_mnt_count 20", "ssv mnt_count 19"}, flags: "-n"},
		{name: "skip-interval-expired", base: "ext4", cmds: []string{"ssv checkinterval 86400", "ssv lastcheck 20200101000000"}, flags: "-n"},
		{name: "skip-lastcheck-future", base: "ext4", cmds: []string{"ssv checkinterval 86400", "ssv lastcheck 20990101000000"}, flags: "-n"},
		{name: "skip-lastcheck-fudged", base: "ext4", cmds: []string{"ssv checkinterval 43200",
			"ssv lastcheck " + time.Now().Add(10*time.Hour).UTC().Format("20060102150405")}, flags: "-n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.pending != "" {
				t.Skipf("pending cmd/gofsck support (%s)", tc.pending)
			}
			img := testfs.CopyImage(t, superBase(t, tc.base))
			if len(tc.cmds) > 0 {
				testfs.Debugfs(t, img, tc.cmds...)
			}
			flags := tc.flags
			if flags == "" {
				flags = "-fn"
			}
			eout, eexit := testfs.E2fsck(t, img, flags)
			gout, gexit := testfs.Gofsck(t, img, flags)
			if eexit != gexit {
				t.Errorf("exit %d, e2fsck %s exits %d", gexit, flags, eexit)
			}
			if flags == "-n" {
				// Compare the skip line itself, which the transcript parser drops.
				first := func(out string) string {
					for _, l := range strings.Split(nowRE.ReplaceAllString(out, ""), "\n") {
						if l != "" && !strings.HasPrefix(l, "e2fsck 1") && !strings.HasPrefix(l, "gofsck 0") {
							return l
						}
					}
					return ""
				}
				if e, g := first(eout), first(gout); e != g {
					t.Errorf("first line %q, e2fsck prints %q", g, e)
				}
			}
			epre, eend := prePass(eout)
			gpre, gend := prePass(gout)
			if !slices.Equal(epre, gpre) {
				t.Errorf("problems before pass 1:\n%s\ne2fsck:\n%s", strings.Join(gpre, "\n"), strings.Join(epre, "\n"))
			}
			if !slices.Equal(eend, gend) {
				t.Errorf("end-of-run orphan file problems:\n%s\ne2fsck:\n%s", strings.Join(gend, "\n"), strings.Join(eend, "\n"))
			}
			if t.Failed() {
				t.Logf("e2fsck %s:\n%s\ngofsck %s:\n%s", flags, eout, flags, gout)
			}
		})
	}
}
