package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// TestKernelImagesClean checks filesystems written by the kernel's own ext4
// driver through a loop mount: many files, a directory big enough to be
// indexed, fragmented files, xattrs, hard and symbolic links, sparse files.
// Such a filesystem is clean: gofsck must exit 0 and print e2fsck's summary
// line, with 1 worker and with several.
func TestKernelImagesClean(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	populate := func(t *testing.T, mnt string) {
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		big := filepath.Join(mnt, "big")
		must(os.MkdirAll(big, 0o755))
		for i := 0; i < 3000; i++ {
			must(os.WriteFile(filepath.Join(big, fmt.Sprintf("entry-with-a-longer-name-%05d", i)), nil, 0o644))
		}
		tree := filepath.Join(mnt, "tree")
		for d := 0; d < 20; d++ {
			sub := filepath.Join(tree, fmt.Sprintf("d%02d", d))
			must(os.MkdirAll(sub, 0o755))
			for f := 0; f < 20; f++ {
				p := filepath.Join(sub, fmt.Sprintf("f%02d", f))
				must(os.WriteFile(p, []byte(strings.Repeat("x", (d*20+f)*97)), 0o644))
			}
		}
		// Interleaved appends make physically scattered extents.
		frag := filepath.Join(mnt, "frag")
		must(os.MkdirAll(frag, 0o755))
		files := make([]*os.File, 4)
		for i := range files {
			f, err := os.Create(filepath.Join(frag, fmt.Sprintf("f%d", i)))
			must(err)
			files[i] = f
		}
		chunk := make([]byte, 4096)
		for r := 0; r < 200; r++ {
			for _, f := range files {
				_, err := f.Write(chunk)
				must(err)
				must(f.Sync())
			}
		}
		for _, f := range files {
			must(f.Close())
		}
		// Sparse file, links, xattrs.
		sp, err := os.Create(filepath.Join(mnt, "sparse"))
		must(err)
		for i := int64(0); i < 50; i++ {
			_, err := sp.WriteAt([]byte("data"), i*1<<20)
			must(err)
		}
		must(sp.Close())
		must(os.Link(filepath.Join(tree, "d00", "f01"), filepath.Join(mnt, "hard")))
		must(os.Symlink("tree/d00/f02", filepath.Join(mnt, "short-link")))
		must(os.Symlink(strings.Repeat("long/", 30)+"target", filepath.Join(mnt, "long-link")))
		// One attribute per file: this kernel refuses a second block
		// attribute on some files with ENOSPC, which is not what we test.
		for i := 0; i < 20; i++ {
			must(setxattr(filepath.Join(tree, "d01", fmt.Sprintf("f%02d", i)), fmt.Sprintf("user.k%d", i), strings.Repeat("v", 100+i*40)))
		}
	}
	for _, mk := range [][]string{
		{"-t", "ext4"},
		{"-t", "ext4", "-b", "1024", "-O", "^flex_bg"},
		{"-t", "ext3"},
		{"-t", "ext4", "-O", "inline_data,^metadata_csum,uninit_bg", "-I", "256"},
	} {
		name := strings.Join(mk, " ")
		t.Run(name, func(t *testing.T) {
			img := testfs.KernelImage(t, 256<<20, mk, func(mnt string) { populate(t, mnt) })
			eout, eexit := testfs.E2fsck(t, img, "-fn")
			if eexit != 0 {
				t.Fatalf("e2fsck -fn finds the kernel-made image unclean (exit %d):\n%s", eexit, eout)
			}
			want := lastLine(eout)
			for _, threads := range []string{"1", "4"} {
				gout, gexit := testfs.Gofsck(t, img, "-fn", "-E", "threads="+threads)
				if gexit != 0 {
					t.Errorf("threads=%s: gofsck exit %d on a clean kernel-made image:\n%s", threads, gexit, gout)
				}
				if got := lastLine(gout); got != want {
					t.Errorf("threads=%s: summary line\n got %q\nwant %q", threads, got, want)
				}
			}
		})
	}
}

// lastLine returns the last non-empty line (the summary line).
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "gofsck ") && !strings.HasPrefix(l, "e2fsck ") {
			return l
		}
	}
	return ""
}

// TestMountedImageWarning: checking a mounted filesystem read-only warns
// as e2fsck does ("Warning!  IMG is mounted."), and only while it is.
func TestMountedImageWarning(t *testing.T) {
	img := testfs.MkImage(t, testfs.Spec{Size: 16 << 20, FSType: "ext4"})
	if os.Geteuid() != 0 {
		if testfs.InCI() {
			t.Fatal("needs root for mount -o loop")
		}
		t.Skip("needs root for mount -o loop")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount -o loop: %v\n%s", err, out)
	}
	mounted := true
	umount := func() {
		if mounted {
			if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
				t.Errorf("umount: %v\n%s", err, out)
			}
			mounted = false
		}
	}
	defer umount()
	warning := "Warning!  " + img + " is mounted."
	eout, _ := exec.Command("e2fsck", "-n", img).CombinedOutput()
	if !strings.Contains(string(eout), warning) {
		t.Fatalf("the oracle does not warn as expected:\n%s", eout)
	}
	gout, gexit := testfs.Gofsck(t, img, "-n")
	if !strings.Contains(gout, warning) || gexit != 0 {
		t.Errorf("gofsck -n on a mounted image: exit %d, want 0 and %q:\n%s", gexit, warning, gout)
	}
	// A repair of a mounted filesystem is refused before anything is
	// read or written (e2fsck -y and -p refuse it the same way).
	for _, mode := range []string{"-fy", "-p"} {
		eout, _ := exec.Command("e2fsck", mode, img).CombinedOutput()
		gout, gexit := testfs.Gofsck(t, img, mode)
		if gexit != 8 || !strings.Contains(gout, img+" is mounted.") || !strings.Contains(gout, "Cannot continue, aborting.") {
			t.Errorf("gofsck %s on a mounted image: exit %d, want 8 and the refusal:\n%s\n(e2fsck said:\n%s)", mode, gexit, gout, eout)
		}
	}
	umount()
	if gout, _ := testfs.Gofsck(t, img, "-n"); strings.Contains(gout, "is mounted") {
		t.Errorf("warning after umount:\n%s", gout)
	}
}
