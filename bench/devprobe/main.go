// Command devprobe measures how a file-backed device serves reads: how many
// preads it serves at once, whether posix_fadvise(WILLNEED) reads ahead
// asynchronously, and whether O_DIRECT works. bench/slowdev.sh's device
// (nbdkit's delay filter behind nbdfuse) is what it was written for; the
// results are in bench/RESULTS-slowdev.md.
//
// Usage:
//
//	devprobe par [-k workers] [-n reads] [-bs size] [-direct] FILE
//	devprobe fadvise [-n ranges] [-bs size] [-wait d] [-noread] FILE
//	devprobe read [-bs size] [-off offset] [-direct] FILE
//
// par issues n preads of bs bytes at distinct random bs-aligned offsets
// from k goroutines and prints the elapsed time and the mean time per read.
// With a device of latency L that serves q reads at once, elapsed is about
// n*L/min(k, q).
//
// fadvise calls posix_fadvise(WILLNEED) on n random ranges of bs bytes,
// timing the calls, then times a pread of each range. If the advice is
// asynchronous, the calls return in much less than n*L and the preads that
// follow are served from the page cache. -wait sleeps between the two;
// -noread stops after the advice, so that the device's request log shows
// what the advice alone fetched.
//
// read does one pread of bs bytes at off (with -direct through O_DIRECT),
// for the device's request log to show how the kernel split it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "par":
		err = par(os.Args[2:])
	case "fadvise":
		err = fadvise(os.Args[2:])
	case "read":
		err = read(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "devprobe:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: devprobe par|fadvise|read [flags] FILE")
	os.Exit(2)
}

// open opens the single FILE argument read-only, with O_DIRECT if asked,
// and returns its descriptor and size.
func open(fs *flag.FlagSet, direct bool) (int, int64, error) {
	if fs.NArg() != 1 {
		return -1, 0, errors.New("want one FILE")
	}
	flags := unix.O_RDONLY | unix.O_CLOEXEC
	if direct {
		flags |= unix.O_DIRECT
	}
	fd, err := unix.Open(fs.Arg(0), flags, 0)
	if err != nil {
		return -1, 0, fmt.Errorf("open %s: %w", fs.Arg(0), err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, 0, err
	}
	return fd, st.Size, nil
}

// alignedBuf returns a page-aligned buffer of n bytes (O_DIRECT needs one).
func alignedBuf(n int) ([]byte, error) {
	return unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
}

// offsets returns n distinct random bs-aligned offsets below size.
func offsets(n int, bs, size int64) []int64 {
	slots := size / bs
	if int64(n) > slots {
		n = int(slots)
	}
	seen := make(map[int64]bool, n)
	offs := make([]int64, 0, n)
	for len(offs) < n {
		s := rand.Int64N(slots)
		if !seen[s] {
			seen[s] = true
			offs = append(offs, s*bs)
		}
	}
	return offs
}

func par(args []string) error {
	fs := flag.NewFlagSet("par", flag.ExitOnError)
	k := fs.Int("k", 8, "concurrent readers")
	n := fs.Int("n", 512, "reads")
	bs := fs.Int64("bs", 4096, "read size")
	direct := fs.Bool("direct", false, "open with O_DIRECT")
	fs.Parse(args)
	fd, size, err := open(fs, *direct)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	offs := offsets(*n, *bs, size)
	work := make(chan int64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	t0 := time.Now()
	for range *k {
		wg.Go(func() {
			buf, err := alignedBuf(int(*bs))
			if err != nil {
				mu.Lock()
				firstErr = err
				mu.Unlock()
				for range work {
				}
				return
			}
			defer unix.Munmap(buf)
			for off := range work {
				if _, err := unix.Pread(fd, buf, off); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("pread at %d: %w", off, err)
					}
					mu.Unlock()
				}
			}
		})
	}
	for _, off := range offs {
		work <- off
	}
	close(work)
	wg.Wait()
	el := time.Since(t0)
	fmt.Printf("par k=%d n=%d bs=%d direct=%v elapsed=%.3fs per_read=%.3fms reads_per_s=%.0f\n",
		*k, len(offs), *bs, *direct, el.Seconds(), el.Seconds()*1000/float64(len(offs)), float64(len(offs))/el.Seconds())
	return firstErr
}

func fadvise(args []string) error {
	fs := flag.NewFlagSet("fadvise", flag.ExitOnError)
	n := fs.Int("n", 256, "ranges")
	bs := fs.Int64("bs", 4096, "range size")
	wait := fs.Duration("wait", 0, "sleep this long between the advice and the reads")
	noread := fs.Bool("noread", false, "only advise: no reads after the wait")
	fs.Parse(args)
	fd, size, err := open(fs, false)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	offs := offsets(*n, *bs, size)
	t0 := time.Now()
	for _, off := range offs {
		if err := unix.Fadvise(fd, off, *bs, unix.FADV_WILLNEED); err != nil {
			return fmt.Errorf("fadvise: %w", err)
		}
	}
	adv := time.Since(t0)
	time.Sleep(*wait)
	if *noread {
		fmt.Printf("fadvise n=%d bs=%d advise=%.3fs (%.3fms each)\n",
			len(offs), *bs, adv.Seconds(), adv.Seconds()*1000/float64(len(offs)))
		return nil
	}
	buf := make([]byte, *bs)
	t1 := time.Now()
	var slow int
	for _, off := range offs {
		r0 := time.Now()
		if _, err := unix.Pread(fd, buf, off); err != nil {
			return fmt.Errorf("pread at %d: %w", off, err)
		}
		if time.Since(r0) > 500*time.Microsecond {
			slow++
		}
	}
	rd := time.Since(t1)
	fmt.Printf("fadvise n=%d bs=%d advise=%.3fs (%.3fms each) then_read=%.3fs slow_reads(>0.5ms)=%d\n",
		len(offs), *bs, adv.Seconds(), adv.Seconds()*1000/float64(len(offs)), rd.Seconds(), slow)
	return nil
}

func read(args []string) error {
	fs := flag.NewFlagSet("read", flag.ExitOnError)
	bs := fs.Int("bs", 1<<20, "read size")
	off := fs.Int64("off", 0, "offset")
	direct := fs.Bool("direct", false, "open with O_DIRECT")
	fs.Parse(args)
	fd, _, err := open(fs, *direct)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	buf, err := alignedBuf(*bs)
	if err != nil {
		return err
	}
	defer unix.Munmap(buf)
	t0 := time.Now()
	got, err := unix.Pread(fd, buf, *off)
	fmt.Printf("read bs=%d off=%d direct=%v got=%d err=%v elapsed=%.3fms\n",
		*bs, *off, *direct, got, err, time.Since(t0).Seconds()*1000)
	return err
}
