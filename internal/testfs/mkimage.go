package testfs

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Spec describes an image for MkImage. Zero fields leave mke2fs's default
// (from the private mke2fs.conf testfs installs).
type Spec struct {
	Size        int64    // image size in bytes; default 8 MiB
	FSType      string   // -t: ext2, ext3, ext4
	Usage       string   // -T: small, floppy, news, ...
	BlockSize   int      // -b
	ClusterSize int      // -C (bigalloc)
	InodeSize   int      // -I
	Inodes      int      // -N
	Features    string   // -O, comma-separated, ^ to clear
	Extended    []string // -E options (hash_seed is always added)
	Journal     string   // -J options, e.g. "size=1"
	ExtraArgs   []string // anything else, before the image path

	// Populate, if set, fills the tree copied into the image with mke2fs -d.
	Populate func(*Tree)

	// Debugfs commands run (with -w) after mke2fs and after Populate's
	// devices and xattrs, e.g. to create special inodes or set fields.
	Debugfs []string

	// OptimizeDirs runs e2fsck -fyD on the new image, which turns big
	// directories into htrees (mke2fs -d never indexes) and fixes the
	// accounting (quota) that mke2fs -d leaves stale.
	OptimizeDirs bool
}

// Args returns the mke2fs arguments for the spec (without the image path and
// size).
func (s Spec) Args() []string {
	args := []string{"-F", "-q", "-U", UUID}
	if s.FSType != "" {
		args = append(args, "-t", s.FSType)
	}
	if s.Usage != "" {
		args = append(args, "-T", s.Usage)
	}
	if s.BlockSize != 0 {
		args = append(args, "-b", strconv.Itoa(s.BlockSize))
	}
	if s.ClusterSize != 0 {
		args = append(args, "-C", strconv.Itoa(s.ClusterSize))
	}
	if s.InodeSize != 0 {
		args = append(args, "-I", strconv.Itoa(s.InodeSize))
	}
	if s.Inodes != 0 {
		args = append(args, "-N", strconv.Itoa(s.Inodes))
	}
	if s.Features != "" {
		args = append(args, "-O", s.Features)
	}
	ext := append([]string{"hash_seed=" + UUID}, s.Extended...)
	args = append(args, "-E", strings.Join(ext, ","))
	if s.Journal != "" {
		args = append(args, "-J", s.Journal)
	}
	return append(args, s.ExtraArgs...)
}

// MkImage builds an image in t.TempDir() and returns its path.
func MkImage(t testing.TB, s Spec) string {
	t.Helper()
	dir := t.TempDir()
	img := filepath.Join(dir, "fs.img")
	size := s.Size
	if size == 0 {
		size = 8 << 20
	}
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()

	args := s.Args()
	var tree *Tree
	if s.Populate != nil {
		tree = &Tree{t: t, Root: filepath.Join(dir, "src")}
		if err := os.Mkdir(tree.Root, 0o755); err != nil {
			t.Fatal(err)
		}
		s.Populate(tree)
		tree.fixTimes()
		args = append(args, "-d", tree.Root)
	}
	args = append(args, img)
	// The size comes from the file; mke2fs wants it in KiB when given.
	args = append(args, strconv.FormatInt(size/1024, 10)+"k")
	mustRun(t, "mke2fs", nil, args...)

	var cmds []string
	if tree != nil {
		cmds = append(cmds, tree.post...)
	}
	cmds = append(cmds, s.Debugfs...)
	if len(cmds) > 0 {
		out := Debugfs(t, img, cmds...)
		if tree != nil && tree.strictPost {
			checkDebugfsOutput(t, out)
		}
	}
	if s.OptimizeDirs {
		mustRun(t, "e2fsck", []int{0, 1}, "-fyD", img)
	}
	return img
}

// checkDebugfsOutput fails on the messages debugfs prints when a command of
// the populate step did not work.
func checkDebugfsOutput(t testing.TB, out string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		// Echoed commands carry paths that may contain anything (a
		// temporary directory named after a test called "...-errors").
		if strings.HasPrefix(l, "debugfs: ") {
			continue
		}
		if strings.Contains(l, "not found") || strings.Contains(l, "Usage:") ||
			strings.Contains(l, "Could not") || strings.Contains(l, "rror") {
			t.Fatalf("testfs: debugfs populate step failed: %s\n%s", l, out)
		}
	}
}

// CopyImage copies img into a new file in t.TempDir() and returns its path,
// so that a test can corrupt a copy of a shared base image.
func CopyImage(t testing.TB, img string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(img))
	copyFile(t, img, dst)
	return dst
}

func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	// Keep holes: images are mostly zeros.
	buf := make([]byte, 64<<10)
	var off int64
	for {
		n, rerr := in.Read(buf)
		if n > 0 {
			if bytes.Count(buf[:n], []byte{0}) != n {
				if _, err := out.WriteAt(buf[:n], off); err != nil {
					t.Fatal(err)
				}
			}
			off += int64(n)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			t.Fatal(rerr)
		}
	}
	if err := out.Truncate(off); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// Tree is the source directory for mke2fs -d. Paths are slash-separated and
// relative to the file system root ("dir/file"). Devices and xattrs are
// added after mke2fs with debugfs, so building a tree never needs root.
type Tree struct {
	t          testing.TB
	Root       string   // host directory copied into the image
	post       []string // debugfs commands run after mke2fs
	strictPost bool
}

func (tr *Tree) host(p string) string {
	return filepath.Join(tr.Root, filepath.FromSlash(strings.TrimPrefix(p, "/")))
}

func (tr *Tree) parent(p string) {
	if err := os.MkdirAll(filepath.Dir(tr.host(p)), 0o755); err != nil {
		tr.t.Fatal(err)
	}
}

// Dir creates a directory (and its parents).
func (tr *Tree) Dir(p string) {
	if err := os.MkdirAll(tr.host(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
}

// File creates a regular file of size bytes filled with a pattern that
// depends on the path (never all zeros, so mke2fs allocates every block).
func (tr *Tree) File(p string, size int64) {
	tr.parent(p)
	data := make([]byte, size)
	seed := byte(len(p))
	for i := range data {
		data[i] = byte(i*7) ^ seed | 1
	}
	tr.FileData(p, data)
}

// FileData creates a regular file with the given contents.
func (tr *Tree) FileData(p string, data []byte) {
	tr.parent(p)
	if err := os.WriteFile(tr.host(p), data, 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

// Sparse creates a file of size bytes that has one chunk of chunk bytes of
// data every stride bytes and holes in between: with stride > chunk each
// chunk becomes its own extent, so enough of them give an extent tree of
// depth ≥ 1 (more than 4 extents) or block maps with indirect blocks.
func (tr *Tree) Sparse(p string, size, chunk, stride int64) {
	tr.parent(p)
	f, err := os.Create(tr.host(p))
	if err != nil {
		tr.t.Fatal(err)
	}
	data := bytes.Repeat([]byte{0xA5}, int(chunk))
	for off := int64(0); off+chunk <= size; off += stride {
		if _, err := f.WriteAt(data, off); err != nil {
			tr.t.Fatal(err)
		}
	}
	if err := f.Truncate(size); err != nil {
		tr.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tr.t.Fatal(err)
	}
}

// Symlink creates a symbolic link; targets shorter than 60 bytes become fast
// symlinks, longer ones slow symlinks with a data block.
func (tr *Tree) Symlink(p, target string) {
	tr.parent(p)
	if err := os.Symlink(target, tr.host(p)); err != nil {
		tr.t.Fatal(err)
	}
}

// Hardlink adds the name p for the existing file old.
func (tr *Tree) Hardlink(p, old string) {
	tr.parent(p)
	if err := os.Link(tr.host(old), tr.host(p)); err != nil {
		tr.t.Fatal(err)
	}
}

// Fifo creates a named pipe.
func (tr *Tree) Fifo(p string) {
	tr.parent(p)
	if err := syscall.Mkfifo(tr.host(p), 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

// Device creates a character (kind 'c') or block (kind 'b') device node.
// It is made with debugfs mknod after mke2fs; the parent directory must
// exist in the tree.
func (tr *Tree) Device(p string, kind byte, major, minor int) {
	tr.parent(p)
	tr.strictPost = true
	// debugfs mknod takes a name in the current directory, not a path.
	dir, name := path.Split(strings.TrimPrefix(p, "/"))
	tr.post = append(tr.post, "cd /"+dir, fmt.Sprintf("mknod %s %c %d %d", name, kind, major, minor), "cd /")
}

// Xattr sets an extended attribute (e.g. "user.foo") with debugfs ea_set
// after mke2fs. Values must not contain whitespace or quotes; use XattrSize
// for long values.
func (tr *Tree) Xattr(p, name, value string) {
	tr.strictPost = true
	tr.post = append(tr.post, fmt.Sprintf("ea_set /%s %s %s", strings.TrimPrefix(p, "/"), name, value))
}

// XattrSize sets an extended attribute whose value is n bytes of a pattern.
// Values that do not fit in the inode go to an EA block, and with ea_inode
// values larger than a block go to an EA inode.
func (tr *Tree) XattrSize(p, name string, n int) {
	tr.strictPost = true
	vf := filepath.Join(filepath.Dir(tr.Root), fmt.Sprintf("xattr-%d", len(tr.post)))
	if err := os.WriteFile(vf, bytes.Repeat([]byte("xattrval"), n/8+1)[:n], 0o644); err != nil {
		tr.t.Fatal(err)
	}
	tr.post = append(tr.post, fmt.Sprintf("ea_set -f %s /%s %s", vf, strings.TrimPrefix(p, "/"), name))
}

// ManyFiles creates n empty files in dir, with names long enough that a few
// hundred fill several directory blocks.
func (tr *Tree) ManyFiles(dir string, n int) {
	tr.Dir(dir)
	for i := 0; i < n; i++ {
		f, err := os.Create(tr.host(path.Join(dir, fmt.Sprintf("entry-with-a-long-name-%05d", i))))
		if err != nil {
			tr.t.Fatal(err)
		}
		f.Close()
	}
}

// fixTimes sets every entry's times to FakeTime so the image does not depend
// on when the test ran.
func (tr *Tree) fixTimes() {
	ts := time.Unix(FakeTime, 0)
	var paths []string
	filepath.Walk(tr.Root, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			paths = append(paths, p)
		}
		return nil
	})
	// Children first, so setting a child does not touch the parent's mtime
	// afterwards (it does not, but directories are visited after contents).
	for i := len(paths) - 1; i >= 0; i-- {
		p := paths[i]
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink != 0 {
			continue
		}
		os.Chtimes(p, ts, ts)
	}
}
