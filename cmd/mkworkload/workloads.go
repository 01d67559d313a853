package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// workload is one kind of image mkworkload can build.
type workload struct {
	name     string
	help     string
	defCount int64
	// plan sizes the filesystem for cfg.count.
	plan func(cfg *config) (plan, error)
	// populate fills the mounted filesystem at e.root.
	populate func(ctx context.Context, e *env) error
}

// workloads is the table of workloads, in the order the usage lists them.
var workloads = []workload{
	{"zero", "zero-byte files over 256 directories; -n = files", 4 << 20, planZero, populateZero},
	{"small", "4-32 KiB files over 256 directories; -n = files", 2 << 20, planSmall, populateSmall},
	{"bigdir", "zero-byte files in one large_dir directory; -n = entries", 2 << 20, planBigdir, populateBigdir},
	{"frag-punch", "files with every other block punched out; -n = total extents", 8 << 20, planFragPunch, populateFragPunch},
	{"frag-aged", "small files, every other one deleted, big files grown into the holes; -n = small files", 1 << 20, planFragAged, populateFragAged},
	{"seed", "20 KiB files over 256 directories, sized as the first seed thread's disk (45.6M files on 1 TiB; mke2fs's own inode count); -n = files", seedFiles, planSeed, populateSeed},
	{"crash", "random operations (orphans, xattrs of every size, links, renames, punched holes, a large directory), then a shutdown without log flush, as a power cut leaves it; -n = operations", crashDefaultOps, planCrash, populateCrash},
	{"mixed", "copies of -src with xattrs, hard/symbolic links, sparse files, aging; -n = inodes", 250000, planMixed, populateMixed},
}

// spreadDirs is how many directories the zero, small and frag-aged
// workloads spread their files over (the seed's fs_mark layout).
const spreadDirs = 256

// avgSmallAlloc is the mean space a 4-32 KiB file takes with 4 KiB blocks.
const avgSmallAlloc = 20 << 10

// blockSizeGuess is the block size plans assume when -b 0 is given.
func blockSizeGuess(cfg *config) int64 {
	if cfg.blockSize != 0 {
		return int64(cfg.blockSize)
	}
	return 4096
}

// smallSize returns the size of small file i: 4 KiB to 32 KiB.
func smallSize(seed uint64, i int64) int64 {
	return 4096 + int64(mix(seed^uint64(i))%(32768-4096+1))
}

// pattern is read-only data that files written with -data write are cut
// from; 1 MiB of non-zero, poorly compressible bytes.
var pattern = func() []byte {
	b := make([]byte, 1<<20)
	for i := 0; i < len(b); i += 8 {
		v := mix(uint64(i))
		for k := 0; k < 8; k++ {
			b[i+k] = byte(v >> (8 * k))
		}
	}
	return b
}()

// writeFile gives the open file fd size bytes, written or fallocated.
func writeFile(fd int, size int64, write bool) error {
	if size == 0 {
		return nil
	}
	if !write {
		return unix.Fallocate(fd, 0, 0, size)
	}
	for off := int64(0); off < size; {
		n := min(size-off, int64(len(pattern)))
		w, err := unix.Pwrite(fd, pattern[:n], off)
		if err != nil {
			return err
		}
		off += int64(w)
	}
	return nil
}

// createAt creates dir/name (which must not exist) with size bytes.
func createAt(dirfd int, name string, size int64, write bool) error {
	fd, err := unix.Openat(dirfd, name, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	err = writeFile(fd, size, write)
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	return err
}

// openDirs creates root/prefixNNN for NNN in [0, n) and returns an open
// descriptor for each; close them with closeAll.
func openDirs(root, prefix string, n int) ([]int, error) {
	fds := make([]int, 0, n)
	for i := range n {
		p := filepath.Join(root, fmt.Sprintf("%s%03d", prefix, i))
		if err := unix.Mkdir(p, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			closeAll(fds)
			return nil, fmt.Errorf("mkdir %s: %w", p, err)
		}
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			closeAll(fds)
			return nil, fmt.Errorf("open %s: %w", p, err)
		}
		fds = append(fds, fd)
	}
	return fds, nil
}

// closeAll closes every descriptor in fds.
func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// dirNames lists prefixNNN for NNN in [0, n), relative to the root.
func dirNames(prefix string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("%s%03d", prefix, i)
	}
	return s
}

// fileName is the name of file i in the spread workloads.
func fileName(i int64) string { return "f" + strconv.FormatInt(i, 10) }

// spreadPlan sizes a filesystem for n files of avg allocated bytes each,
// spread over spreadDirs directories.
func spreadPlan(cfg *config, n, avg int64) plan {
	inodes := n + spreadDirs + 64
	payload := n*avg + n*32 + spreadDirs*2*blockSizeGuess(cfg)
	return plan{bytes: fsBytes(cfg, inodes, payload), inodes: inodes}
}

// populateSpread creates files f<i>, i in [0, n), in directory
// d<i%spreadDirs>, each directory filled by one goroutine at a time.
func populateSpread(ctx context.Context, e *env, size func(i int64) int64, write bool) error {
	fds, err := openDirs(e.root, "d", spreadDirs)
	if err != nil {
		return err
	}
	defer closeAll(fds)
	n := e.cfg.count
	return forEach(ctx, e.cfg.jobs, spreadDirs, func(ctx context.Context, d int64) error {
		for i := d; i < n; i += spreadDirs {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := createAt(fds[d], fileName(i), size(i), write); err != nil {
				return fmt.Errorf("d%03d/%s: %w", d, fileName(i), err)
			}
			e.ops.Add(1)
		}
		return nil
	})
}

// planZero sizes the zero workload: inodes only, plus directory blocks.
func planZero(cfg *config) (plan, error) { return spreadPlan(cfg, cfg.count, 0), nil }

// populateZero creates cfg.count empty files over 256 directories.
func populateZero(ctx context.Context, e *env) error {
	e.measure = dirNames("d", spreadDirs)
	return populateSpread(ctx, e, func(int64) int64 { return 0 }, false)
}

// planSmall sizes the small workload for files of 4-32 KiB.
func planSmall(cfg *config) (plan, error) { return spreadPlan(cfg, cfg.count, avgSmallAlloc), nil }

// populateSmall creates cfg.count files of 4-32 KiB over 256 directories.
func populateSmall(ctx context.Context, e *env) error {
	e.measure = dirNames("d", spreadDirs)
	for d := int64(0); d < spreadDirs && d < e.cfg.count; d++ {
		e.measure = append(e.measure, filepath.Join(fmt.Sprintf("d%03d", d), fileName(d)))
	}
	seed := e.cfg.seed
	return populateSpread(ctx, e, func(i int64) int64 { return smallSize(seed, i) }, e.cfg.data == "write")
}

// seedFiles and seedDiskBytes are the first seed thread's filesystem:
// 45.6M files of 20 KiB in 256 directories on a 1 TB disk.
const (
	seedFiles     = 45_600_000
	seedDiskBytes = 1 << 40
	seedFileBytes = 20 << 10
)

// planSeed sizes the seed workload: the seed's disk scaled to cfg.count
// files (1 TiB for 45.6M), with mke2fs's default inode ratio and
// features, as mke2fs makes a filesystem of that size today.
func planSeed(cfg *config) (plan, error) {
	bs := blockSizeGuess(cfg)
	bytes := max(cfg.count*((seedDiskBytes+seedFiles-1)/seedFiles), 64<<20)
	return plan{bytes: (bytes + bs - 1) / bs * bs}, nil
}

// populateSeed creates cfg.count files of 20 KiB over 256 directories,
// their blocks preallocated (so a sparse image holds only metadata)
// unless -data write.
func populateSeed(ctx context.Context, e *env) error {
	e.measure = dirNames("d", spreadDirs)
	return populateSpread(ctx, e, func(int64) int64 { return seedFileBytes }, e.cfg.data == "write")
}

// planBigdir sizes the bigdir workload and asks for large_dir.
func planBigdir(cfg *config) (plan, error) {
	inodes := cfg.count + 64
	payload := cfg.count*48 + 4<<20
	return plan{bytes: fsBytes(cfg, inodes, payload), inodes: inodes, features: []string{"large_dir"}}, nil
}

// bigdirName is entry i of the big directory: variable-length names
// (8-40 bytes) so record lengths and hash spread look like real ones.
func bigdirName(seed uint64, i int64) string {
	h := mix(seed ^ uint64(i) ^ 0x5bd1e995)
	name := "e" + strconv.FormatInt(i, 36) + "-" + strconv.FormatUint(h, 36)
	want := 8 + int(h%33)
	for len(name) < want {
		name += "x"
	}
	if len(name) > want && want > len(strconv.FormatInt(i, 36))+2 {
		name = name[:want]
	}
	return name
}

// populateBigdir creates cfg.count empty files in the single directory /big.
func populateBigdir(ctx context.Context, e *env) error {
	const chunk = 1024
	dir := filepath.Join(e.root, "big")
	if err := unix.Mkdir(dir, 0o755); err != nil {
		return err
	}
	e.measure = []string{"big"}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	n := e.cfg.count
	return forEach(ctx, e.cfg.jobs, (n+chunk-1)/chunk, func(ctx context.Context, c int64) error {
		for i := c * chunk; i < min(n, (c+1)*chunk); i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			name := bigdirName(e.cfg.seed, i)
			if err := createAt(dfd, name, 0, false); err != nil {
				return fmt.Errorf("big/%s: %w", name, err)
			}
			e.ops.Add(1)
		}
		return nil
	})
}

// fragPunchLayout splits n extents over files of at most per extents.
func fragPunchLayout(n, per int64) (files, perFile int64) {
	if per > n {
		per = n
	}
	if per < 1 {
		per = 1
	}
	return (n + per - 1) / per, per
}

// planFragPunch sizes frag-punch for its files before any hole is punched.
func planFragPunch(cfg *config) (plan, error) {
	files, _ := fragPunchLayout(cfg.count, cfg.perFile)
	bs := blockSizeGuess(cfg)
	// Each file is fully allocated before its holes are punched; the
	// extent tree needs about one block per 340 extents.
	payload := cfg.count*2*bs + (cfg.count/300+files)*bs
	inodes := files + 64
	return plan{bytes: fsBytes(cfg, inodes, payload), inodes: inodes}, nil
}

// populateFragPunch fallocates each file under /frag whole, then punches
// out every other block so each kept block is an extent of its own.
func populateFragPunch(ctx context.Context, e *env) error {
	files, per := fragPunchLayout(e.cfg.count, e.cfg.perFile)
	dir := filepath.Join(e.root, "frag")
	if err := unix.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for f := range files {
		e.measure = append(e.measure, filepath.Join("frag", fileName(f)))
	}
	bs := e.bs
	n := e.cfg.count
	e.note = fmt.Sprintf("files=%d extents_per_file=%d", files, per)
	return forEach(ctx, e.cfg.jobs, files, func(ctx context.Context, f int64) error {
		ext := min(per, n-f*per)
		p := filepath.Join(dir, fileName(f))
		fd, err := unix.Open(p, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Fallocate(fd, 0, 0, 2*ext*bs); err != nil {
			return fmt.Errorf("fallocate %s: %w", p, err)
		}
		// Punch every odd block: extents stay at blocks 0, 2, 4, ...
		for k := int64(0); k < ext; k++ {
			if k%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if err := unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, (2*k+1)*bs, bs); err != nil {
				return fmt.Errorf("punch %s block %d: %w", p, 2*k+1, err)
			}
			e.ops.Add(1)
		}
		return nil
	})
}

// bigFileCount is the number of big files frag-aged grows.
func bigFileCount(cfg *config) int64 {
	if cfg.bigFiles > 0 {
		return int64(cfg.bigFiles)
	}
	return min(16, max(1, cfg.count/50000))
}

// planFragAged sizes frag-aged so that about cfg.count small files fill it.
func planFragAged(cfg *config) (plan, error) {
	// Sized for count small files; the fill goes on until the filesystem
	// is full (up to 2*count files), so that the big files can only grow
	// into the holes the deletions leave.
	n := cfg.count
	inodes := 2*n + spreadDirs + bigFileCount(cfg) + 64
	payload := n*avgSmallAlloc + spreadDirs*2*blockSizeGuess(cfg)
	return plan{bytes: fsBytes(cfg, inodes, payload), inodes: inodes}, nil
}

// agedFile is one small file of frag-aged and where its data starts.
type agedFile struct {
	dir  int
	name string
	phys uint64
}

// populateFragAged fills the filesystem with small files, deletes every
// other one in physical order and grows the big files into the holes.
func populateFragAged(ctx context.Context, e *env) error {
	cfg := e.cfg
	write := cfg.data == "write"
	fds, err := openDirs(e.root, "s", spreadDirs)
	if err != nil {
		return err
	}
	defer closeAll(fds)

	// 1. Fill: unit u writes a run of 16 files into directory u%256, so
	// directories fill evenly and goroutines rarely share a directory.
	const run = 16
	limit := 2 * cfg.count
	units := (limit + spreadDirs*run - 1) / (spreadDirs * run) * spreadDirs
	err = forEach(ctx, cfg.jobs, units, func(ctx context.Context, u int64) error {
		d, r := u%spreadDirs, u/spreadDirs
		for k := int64(0); k < run; k++ {
			i := (r*run+k)*spreadDirs + d
			if i >= limit {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := createAt(fds[d], fileName(i), smallSize(cfg.seed, i), write); err != nil {
				if isFull(err) {
					return errFull
				}
				return fmt.Errorf("s%03d/%s: %w", d, fileName(i), err)
			}
			e.ops.Add(1)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFull) {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := syncMount(e.root); err != nil {
		return err
	}

	// 2. Find where each file starts on disk and delete every other one
	// in physical order, leaving holes between the survivors.
	perDir := make([][]agedFile, spreadDirs)
	err = forEach(ctx, cfg.jobs, spreadDirs, func(ctx context.Context, d int64) error {
		ents, err := os.ReadDir(filepath.Join(e.root, fmt.Sprintf("s%03d", d)))
		if err != nil {
			return err
		}
		for _, ent := range ents {
			fd, err := unix.Openat(fds[d], ent.Name(), unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return err
			}
			_, phys, ok, err := fiemap(fd, 1)
			unix.Close(fd)
			if err != nil {
				return err
			}
			if ok {
				perDir[d] = append(perDir[d], agedFile{int(d), ent.Name(), phys})
			}
		}
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	var all []agedFile
	for _, fs := range perDir {
		all = append(all, fs...)
	}
	filled := len(all)
	sort.Slice(all, func(a, b int) bool { return all[a].phys < all[b].phys })
	doomed := make([][]string, spreadDirs)
	for i := 0; i < len(all); i += 2 {
		doomed[all[i].dir] = append(doomed[all[i].dir], all[i].name)
	}
	err = forEach(ctx, cfg.jobs, spreadDirs, func(ctx context.Context, d int64) error {
		for _, name := range doomed[d] {
			if err := unix.Unlinkat(fds[d], name, 0); err != nil {
				return fmt.Errorf("unlink s%03d/%s: %w", d, name, err)
			}
			e.ops.Add(1)
		}
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	// Freed blocks are reusable only once the deleting transaction commits.
	if err := syncMount(e.root); err != nil {
		return err
	}

	// 3. Grow the big files round-robin in 1 MiB steps until the
	// filesystem is full; each step lands in many scattered holes.
	big := bigFileCount(cfg)
	bigDir := filepath.Join(e.root, "big")
	if err := unix.Mkdir(bigDir, 0o755); err != nil {
		return err
	}
	bfds := make([]int, 0, big)
	defer func() { closeAll(bfds) }()
	for b := range big {
		name := fmt.Sprintf("b%03d", b)
		e.measure = append(e.measure, filepath.Join("big", name))
		fd, err := unix.Open(filepath.Join(bigDir, name), unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
		if err != nil {
			return err
		}
		bfds = append(bfds, fd)
	}
	workers := min(int64(cfg.jobs), big)
	step := int64(1 << 20)
	var grown atomic.Int64 // bytes added to the big files
	err = forEach(ctx, int(workers), workers, func(ctx context.Context, w int64) error {
		size := make(map[int64]int64)
		for ctx.Err() == nil {
			for b := w; b < big; b += workers {
				err := unix.Fallocate(bfds[b], 0, size[b], step)
				if isFull(err) {
					return nil
				}
				if err != nil {
					return fmt.Errorf("grow big/b%03d: %w", b, err)
				}
				size[b] += step
				grown.Add(step)
				e.ops.Add(1)
			}
		}
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	e.note = fmt.Sprintf("small_files=%d deleted=%d big_files=%d big_bytes=%s", filled, (filled+1)/2, big, humanBytes(grown.Load()))
	return nil
}
