package main

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// TestExternalJournalMatchesE2fsck makes a filesystem whose journal lives
// on a journal device (mke2fs -O journal_dev, attached to a loop device for
// mke2fs -J device= and the kernel), copies both while the filesystem is
// mounted (so that it needs recovery from the external journal) and
// repairs the copies with gofsck and e2fsck, naming the journal with -j:
// same transcript and exit code, the same filesystem image block for block
// (except the superblock's times and s_kbytes_written) and the same
// journal device byte for byte. The read-only check (-fn, recovery
// skipped) must print what e2fsck prints and write nothing. A corrupted
// journal device superblock (bad magic, wrong UUID, bad checksum) is
// judged as e2fsck judges it. Without -j, the journal device is found by
// its UUID among the block devices (a loop device), as e2fsck's blkid
// finds it, and the s_journal_dev hint is fixed alike.
func TestExternalJournalMatchesE2fsck(t *testing.T) {
	t.Parallel() // independent of the others; runs beside them on the second CPU
	testfs.RequireE2fsprogs(t)
	if os.Geteuid() != 0 {
		if testfs.InCI() {
			t.Fatal("needs root for losetup and mount")
		}
		t.Skip("needs root for losetup and mount")
	}
	for _, c := range []struct {
		name string
		bs   string
		jlen string // journal device blocks
		jdev string // journal device features
		feat string
	}{
		{"4k", "4096", "2048", "journal_dev", "-t ext4"},
		{"1k-csum", "1024", "4096", "journal_dev,metadata_csum", "-t ext4 -O metadata_csum"},
		{"1k-ext3", "1024", "4096", "journal_dev", "-t ext3"},
		// Fast commits in the external journal.
		{"4k-fast-commit", "4096", "2048", "journal_dev", "-t ext4 -O fast_commit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsCopy, jCopy := mountedExtJournalCopy(t, c.bs, c.jlen, c.jdev, strings.Fields(c.feat))
			for _, mode := range []string{"-fy", "-y", "-p", "-fn"} {
				gimg, eimg := testfs.CopyImage(t, fsCopy), testfs.CopyImage(t, fsCopy)
				gj, ej := testfs.CopyImage(t, jCopy), testfs.CopyImage(t, jCopy)
				gout, gcode := runGofsck(mode, "-j", gj, gimg)
				eout, ecode := testfs.E2fsckInPlace(t, eimg, mode, "-j", ej)
				if g, e := norm(strings.ReplaceAll(gout, gj, ej), gimg), norm(eout, eimg); g != e || gcode != ecode {
					t.Errorf("%s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", mode, gcode, ecode, e, g)
				}
				if mode == "-fn" {
					for _, p := range [][2]string{{gimg, fsCopy}, {gj, jCopy}} {
						if !sameFile(t, p[0], p[1]) {
							t.Errorf("-fn wrote to %s", p[0])
						}
					}
					continue
				}
				if !strings.Contains(eout, "recovering journal") {
					t.Errorf("%s: e2fsck did not recover the journal:\n%s", mode, eout)
				}
				compareRecovered(t, mode, gimg, eimg)
				if !sameFile(t, gj, ej) {
					t.Errorf("%s: the journal devices differ after recovery", mode)
				}
				// Clean afterwards as e2fsck's own result is (a fast-commit
				// replay can leave what only a forced check fixes).
				out, code := testfs.E2fsck(t, gimg, "-fn", "-j", gj)
				if _, ref := testfs.E2fsck(t, eimg, "-fn", "-j", ej); code != ref {
					t.Errorf("%s: e2fsck -fn exits %d after the repair, %d after e2fsck's:\n%s", mode, code, ref, out)
				}
			}
			// No -j: the journal device is found by its UUID on a loop
			// device (and s_journal_dev, the number of the loop device
			// mke2fs used, may need its hint fixed).
			scratch := testfs.CopyImage(t, jCopy)
			loop := strings.TrimSpace(mustRun(t, "losetup", "-f", "--show", scratch))
			detach := attached(t, loop)
			jdata, err := os.ReadFile(jCopy)
			if err != nil {
				t.Fatal(err)
			}
			for _, mode := range []string{"-fy", "-fn"} {
				var outs [2]string
				var codes [2]int
				var imgs [2]string
				var journals [2][]byte
				for i := range 2 {
					if err := os.WriteFile(loop, jdata, 0o644); err != nil {
						t.Fatal(err)
					}
					imgs[i] = testfs.CopyImage(t, fsCopy)
					if i == 0 {
						outs[i], codes[i] = testfs.E2fsckInPlace(t, imgs[i], mode)
					} else {
						outs[i], codes[i] = runGofsck(mode, imgs[i])
					}
					outs[i] = norm(outs[i], imgs[i])
					if journals[i], err = os.ReadFile(loop); err != nil {
						t.Fatal(err)
					}
				}
				if outs[0] != outs[1] || codes[0] != codes[1] {
					t.Errorf("by UUID %s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", mode, codes[1], codes[0], outs[0], outs[1])
				}
				if mode == "-fy" && !strings.Contains(outs[0], "recovering journal") {
					t.Errorf("by UUID: e2fsck did not recover the journal:\n%s", outs[0])
				}
				compareRecovered(t, "by UUID "+mode, imgs[1], imgs[0])
				if !bytes.Equal(journals[0], journals[1]) {
					t.Errorf("by UUID %s: the journal devices differ", mode)
				}
			}
			detach()

			// A damaged journal device superblock.
			for _, d := range []struct {
				name string
				off  int64 // from the ext2 superblock of the journal device
				val  []byte
			}{
				{"bad-magic", 0x38, []byte{0, 0}},
				{"wrong-uuid", 0x68, []byte{0xde, 0xad}},
				{"bad-csum", 0x3FC, []byte{1, 2, 3, 4}},
			} {
				if d.name == "bad-csum" && !strings.Contains(c.jdev, "metadata_csum") {
					continue
				}
				for _, mode := range []string{"-fy", "-fn"} {
					gimg, eimg := testfs.CopyImage(t, fsCopy), testfs.CopyImage(t, fsCopy)
					gj, ej := testfs.CopyImage(t, jCopy), testfs.CopyImage(t, jCopy)
					testfs.WriteAt(t, gj, 1024+d.off, d.val)
					testfs.WriteAt(t, ej, 1024+d.off, d.val)
					gout, gcode := runGofsck(mode, "-j", gj, gimg)
					eout, ecode := testfs.E2fsckInPlace(t, eimg, mode, "-j", ej)
					if want := damagedWant[d.name]; !strings.Contains(eout, want) {
						t.Errorf("%s %s: e2fsck does not say %q:\n%s", d.name, mode, want, eout)
					}
					if g, e := norm(strings.ReplaceAll(gout, gj, ej), gimg), norm(eout, eimg); g != e || gcode != ecode {
						t.Errorf("%s %s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", d.name, mode, gcode, ecode, e, g)
					}
					compareRecovered(t, d.name+" "+mode, gimg, eimg)
					if !sameFile(t, gj, ej) {
						t.Errorf("%s %s: the journal devices differ", d.name, mode)
					}
				}
			}
		})
	}
}

// mountedExtJournalCopy makes a journal device and a filesystem using it
// (block size bs), writes into the mounted filesystem through the kernel
// and returns copies of both taken while it is still mounted.
func mountedExtJournalCopy(t *testing.T, bs, jlen, jfeat string, mkfs []string) (fsCopy, jCopy string) {
	t.Helper()
	dir := t.TempDir()
	jimg := filepath.Join(dir, "journal.img")
	mustRun(t, "mke2fs", "-F", "-q", "-O", jfeat, "-b", bs, "-U", newJournalUUID(t), jimg, jlen)
	loop := strings.TrimSpace(mustRun(t, "losetup", "-f", "--show", jimg))
	detach := attached(t, loop)
	defer detach()
	fsCopy, jCopy = filepath.Join(dir, "fs-copy.img"), filepath.Join(dir, "journal-copy.img")
	args := append(append([]string{}, mkfs...), "-b", bs, "-J", "device="+loop)
	testfs.KernelImage(t, 24<<20, args, func(mnt string) {
		if strings.Contains(strings.Join(mkfs, " "), "fast_commit") {
			d := filepath.Join(mnt, "d")
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
			syncFS(t, mnt)
			writeSync(t, filepath.Join(d, "a"), 30000, false)
			writeSync(t, filepath.Join(d, "b"), 5000, false)
			if err := os.Remove(filepath.Join(d, "b")); err != nil {
				t.Fatal(err)
			}
			writeSync(t, filepath.Join(d, "c"), 100, false)
		} else {
			recoveryWorkload(t, mnt)
		}
		img := filepath.Join(filepath.Dir(mnt), "kernel.img")
		data, err := os.ReadFile(img)
		if err != nil {
			t.Fatal(err)
		}
		// The journal as the kernel wrote it: read through the loop
		// device, whose cache is the one the kernel wrote to.
		jdata, err := os.ReadFile(loop)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fsCopy, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(jCopy, jdata, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	return fsCopy, jCopy
}

func mustRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	da, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(da, db)
}

// newJournalUUID returns a fresh random UUID for a journal device. Each
// test makes its own: a loop device of an earlier test (or run) that has
// not gone away yet must not answer the UUID lookup of a later one, which
// e2fsck's blkid cache may not see while gofsck's scan does.
func newJournalUUID(t *testing.T) string {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		t.Fatal(err)
	}
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// damagedWant is what e2fsck says about each damaged journal device.
var damagedWant = map[string]string{
	"bad-magic":  "External journal has bad superblock",
	"wrong-uuid": "External journal does not support this filesystem",
	"bad-csum":   "External journal superblock checksum does not match superblock",
}

// attached returns the function that detaches loop, once (also at the end
// of the test): a loop device number is not detached again after another
// user may have attached it.
func attached(t *testing.T, loop string) func() {
	done := false
	detach := func() {
		if !done {
			done = true
			exec.Command("losetup", "-d", loop).Run()
		}
	}
	t.Cleanup(detach)
	return detach
}

// TestExternalJournalLongTransactions follows e2fsprogs' j_ext_long_trans
// and j_ext_long_revoke_trans on free blocks: debugfs writes a transaction
// of 4000 blocks (several descriptor blocks) into an external journal
// file, and in the revoke variant a second transaction revoking most of
// them; gofsck -fy and e2fsck -fy, given the journal with -j, must print
// the same, exit alike and leave the same image and journal file. No root
// needed.
func TestExternalJournalLongTransactions(t *testing.T) {
	t.Parallel() // independent of the others; runs beside them on the second CPU
	testfs.RequireE2fsprogs(t)
	for _, c := range []struct {
		name string
		cmds []string
	}{
		{"long", []string{"jo -f JNL", "jw -b 100000-104000 /dev/zero", "jc"}},
		{"long-revoke", []string{"jo -f JNL", "jw -b 100000-104000 /dev/zero", "jc",
			"jo -f JNL", "jw -r 100100-103900", "jc"}},
		{"csum", []string{"jo -c -f JNL", "jw -b 100000-101000 /dev/zero", "jc",
			"jo -c -f JNL", "jw -r 100500-100600", "jc"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			img, jnl := filepath.Join(dir, "fs.img"), filepath.Join(dir, "fs.jnl")
			for _, p := range []string{img, jnl} {
				if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			juuid := newJournalUUID(t)
			mustRun(t, "mke2fs", "-F", "-o", "Linux", "-b", "1024", "-O", "journal_dev", "-T", "ext4", "-U", juuid, jnl, "262144")
			mustRun(t, "mke2fs", "-F", "-o", "Linux", "-b", "1024", "-O", "^has_journal", "-T", "ext4", "-U", testfs.UUID, img, "262144")
			testfs.Debugfs(t, img, "feature has_journal", "ssv journal_dev 0x9999", "ssv journal_uuid "+juuid)
			var cmds []string
			for _, s := range c.cmds {
				cmds = append(cmds, strings.ReplaceAll(s, "JNL", jnl))
			}
			testfs.Debugfs(t, img, cmds...)
			if sb := testfs.Superblock(t, img); !strings.Contains(sb["Filesystem features"], "needs_recovery") {
				t.Fatalf("debugfs left no journal to recover: %v", sb["Filesystem features"])
			}
			gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
			gj, ej := testfs.CopyImage(t, jnl), testfs.CopyImage(t, jnl)
			gout, gcode := runGofsck("-fy", "-j", gj, gimg)
			eout, ecode := testfs.E2fsckInPlace(t, eimg, "-fy", "-j", ej)
			if !strings.Contains(eout, "recovering journal") {
				t.Errorf("e2fsck did not recover the journal:\n%s", eout)
			}
			if g, e := norm(strings.ReplaceAll(gout, gj, ej), gimg), norm(eout, eimg); g != e || gcode != ecode {
				t.Errorf("exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", gcode, ecode, e, g)
			}
			// Both write every backup superblock (debugfs changed the
			// features); e2fsck's s_kbytes_written counts writes gofsck
			// does not make, so the masked fields are masked in every copy.
			compareAllSupersMasked(t, c.name, gimg, eimg, 8192*1024)
			if !sameFile(t, gj, ej) {
				t.Errorf("the journal files differ after recovery")
			}
		})
	}
}

// compareAllSupersMasked compares two images block for block with the
// times, s_kbytes_written and checksum of the primary superblock and of
// every backup masked (1 KiB blocks: a group of groupBytes starts at
// 1024 + k*groupBytes).
func compareAllSupersMasked(t *testing.T, name, a, b string, groupBytes int) {
	t.Helper()
	da, db := readMasked(t, name, a, b)
	for g := 1024 + groupBytes; g+1024 <= len(da); g += groupBytes {
		sa, sb := da[g:g+1024], db[g:g+1024]
		if binary.LittleEndian.Uint16(sa[0x38:]) != 0xEF53 {
			continue
		}
		testfs.MaskSuperblockStamps(sa)
		testfs.MaskSuperblockStamps(sb)
	}
	n := 0
	for i := 0; i < len(da); i += 1024 {
		if !bytes.Equal(da[i:i+1024], db[i:i+1024]) {
			if n < 5 {
				t.Errorf("%s: images differ in KiB %d", name, i/1024)
			}
			n++
		}
	}
}

// TestExternalJournalUnresolvableTag: a -j UUID=... or LABEL=... naming no
// block device ends the run while the options are parsed, as e2fsck's
// get_devname failure does (same message, exit 8, nothing else printed).
func TestExternalJournalUnresolvableTag(t *testing.T) {
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 8 << 20})
	for _, tag := range []string{"UUID=00000000-1111-2222-3333-444444444444", "LABEL=no-such-journal-label"} {
		gout, gcode := runGofsck("-fn", "-j", tag, img)
		eout, ecode := runE2fsck(t, "-fn", "-j", tag, img)
		if g, e := normProg(norm(gout, img)), normProg(norm(eout, img)); g != e || gcode != ecode {
			t.Errorf("%s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", tag, gcode, ecode, e, g)
		}
	}
}
