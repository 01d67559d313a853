package main

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gofsck/internal/testfs"
)

// TestKillDuringRepair kills gofsck -fy -z with SIGKILL at random points of
// a repair, many times. After every kill:
//
//   - gofsck undo with the undo file restores the original image byte for
//     byte (or the image was never touched, when the kill came before the
//     first write);
//   - a rerun of gofsck -fy on the killed image ends with an image e2fsck
//     -fn finds clean.
//
// The image has 1 KiB blocks, 1024 blocks per group and no flex_bg, so
// the bitmaps the repair rewrites are spread over 32 groups and the final flush is many separate
// undo-protected writes: a good share of the kills land inside it.
func TestKillDuringRepair(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	bin := testfs.GofsckPath(t)
	dir := t.TempDir()
	orig := testfs.MkImage(t, testfs.Spec{FSType: "ext4", Size: 32 << 20, BlockSize: 1024,
		Features: "^flex_bg,^resize_inode", ExtraArgs: []string{"-g", "1024"}, Populate: populate})
	// Free one in-use metadata block of every group in the bitmaps, and
	// spoil the counts: pass 5 rewrites every bitmap and descriptor.
	var cmds []string
	for g := 0; g < 32; g++ {
		cmds = append(cmds, "freeb "+strconv.FormatUint(testfs.GroupBlock(t, orig, g, "Inode table")+1, 10))
	}
	cmds = append(cmds, "ssv free_blocks_count 12", "ssv free_inodes_count 13")
	testfs.Debugfs(t, orig, cmds...)
	want := testfs.FileSHA256(t, orig)

	// One uninterrupted run, for its duration and to be sure it repairs.
	full := filepath.Join(dir, "full.img")
	copyFile(t, orig, full)
	start := time.Now()
	if out, code := testfs.Gofsck(t, full, "-fy", "-z", filepath.Join(dir, "full.undo")); code != 1 {
		t.Fatalf("repair exit %d, want 1:\n%s", code, out)
	}
	runTime := time.Since(start)
	if out, code := testfs.E2fsck(t, full, "-fn"); code != 0 {
		t.Fatalf("not clean after an uninterrupted repair:\n%s", out)
	}

	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	const kills = 25
	touched := 0
	for k := 0; k < kills; k++ {
		img := filepath.Join(dir, "k.img")
		und := filepath.Join(dir, "k.undo")
		os.Remove(und)
		copyFile(t, orig, img)
		cmd := exec.Command(bin, "-fy", "-z", und, img)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(runTime + runTime/4))))
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		if testfs.FileSHA256(t, img) != want {
			touched++
		}
		// A rerun repairs whatever state the kill left.
		rerun := filepath.Join(dir, "rerun.img")
		copyFile(t, img, rerun)
		if out, code := testfs.Gofsck(t, rerun, "-fy"); code&^1 != 0 {
			t.Errorf("kill %d: rerun exit %d:\n%s", k, code, out)
		}
		if out, code := testfs.E2fsck(t, rerun, "-fn"); code != 0 {
			t.Errorf("kill %d: not clean after the rerun:\n%s", k, out)
		}
		// The undo file restores the original exactly. A kill while the
		// undo file was being created leaves one gofsck undo refuses; the
		// device has not been written then.
		if _, err := os.Stat(und); err == nil {
			if out, code := runGofsckUndo(und, img); code != 0 && testfs.FileSHA256(t, img) != want {
				t.Errorf("kill %d: gofsck undo exit %d: %s", k, code, out)
			}
		}
		if testfs.FileSHA256(t, img) != want {
			t.Errorf("kill %d: image not restored to the original", k)
		}
	}
	t.Logf("%d kills, %d of them after the repair had started writing (run time %v)", kills, touched, runTime)
	if touched == 0 {
		t.Errorf("no kill landed after the first write; the test does not exercise the flush")
	}
}

// runGofsckUndo runs the undo subcommand in-process.
func runGofsckUndo(args ...string) (string, int) {
	var out strings.Builder
	code := runUndo(args, &out, &out)
	return out.String(), code
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
