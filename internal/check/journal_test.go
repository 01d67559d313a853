package check_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

func TestMain(m *testing.M) { testfs.Main(m) }

// jsbOff is the byte offset of the journal superblock of an image whose
// journal is inode 8.
func jsbOff(t *testing.T, img string) int64 {
	t.Helper()
	return int64(testfs.Bmap(t, img, "<8>", 0)) * testfs.BlockSize(t, img)
}

func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// writeJSB writes v at offset off of the journal superblock.
func writeJSB(off int64, v []byte) func(t *testing.T, img string) {
	return func(t *testing.T, img string) { testfs.WriteAt(t, img, jsbOff(t, img)+off, v) }
}

func debugfsCmds(cmds ...string) func(t *testing.T, img string) {
	return func(t *testing.T, img string) { testfs.Debugfs(t, img, cmds...) }
}

// comErrRE matches e2fsck's com_err lines about the journal superblock,
// which gofsck's reporter does not print yet (check.LibOutput).
var comErrRE = regexp.MustCompile(`^PROG: The journal superblock is corrupt .*: (no valid journal superblock found|journal too short|incorrect fast commit blocks)$`)

// progRE matches the program name that starts com_err and fatal_error
// lines (argv[0], or the bare name).
var progRE = regexp.MustCompile(`^\S*(e2fsck|gofsck): `)

// journalLines returns the lines printed before the first pass (the
// journal and superblock problems and the abort messages), with the
// program name replaced by PROG.
func journalLines(out string, fatal bool) []string {
	tr := testfs.ParseTranscript(out)
	var ls []string
	for _, l := range tr.Problems["0"] {
		l = progRE.ReplaceAllString(l, "PROG: ")
		switch {
		case comErrRE.MatchString(l):
			continue
		case fatal && (l == "PROG: aborted" || strings.HasPrefix(l, "Warning: skipping journal recovery")):
			// After a fatal problem e2fsck exits at once; cmd/gofsck
			// still prints these (see CheckJournal's doc).
			continue
		}
		ls = append(ls, l)
	}
	return ls
}

func TestCheckJournalMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	ext3 := testfs.Spec{FSType: "ext3", Size: 8 << 20}
	ext4 := testfs.Spec{FSType: "ext4", Size: 16 << 20}
	cases := []struct {
		name    string
		spec    testfs.Spec
		corrupt func(t *testing.T, img string)
	}{
		{"ext3-clean", ext3, nil},
		{"ext4-clean", ext4, nil},
		{"journal-inum-zero", ext3, debugfsCmds("ssv journal_inum 0")},
		{"journal-inum-huge", ext3, debugfsCmds("ssv journal_inum 99999")},
		{"has-journal-cleared", ext3, debugfsCmds("feature -has_journal")},
		{"needs-recovery-no-journal", ext3, debugfsCmds("feature -has_journal", "ssv journal_inum 0", "feature needs_recovery")},
		{"ext3-mode-zero-backup-ok", ext3, debugfsCmds("sif <8> mode 0")},
		{"ext4-mode-zero-backup-extents", ext4, debugfsCmds("sif <8> mode 0")},
		{"mode-zero-no-backup", ext3, debugfsCmds("sif <8> mode 0", "ssv jnl_backup_type 0")},
		{"links-zero-no-backup", ext3, debugfsCmds("sif <8> links_count 0", "ssv jnl_backup_type 0")},
		{"encrypted-no-backup", ext3, debugfsCmds("sif <8> flags 0x800", "ssv jnl_backup_type 0")},
		{"size-small-backup-ok", ext3, debugfsCmds("sif <8> size 1024")},
		{"size-small-no-backup", ext3, debugfsCmds("sif <8> size 1024", "ssv jnl_backup_type 0")},
		{"hole-no-backup", ext3, debugfsCmds("sif <8> block[5] 0", "ssv jnl_backup_type 0")},
		{"block-out-of-range-no-backup", ext3, debugfsCmds("sif <8> block[IND] 99999999", "ssv jnl_backup_type 0")},
		{"ext4-extent-out-of-range-no-backup", ext4, debugfsCmds("sif <8> block[5] 99999999", "ssv jnl_backup_type 0")},
		{"jsb-magic", ext3, writeJSB(0, be32(0))},
		{"jsb-magic-no-has-journal", ext3, func(t *testing.T, img string) {
			writeJSB(0, be32(0))(t, img)
			testfs.Debugfs(t, img, "feature -has_journal")
		}},
		{"jsb-blocktype-descriptor", ext3, writeJSB(4, be32(1))},
		{"jsb-blocktype-unknown", ext3, writeJSB(4, be32(7))},
		{"jsb-v1-with-v2-fields", ext3, func(t *testing.T, img string) {
			writeJSB(4, be32(3))(t, img)
			writeJSB(0x24, be32(1))(t, img)
		}},
		{"jsb-nr-users-2", ext3, writeJSB(0x40, be32(2))},
		{"jsb-incompat-unknown", ext3, writeJSB(0x28, be32(0x80))},
		{"jsb-rocompat-unknown", ext3, writeJSB(0x2C, be32(1))},
		{"jsb-csum-v2-and-v3", ext3, writeJSB(0x28, be32(0x18))},
		{"jsb-csum-v3-and-v1", ext3, func(t *testing.T, img string) {
			writeJSB(0x24, be32(1))(t, img)
			writeJSB(0x28, be32(0x10))(t, img)
		}},
		{"jsb-csum-type-bad", ext3, writeJSB(0x28, be32(0x10))},
		{"jsb-csum-bad", ext3, func(t *testing.T, img string) {
			writeJSB(0x28, be32(0x10))(t, img)
			writeJSB(0x50, []byte{4})(t, img)
		}},
		{"jsb-blocksize", ext3, writeJSB(12, be32(2048))},
		{"jsb-maxlen", ext3, writeJSB(16, be32(0x7f0000))},
		{"jsb-maxlen-smaller", ext3, writeJSB(16, be32(1000))},
		{"jsb-fast-commit-too-big", ext4, func(t *testing.T, img string) {
			writeJSB(0x28, be32(0x20))(t, img)
			writeJSB(0x58, be32(4000))(t, img) // s_num_fc_blks
		}},
		{"jsb-start", ext3, writeJSB(28, be32(5))},
		{"jsb-start-needs-recovery", ext3, func(t *testing.T, img string) {
			writeJSB(28, be32(5))(t, img)
			testfs.Debugfs(t, img, "feature needs_recovery")
		}},
	}
	// Cases whose problem is fatal (see journalLines).
	fatal := map[string]bool{"jsb-nr-users-2": true}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			img := testfs.MkImage(t, tc.spec)
			if tc.corrupt != nil {
				tc.corrupt(t, img)
			}
			compareJournalCheck(t, img, fatal[tc.name])
		})
	}
}

// compareJournalCheck runs e2fsck -fn and gofsck -fn (with extra args) on
// img and compares the exit codes and the pre-pass lines.
func compareJournalCheck(t *testing.T, img string, fatal bool, args ...string) {
	t.Helper()
	eout, eexit := testfs.E2fsck(t, img, append([]string{"-fn"}, args...)...)
	gout, gexit := testfs.Gofsck(t, img, append([]string{"-fn"}, args...)...)
	if eexit != gexit {
		t.Errorf("exit: e2fsck %d, gofsck %d\n--- e2fsck:\n%s--- gofsck:\n%s", eexit, gexit, eout, gout)
	}
	if e, g := journalLines(eout, fatal), journalLines(gout, fatal); !slices.Equal(e, g) {
		t.Errorf("pre-pass lines differ:\ne2fsck: %q\ngofsck: %q\n--- e2fsck:\n%s--- gofsck:\n%s", e, g, eout, gout)
	}
}

// TestCheckJournalExternal checks -j on the external-journal images of the
// e2fsprogs test suite when they are present (they are not part of this
// repository).
func TestCheckJournalExternal(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	const suite = "/work/shared/e2fsprogs-tests"
	if _, err := os.Stat(filepath.Join(suite, "f_ext_journal")); err != nil {
		t.Skipf("e2fsprogs test images not available: %v", err)
	}
	dir := t.TempDir()
	unpack := func(test, file string) string {
		dst := filepath.Join(dir, test+"-"+strings.TrimSuffix(file, ".gz"))
		testfs.Decompress(t, filepath.Join(suite, test, file), dst)
		return dst
	}
	fs := unpack("f_ext_journal", "image.gz")
	jnl := unpack("f_ext_journal", "journal.gz")
	cases := []struct {
		name  string
		fatal bool
		args  []string
	}{
		{"matching-journal", false, []string{"-j", jnl}},
		{"missing-device", false, []string{"-j", filepath.Join(dir, "nonexistent")}},
		{"not-a-journal", true, []string{"-j", fs}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			img := filepath.Join(t.TempDir(), "fs.img")
			data, err := os.ReadFile(fs)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(img, data, 0o644); err != nil {
				t.Fatal(err)
			}
			compareJournalCheck(t, img, tc.fatal, tc.args...)
		})
	}
}
