package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// errFull is returned by a unit of work when the filesystem ran out of
// space or inodes; fill loops treat it as "done".
var errFull = errors.New("filesystem full")

// forEach calls fn(ctx, i) for every i in [0, n) from up to jobs goroutines.
// It stops handing out work at the first error or when ctx is cancelled,
// waits for the running calls, and returns the first error (or ctx.Err()).
func forEach(ctx context.Context, jobs int, n int64, fn func(ctx context.Context, i int64) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	if int64(jobs) > n {
		jobs = int(n)
	}
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= n {
					return
				}
				if err := fn(ctx, i); err != nil {
					errOnce.Do(func() { firstErr = err })
					cancel()
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return context.Cause(ctx)
}

// isFull reports whether err means the filesystem is out of blocks or inodes.
func isFull(err error) bool {
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) || errors.Is(err, errFull)
}

// FIEMAP ioctl layout (linux/fiemap.h).
const (
	fsIocFiemap      = 0xC020660B // _IOWR('f', 11, struct fiemap)
	fiemapFlagSync   = 0x1        // FIEMAP_FLAG_SYNC
	fiemapHeaderSize = 32         // sizeof(struct fiemap)
	fiemapExtentSize = 56         // sizeof(struct fiemap_extent)
	offFmFlags       = 16         // fm_flags
	offFmMapped      = 20         // fm_mapped_extents
	offFmCount       = 24         // fm_extent_count
	offFePhysical    = 8          // fe_physical
)

// syncMount commits the filesystem mounted at mnt with syncfs(2). A
// global sync(2) would commit every mounted filesystem on the machine,
// including ones that other programs (and tests) build with a fast
// commit still pending, and make those commits stale.
func syncMount(mnt string) error {
	fd, err := unix.Open(mnt, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", mnt, err)
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return fmt.Errorf("syncfs %s: %w", mnt, err)
	}
	return nil
}

// fiemap asks the kernel for fd's extent map. With want == 0 it only counts
// extents; otherwise it returns the physical byte offset of the first one
// (ok is false for a file with no extents).
func fiemap(fd int, want int) (count int64, firstPhys uint64, ok bool, err error) {
	buf := make([]byte, fiemapHeaderSize+fiemapExtentSize*want)
	binary.LittleEndian.PutUint64(buf[0:], 0)          // fm_start
	binary.LittleEndian.PutUint64(buf[8:], ^uint64(0)) // fm_length
	binary.LittleEndian.PutUint32(buf[offFmFlags:], fiemapFlagSync)
	binary.LittleEndian.PutUint32(buf[offFmCount:], uint32(want))
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), fsIocFiemap, uintptr(unsafe.Pointer(&buf[0])))
	if errno != 0 {
		return 0, 0, false, errno
	}
	mapped := binary.LittleEndian.Uint32(buf[offFmMapped:])
	if want > 0 && mapped > 0 {
		return int64(mapped), binary.LittleEndian.Uint64(buf[fiemapHeaderSize+offFePhysical:]), true, nil
	}
	return int64(mapped), 0, false, nil
}

// extentCount returns the number of extents of the file or directory at
// path.
func extentCount(path string) (int64, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	n, _, _, err := fiemap(fd, 0)
	return n, err
}

// measureExtents finds the file with the most extents among e.measure, or
// in the whole tree when e.measure is nil.
func measureExtents(ctx context.Context, e *env) (int64, string, error) {
	paths := e.measure
	if paths == nil {
		err := filepath.WalkDir(e.root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() || d.IsDir() {
				rel, _ := filepath.Rel(e.root, p)
				paths = append(paths, rel)
			}
			return ctx.Err()
		})
		if err != nil {
			return 0, "", err
		}
	}
	counts := make([]int64, len(paths))
	err := forEach(ctx, e.cfg.jobs, int64(len(paths)), func(_ context.Context, i int64) error {
		n, err := extentCount(filepath.Join(e.root, paths[i]))
		counts[i] = n
		return err
	})
	if err != nil {
		return 0, "", err
	}
	best, bestPath := int64(0), ""
	for i, n := range counts {
		if n > best {
			best, bestPath = n, paths[i]
		}
	}
	if bestPath == "." {
		bestPath = ""
	}
	return best, bestPath, nil
}

// mix is splitmix64: a cheap, well-spread hash used to derive per-file
// sizes and names from (seed, index) without shared random state.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// journalBytes estimates the journal mke2fs creates for a filesystem of
// size bytes with block size bs (ext2fs_default_journal_size).
func journalBytes(size, bs int64) int64 {
	blocks := size / bs
	var j int64
	switch {
	case blocks < 2048:
		j = 0
	case blocks < 32768:
		j = 1024
	case blocks < 256*1024:
		j = 4096
	case blocks < 512*1024:
		j = 8192
	case blocks < 4096*1024:
		j = 16384
	case blocks < 8192*1024:
		j = 32768
	case blocks < 16384*1024:
		j = 65536
	case blocks < 32768*1024:
		j = 131072
	default:
		j = 262144
	}
	return j * bs
}

// fsBytes returns an image size that holds inodes inodes and payload bytes
// of file and directory blocks, with room for the journal, the group
// metadata and slack. It also respects mke2fs's limit of 8*blocksize inodes
// per group (so at least 4 KiB of image per inode at 4 KiB blocks).
func fsBytes(cfg *config, inodes, payload int64) int64 {
	bs := int64(cfg.blockSize)
	if bs == 0 {
		bs = 4096
	}
	need := inodes*256 + payload
	need += need/8 + 4<<20 // bitmaps, descriptors, reserved GDT, slack
	need += need / 16      // the 5% reserved for root, rounded up
	size := need + journalBytes(need, bs)
	size += journalBytes(size, bs) - journalBytes(need, bs)
	if min := inodes * bs; size < min {
		size = min + 4<<20
	}
	if size < 8<<20 {
		size = 8 << 20
	}
	return size
}
