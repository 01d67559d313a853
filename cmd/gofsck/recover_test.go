package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// TestJournalRecoveryMatchesE2fsck copies kernel-made images while they
// are mounted (so that they need recovery and their journals hold
// committed transactions, revokes included) and repairs the copies with
// gofsck and e2fsck: the transcripts and exit codes must be the same, and
// so must the images, block for block, except the superblock's time,
// s_kbytes_written and checksum fields. It needs root for the loop mount
// (skipped without, failing in CI).
func TestJournalRecoveryMatchesE2fsck(t *testing.T) {
	for _, c := range []struct {
		name string
		mkfs []string
	}{
		{"ext4", []string{"-t", "ext4", "-b", "4096"}},
		{"ext3-1k", []string{"-t", "ext3", "-b", "1024"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			copyPath := filepath.Join(t.TempDir(), "mounted-copy.img")
			testfs.KernelImage(t, 24<<20, c.mkfs, func(mnt string) {
				recoveryWorkload(t, mnt)
				// The image file sits next to the mount point.
				img := filepath.Join(filepath.Dir(mnt), "kernel.img")
				data, err := os.ReadFile(img)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(copyPath, data, 0o644); err != nil {
					t.Fatal(err)
				}
			})
			for _, mode := range []string{"-fy", "-y", "-p"} {
				gimg, eimg := testfs.CopyImage(t, copyPath), testfs.CopyImage(t, copyPath)
				gout, gcode := runGofsck(mode, gimg)
				eout, ecode := testfs.E2fsckInPlace(t, eimg, mode)
				if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
					t.Errorf("%s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", mode, gcode, ecode, e, g)
				}
				if !bytes.Contains([]byte(eout), []byte("recovering journal")) {
					t.Errorf("%s: e2fsck did not recover the journal:\n%s", mode, eout)
				}
				compareRecovered(t, mode, gimg, eimg)
			}
		})
	}
}

// recoveryWorkload makes metadata changes in several synced transactions,
// with deletions so that revoke records are logged.
func recoveryWorkload(t *testing.T, mnt string) {
	t.Helper()
	for r := 0; r < 3; r++ {
		for i := 0; i < 30; i++ {
			d := filepath.Join(mnt, fmt.Sprintf("r%d-d%d", r, i))
			if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, "f"), bytes.Repeat([]byte{byte(i)}, 3000*(i%5+1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		syncFS(t, mnt)
		if r > 0 {
			for i := 0; i < 30; i += 3 {
				os.RemoveAll(filepath.Join(mnt, fmt.Sprintf("r%d-d%d", r-1, i)))
			}
		}
		syncFS(t, mnt)
	}
}

func syncFS(t *testing.T, mnt string) {
	t.Helper()
	if out, err := exec.Command("sync", "-f", mnt).CombinedOutput(); err != nil {
		if out2, err2 := exec.Command("sync").CombinedOutput(); err2 != nil {
			t.Fatalf("sync: %v %s %s", err2, out, out2)
		}
	}
}

// compareRecovered is compareImages with every superblock time field
// masked (s_mtime is untouched by both, s_wtime and s_lastcheck come from
// each program's clock, with their high bytes).
func compareRecovered(t *testing.T, name, a, b string) {
	t.Helper()
	da, db := readMasked(t, name, a, b)
	n := 0
	for i := 0; i < len(da); i += 1024 {
		if !bytes.Equal(da[i:i+1024], db[i:i+1024]) {
			if n < 5 {
				j := i
				for da[j] == db[j] {
					j++
				}
				t.Errorf("%s: images differ in KiB %d, first at byte %d", name, i/1024, j)
			}
			n++
		}
	}
}

// TestRecreateJournalMatchesE2fsck: a cleared journal inode is dropped
// before pass 1 and a new journal created at the end ("Recreate journal?")
// as e2fsck does: same transcript and exit code, and e2fsck finds the
// result clean.
func TestRecreateJournalMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	for name, spec := range map[string]testfs.Spec{
		"ext4":    {FSType: "ext4", Size: 32 << 20},
		"ext4-1k": {FSType: "ext4", Size: 64 << 20, BlockSize: 1024},
	} {
		img := testfs.MkImage(t, spec)
		testfs.Debugfs(t, img, "clri <8>")
		gimg, eimg := testfs.CopyImage(t, img), testfs.CopyImage(t, img)
		gout, gcode := runGofsck("-fy", gimg)
		eout, ecode := testfs.E2fsckInPlace(t, eimg, "-fy")
		if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
			t.Errorf("%s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", name, gcode, ecode, e, g)
		}
		if !strings.Contains(eout, "journal has been regenerated") {
			t.Errorf("%s: e2fsck did not recreate the journal:\n%s", name, eout)
		}
		if out, code := testfs.E2fsck(t, gimg, "-fn"); code != 0 {
			t.Errorf("%s: not clean after repair:\n%s", name, out)
		}
	}
}

// TestOrphanRecoveryMatchesE2fsck: files deleted while still open leave
// orphans in a filesystem copied while mounted. Recovering the journal and
// then releasing the orphan list must print and exit as e2fsck does, with
// and without -f and when preening, and leave a clean filesystem.
func TestOrphanRecoveryMatchesE2fsck(t *testing.T) {
	copyPath := filepath.Join(t.TempDir(), "mounted-copy.img")
	testfs.KernelImage(t, 32<<20, []string{"-t", "ext4"}, func(mnt string) {
		var open []*os.File
		for i := 1; i <= 3; i++ {
			p := filepath.Join(mnt, fmt.Sprintf("f%d", i))
			if err := os.WriteFile(p, bytes.Repeat([]byte{byte(i)}, i*50000), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Mkdir(filepath.Join(mnt, "d"), 0o755); err != nil {
			t.Fatal(err)
		}
		syncFS(t, mnt)
		for _, n := range []string{"f1", "f2", "d"} {
			f, err := os.Open(filepath.Join(mnt, n))
			if err != nil {
				t.Fatal(err)
			}
			open = append(open, f)
		}
		for _, n := range []string{"f1", "f2", "d"} {
			if err := os.RemoveAll(filepath.Join(mnt, n)); err != nil {
				t.Fatal(err)
			}
		}
		syncFS(t, mnt)
		data, err := os.ReadFile(filepath.Join(filepath.Dir(mnt), "kernel.img"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(copyPath, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, f := range open {
			f.Close()
		}
	})
	for _, mode := range []string{"-y", "-fy", "-p"} {
		gimg, eimg := testfs.CopyImage(t, copyPath), testfs.CopyImage(t, copyPath)
		gout, gcode := runGofsck(mode, gimg)
		eout, ecode := testfs.E2fsckInPlace(t, eimg, mode)
		if g, e := norm(gout, gimg), norm(eout, eimg); g != e || gcode != ecode {
			t.Errorf("%s: exit %d vs e2fsck %d; output differs:\n--- e2fsck\n%s--- gofsck\n%s", mode, gcode, ecode, e, g)
		}
		if !strings.Contains(eout, "orphaned inode") {
			t.Errorf("%s: e2fsck released no orphan:\n%s", mode, eout)
		}
		if out, code := testfs.E2fsck(t, gimg, "-fn"); code != 0 {
			t.Errorf("%s: not clean after repair:\n%s", mode, out)
		}
	}
}
