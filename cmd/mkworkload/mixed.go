package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// srcEntry is one entry of the tree the mixed workload copies.
type srcEntry struct {
	rel    string      // path relative to the source root
	mode   fs.FileMode // type and permission bits
	size   int64       // regular files only
	target string      // symlinks only
}

// walkSrc lists the directories, regular files and symlinks under root in
// lexical order, so any prefix of the list holds each entry's parents.
func walkSrc(root string) ([]srcEntry, error) {
	var out []srcEntry
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != root {
				return fs.SkipDir // unreadable directory: leave it out
			}
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return nil // vanished
		}
		e := srcEntry{rel: rel, mode: info.Mode()}
		switch {
		case d.IsDir():
		case d.Type().IsRegular():
			e.size = info.Size()
		case d.Type()&fs.ModeSymlink != 0:
			if e.target, err = os.Readlink(p); err != nil {
				return nil
			}
		default:
			return nil // devices, sockets, fifos
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walking %s: %w", root, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: nothing to copy", root)
	}
	return out, nil
}

// mixedCopies splits n inodes over copies of a tree of m entries: the
// number of entries each copy takes (all but the last take m).
func mixedCopies(n int64, m int) []int {
	var per []int
	for n > 0 {
		k := int(min(n, int64(m)))
		per = append(per, k)
		n -= int64(k)
	}
	return per
}

// planMixed walks -src once and sizes the image for the copies it needs.
func planMixed(cfg *config) (plan, error) {
	tree, err := walkSrc(cfg.src)
	if err != nil {
		return plan{}, err
	}
	cfg.tree = tree
	bs := blockSizeGuess(cfg)
	var payload, files int64
	for _, k := range mixedCopies(cfg.count, len(tree)) {
		for _, e := range tree[:k] {
			payload += roundUp(e.size, bs) + bs // data plus a directory or tree block
			if e.mode.IsRegular() {
				files++
			}
		}
		payload += 1 << 20 // sparse files' blocks, deep and long names
	}
	// Appends after aging, xattr blocks and slow symlinks.
	payload += files/7*(64<<10+bs) + files/40*bs + files/50*bs
	inodes := cfg.count + cfg.count/8 + 1024
	return plan{bytes: fsBytes(cfg, inodes, payload), inodes: inodes}, nil
}

// populateMixed builds the copies of -src under /cNNN, one goroutine per copy.
func populateMixed(ctx context.Context, e *env) error {
	cfg := e.cfg
	if cfg.tree == nil {
		tree, err := walkSrc(cfg.src)
		if err != nil {
			return err
		}
		cfg.tree = tree
	}
	write := cfg.data != "fallocate"
	copies := mixedCopies(cfg.count, len(cfg.tree))
	e.note = fmt.Sprintf("copies=%d src=%s", len(copies), cfg.src)
	return forEach(ctx, cfg.jobs, int64(len(copies)), func(ctx context.Context, c int64) error {
		return mixedCopy(ctx, e, filepath.Join(e.root, fmt.Sprintf("c%03d", c)), cfg.tree[:copies[c]], write)
	})
}

// mixedCopy copies tree into dst, adds the extras (xattrs, links, symlinks,
// sparse files, odd names) and then ages the copy.
func mixedCopy(ctx context.Context, e *env, dst string, tree []srcEntry, write bool) error {
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	x := filepath.Join(dst, "x")
	for _, d := range []string{x, x + "/links", x + "/symlinks", x + "/sparse"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	var files []string
	for _, ent := range tree {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := filepath.Join(dst, ent.rel)
		var err error
		switch {
		case ent.mode.IsDir():
			err = os.Mkdir(p, ent.mode.Perm()|0o700)
		case ent.mode.IsRegular():
			err = copyFile(filepath.Join(e.cfg.src, ent.rel), p, ent.size, ent.mode.Perm()|0o600, write)
			files = append(files, p)
		default:
			err = os.Symlink(ent.target, p)
		}
		if err != nil {
			return err
		}
		e.ops.Add(1)
	}
	if err := mixedExtras(e, x, files); err != nil {
		return err
	}
	return mixedAge(e, files)
}

// copyFile copies src to dst (via copy_file_range when write is set) or
// fallocates dst to the same size.
func copyFile(src, dst string, size int64, perm fs.FileMode, write bool) error {
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if write {
		in, err := os.Open(src)
		if err != nil {
			// Unreadable source: keep the size, skip the content.
			err = unix.Fallocate(int(out.Fd()), 0, 0, max(size, 1))
		} else {
			_, err = io.Copy(out, in)
			in.Close()
		}
		if err != nil {
			out.Close()
			return fmt.Errorf("copy %s: %w", dst, err)
		}
	} else if size > 0 {
		if err := unix.Fallocate(int(out.Fd()), 0, 0, size); err != nil {
			out.Close()
			return fmt.Errorf("fallocate %s: %w", dst, err)
		}
	}
	return out.Close()
}

// sharedValues are the big xattr values many files carry: ext4 stores
// each once in a shared, reference-counted xattr block.
var sharedValues = [3][]byte{
	[]byte(strings.Repeat("shared-value-A ", 70)),
	[]byte(strings.Repeat("shared-value-B ", 70)),
	[]byte(strings.Repeat("shared-value-C ", 70)),
}

// mixedExtras adds to a copy: xattrs (in-inode, shared blocks, unique
// blocks), hard links, fast and slow symlinks, sparse and preallocated
// files, a deep path and a 255-byte name, all under x.
func mixedExtras(e *env, x string, files []string) error {
	for j, p := range files {
		var errs []error
		if j%10 == 0 {
			errs = append(errs, unix.Setxattr(p, "user.note", fmt.Appendf(nil, "file %d of %s", j, x), 0))
		}
		if j%40 == 0 {
			errs = append(errs, unix.Setxattr(p, "user.shared", sharedValues[(j/40)%3], 0))
		}
		if j%97 == 0 {
			v := []byte(strings.Repeat(fmt.Sprintf("%s#%d;", x, j), 2048/(len(x)+8)+1))
			errs = append(errs, unix.Setxattr(p, "trusted.unique", v[:2048], 0))
		}
		if j%20 == 0 {
			errs = append(errs, os.Link(p, filepath.Join(x, "links", fmt.Sprintf("l%06d", j))))
		}
		if j%25 == 0 {
			rel, _ := filepath.Rel(filepath.Join(x, "symlinks"), p)
			if len(rel) > 59 {
				rel = filepath.Base(p) // keep it a fast symlink
			}
			errs = append(errs, os.Symlink(rel, filepath.Join(x, "symlinks", fmt.Sprintf("s%06d", j))))
		}
		if j%50 == 0 {
			long := p + "/" + strings.Repeat("long-target/", 20)
			errs = append(errs, os.Symlink(long, filepath.Join(x, "symlinks", fmt.Sprintf("slow%06d", j))))
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("extras for %s: %w", p, err)
		}
		e.ops.Add(1)
	}
	sp := filepath.Join(x, "sparse")
	block := pattern[:4096]
	sparse := []struct {
		name     string
		offsets  []int64 // 4 KiB written at each
		size     int64   // final size (truncate), 0 = leave
		prealloc int64   // fallocate KEEP_SIZE past EOF
	}{
		{"holes", []int64{0, 1 << 20, 64 << 20, 1 << 30}, 2 << 30, 0},
		{"hole-first", []int64{512 << 20}, 0, 0},
		{"prealloc", []int64{0, 8192}, 0, 1 << 20},
		{"empty-1T", nil, 1 << 40, 0},
	}
	for _, s := range sparse {
		f, err := os.OpenFile(filepath.Join(sp, s.name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		for _, off := range s.offsets {
			if _, err = f.WriteAt(block, off); err != nil {
				break
			}
		}
		if err == nil && s.size > 0 {
			err = f.Truncate(s.size)
		}
		if err == nil && s.prealloc > 0 {
			err = unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 16384, s.prealloc)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("sparse %s: %w", s.name, err)
		}
	}
	deep := x
	for range 40 {
		deep = filepath.Join(deep, "deep")
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		return err
	}
	long := filepath.Join(x, strings.Repeat("n", 255))
	if err := os.WriteFile(long, []byte("long name\n"), 0o644); err != nil {
		return err
	}
	return unix.Setxattr(long, "user.only", []byte("xattr on a file with a 255-byte name"), 0)
}

// mixedAge deletes every fifth file of a copy and then appends 64 KiB to
// every seventh survivor, so the appended data lands in the freed space
// and those files end up with several extents.
func mixedAge(e *env, files []string) error {
	for j, p := range files {
		if j%5 == 3 {
			if err := os.Remove(p); err != nil {
				return err
			}
			e.ops.Add(1)
		}
	}
	for j, p := range files {
		if j%7 != 1 || j%5 == 3 {
			continue
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		_, err = f.Write(pattern[:64<<10])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("append %s: %w", p, err)
		}
		e.ops.Add(1)
	}
	return nil
}
