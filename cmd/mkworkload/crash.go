package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// The crash workload leaves what a power cut leaves: random file
// operations on the mounted filesystem, then, with files still open and
// writes in flight, the filesystem is shut down without flushing its
// journal (FS_IOC_SHUTDOWN with EXT4_GOING_FLAGS_NOLOGFLUSH, what
// `xfs_io -x -c shutdown` and xfstests' crash tests do). Nothing after the
// shutdown reaches the disk; the unmount that follows writes nothing.
//
// The operations come from -seed; what the image holds also depends on
// the kernel's timing (journal commits, writeback), so two builds with the
// same seed differ: the image is a sample, not a reproducible artefact.
// Keep the images a test needs.

// fsIOCShutdown is FS_IOC_SHUTDOWN, _IOR('X', 125, __u32).
const fsIOCShutdown = 0x8004587d

// goingFlagsNoLogFlush is EXT4_GOING_FLAGS_NOLOGFLUSH: stop without
// committing the running transaction.
const goingFlagsNoLogFlush = 2

// crashDefaultOps is the crash workload's default -n.
const crashDefaultOps = 3000

// planCrash sizes the crash workload: a small filesystem (32 MiB unless
// -size says otherwise) that the operations fill in part.
func planCrash(cfg *config) (plan, error) { return plan{bytes: 32 << 20}, nil }

// crashState is the workload's view of what it made.
type crashState struct {
	rng   *rand.Rand
	root  string
	files []string // live regular files, relative to root
	dirs  []string // live directories, relative to root ("" is the root)
	open  []int    // descriptors kept open, some of unlinked files
	next  int      // name counter
	big   string   // the large directory
}

// populateCrash runs cfg.count random operations and shuts the filesystem
// down after the last, with the descriptors of some unlinked files still
// open (orphans).
func populateCrash(ctx context.Context, e *env) error {
	s := &crashState{rng: rand.New(rand.NewPCG(e.cfg.seed, 0x63726173)), root: e.root, dirs: []string{""}, big: "big"}
	if err := os.Mkdir(filepath.Join(e.root, s.big), 0o755); err != nil {
		return err
	}
	s.dirs = append(s.dirs, s.big)
	defer func() {
		for _, fd := range s.open {
			unix.Close(fd)
		}
	}()
	for i := int64(0); i < e.cfg.count; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Errors are part of the workload: a full filesystem, an xattr
		// too large for the inode and no ea_inode, a name already gone.
		s.op()
		e.ops.Add(1)
	}
	root, err := unix.Open(e.root, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	if err := unix.IoctlSetPointerInt(root, fsIOCShutdown, goingFlagsNoLogFlush); err != nil {
		return fmt.Errorf("FS_IOC_SHUTDOWN: %w", err)
	}
	e.crashed = true
	e.note = fmt.Sprintf("crash_after_ops=%d files=%d open=%d", e.cfg.count, len(s.files), len(s.open))
	return nil
}

// name returns a fresh name in a random directory (the large directory
// one time in four).
func (s *crashState) name() string {
	s.next++
	dir := s.dirs[s.rng.IntN(len(s.dirs))]
	if s.rng.IntN(4) == 0 {
		dir = s.big
	}
	return filepath.Join(dir, fmt.Sprintf("f%05d-%s", s.next, padName(s.rng.IntN(40))))
}

// padName returns n letters, so that names take different room in their
// directory blocks.
func padName(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return string(b)
}

// pick returns a live file, or "" when there is none.
func (s *crashState) pick() (int, string) {
	if len(s.files) == 0 {
		return -1, ""
	}
	i := s.rng.IntN(len(s.files))
	return i, s.files[i]
}

func (s *crashState) drop(i int) {
	s.files[i] = s.files[len(s.files)-1]
	s.files = s.files[:len(s.files)-1]
}

func (s *crashState) path(rel string) string { return filepath.Join(s.root, rel) }

// op runs one random operation.
func (s *crashState) op() {
	r := s.rng
	switch k := r.IntN(100); {
	case k < 25: // create and write, sometimes fsync
		rel := s.name()
		fd, err := unix.Open(s.path(rel), unix.O_CREAT|unix.O_WRONLY, 0o644)
		if err != nil {
			return
		}
		writeRandom(fd, r, 0, int64(r.IntN(64<<10)))
		if r.IntN(4) == 0 {
			unix.Fsync(fd)
		}
		unix.Close(fd)
		s.files = append(s.files, rel)
	case k < 35: // append
		if _, rel := s.pick(); rel != "" {
			if fd, err := unix.Open(s.path(rel), unix.O_WRONLY|unix.O_APPEND, 0); err == nil {
				writeRandom(fd, r, 0, int64(r.IntN(32<<10)))
				unix.Close(fd)
			}
		}
	case k < 42: // truncate
		if _, rel := s.pick(); rel != "" {
			unix.Truncate(s.path(rel), int64(r.IntN(48<<10)))
		}
	case k < 48: // punch a hole
		if _, rel := s.pick(); rel != "" {
			if fd, err := unix.Open(s.path(rel), unix.O_WRONLY, 0); err == nil {
				unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, int64(r.IntN(16))*4096, int64(1+r.IntN(4))*4096)
				unix.Close(fd)
			}
		}
	case k < 56: // rename
		if i, rel := s.pick(); rel != "" {
			to := s.name()
			if unix.Rename(s.path(rel), s.path(to)) == nil {
				s.files[i] = to
			}
		}
	case k < 62: // hard link
		if _, rel := s.pick(); rel != "" {
			to := s.name()
			if unix.Link(s.path(rel), s.path(to)) == nil {
				s.files = append(s.files, to)
			}
		}
	case k < 72: // unlink, one time in two while it stays open
		if i, rel := s.pick(); rel != "" {
			if r.IntN(2) == 0 && len(s.open) < 64 {
				if fd, err := unix.Open(s.path(rel), unix.O_RDWR, 0); err == nil {
					s.open = append(s.open, fd)
				}
			}
			if unix.Unlink(s.path(rel)) == nil {
				s.drop(i)
			}
		}
	case k < 84: // an xattr of some size: in the inode, a block, an ea_inode
		if _, rel := s.pick(); rel != "" {
			sizes := []int{16, 200, 1500, 3000, 9000, 40000}
			v := make([]byte, sizes[r.IntN(len(sizes))])
			fill := byte(r.Uint32())
			for j := range v {
				v[j] = fill
			}
			unix.Setxattr(s.path(rel), fmt.Sprintf("user.k%d", r.IntN(4)), v, 0)
		}
	case k < 88: // remove an xattr
		if _, rel := s.pick(); rel != "" {
			unix.Removexattr(s.path(rel), fmt.Sprintf("user.k%d", r.IntN(4)))
		}
	case k < 92: // a directory
		s.next++
		rel := filepath.Join(s.dirs[r.IntN(len(s.dirs))], fmt.Sprintf("d%05d", s.next))
		if unix.Mkdir(s.path(rel), 0o755) == nil {
			s.dirs = append(s.dirs, rel)
		}
	case k < 96: // a burst into the large directory
		for j := 0; j < 50; j++ {
			s.next++
			rel := filepath.Join(s.big, fmt.Sprintf("e%05d-%s", s.next, padName(r.IntN(60))))
			if fd, err := unix.Open(s.path(rel), unix.O_CREAT|unix.O_WRONLY, 0o644); err == nil {
				unix.Close(fd)
				s.files = append(s.files, rel)
			}
		}
	case k < 98: // write to an open, possibly unlinked, file
		if len(s.open) > 0 {
			writeRandom(s.open[r.IntN(len(s.open))], r, int64(r.IntN(32<<10)), int64(r.IntN(16<<10)))
		}
	default: // fsync a directory, or everything
		if r.IntN(2) == 0 {
			unix.Sync()
		} else if fd, err := unix.Open(s.path(s.dirs[r.IntN(len(s.dirs))]), unix.O_RDONLY|unix.O_DIRECTORY, 0); err == nil {
			unix.Fsync(fd)
			unix.Close(fd)
		}
	}
}

// writeRandom writes n bytes at off (at the end for an O_APPEND fd,
// whatever off says). The bytes are one value repeated: a checker never
// reads file data, and the images must compress to keep as test data.
func writeRandom(fd int, r *rand.Rand, off, n int64) {
	buf := make([]byte, min(n, 64<<10))
	fill := byte(r.Uint32())
	for i := range buf {
		buf[i] = fill
	}
	for n > 0 {
		k := min(n, int64(len(buf)))
		if _, err := unix.Pwrite(fd, buf[:k], off); err != nil {
			return
		}
		off += k
		n -= k
	}
}
