// Command mkworkload builds ext4 benchmark images for gofsck.
//
// Each workload reproduces one of the seed cases as an image file written by
// the kernel's own ext4 driver: the image is created with mke2fs, loop-mounted,
// populated from many goroutines making syscalls directly, synced and
// unmounted. Root is needed for the loop mount.
//
// Usage:
//
//	mkworkload -w NAME -o IMAGE [-n COUNT] [-size SIZE] [-j JOBS] [flags]
//
// Workloads (and what -n counts, with its default):
//
//	zero        zero-byte files spread over 256 directories (inodes, 4M)
//	small       4-32 KiB files over 256 directories (files, 2M)
//	bigdir      zero-byte files in one large_dir directory (entries, 2M)
//	frag-punch  files whose every other block is punched out (extents, 8M)
//	frag-aged   filled with small files, every other one deleted, then
//	            big files grown into the holes (small files, 1M)
//	mixed       copies of a real tree plus xattrs, hard and symbolic links,
//	            sparse files and some aging (inodes, 250k)
//
// On success one line of key=value pairs is printed on stdout: inodes and
// blocks used (from dumpe2fs), the extent count of the most fragmented file
// that was measured, and the wall time. The loop device is always unmounted
// and detached, on error and on SIGINT/SIGTERM too.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
)

// config holds the parsed command line.
type config struct {
	workload  string // -w
	image     string // -o
	count     int64  // -n; 0 means the workload's default
	size      int64  // -size in bytes; 0 means computed
	jobs      int    // -j
	blockSize int    // -b; 0 lets mke2fs choose
	perFile   int64  // -extents: extents per file for frag-punch
	bigFiles  int    // -big: big files for frag-aged; 0 means automatic
	src       string // -src: tree copied by mixed
	data      string // -data: "write", "fallocate" or "" (workload default)
	seed      uint64 // -seed
	mntDir    string // -mnt: parent of the temporary mount point
	mkfsArgs  string // -mkfs: extra mke2fs arguments
	mountOpts string // -mount-opts: extra mount options
	verbose   bool   // -v
	quiet     bool   // -q
	list      bool   // -list

	// tree is the walked -src, filled in by the mixed plan.
	tree []srcEntry
}

func main() {
	os.Exit(mainErr(os.Args[1:], os.Stdout, os.Stderr))
}

// mainErr parses args, builds the image and returns the exit code.
func mainErr(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "mkworkload: %v\n", err)
		return 2
	}
	if cfg.list {
		for _, w := range workloads {
			fmt.Fprintf(stdout, "%s %d\n", w.name, w.defCount)
		}
		return 0
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(stderr, "mkworkload: must be run as root: it loop-mounts the image (mount -o loop) so that the kernel's ext4 driver writes it; re-run with sudo")
		return 1
	}
	// Keep the signals caught until cleanup has finished, so that a second
	// Ctrl-C cannot leave the image mounted.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := build(ctx, cfg, stderr)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "mkworkload: interrupted: %v\n", err)
			return 130
		}
		fmt.Fprintf(stderr, "mkworkload: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, sum.String())
	return 0
}

// parseFlags turns the command line into a config.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("mkworkload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{}
	var size string
	fs.StringVar(&cfg.workload, "w", "", "workload: "+strings.Join(workloadNames(), ", "))
	fs.StringVar(&cfg.image, "o", "", "output image file (overwritten)")
	fs.Int64Var(&cfg.count, "n", 0, "workload size (inodes, files, entries or extents; see above); 0 = default")
	fs.StringVar(&size, "size", "", "image size, e.g. 64M, 20G (default: computed to fit)")
	fs.IntVar(&cfg.jobs, "j", 4*runtime.NumCPU(), "goroutines making syscalls")
	fs.IntVar(&cfg.blockSize, "b", 4096, "block size passed to mke2fs -b (0 = let mke2fs choose)")
	fs.Int64Var(&cfg.perFile, "extents", 32768, "frag-punch: extents per file")
	fs.IntVar(&cfg.bigFiles, "big", 0, "frag-aged: number of big files (0 = n/50000 clamped to 1..16)")
	fs.StringVar(&cfg.src, "src", defaultSrc(), "mixed: directory tree to copy")
	fs.StringVar(&cfg.data, "data", "", "file data: write or fallocate (default: fallocate, write for mixed)")
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed for file sizes and names")
	fs.StringVar(&cfg.mntDir, "mnt", "", "directory for the temporary mount point (default $TMPDIR)")
	fs.StringVar(&cfg.mkfsArgs, "mkfs", "", "extra mke2fs arguments, space separated (e.g. \"-O ^metadata_csum -J size=256\")")
	fs.StringVar(&cfg.mountOpts, "mount-opts", "", "extra mount options (comma separated)")
	fs.BoolVar(&cfg.verbose, "v", false, "print the commands run and progress")
	fs.BoolVar(&cfg.quiet, "q", false, "no progress lines on stderr")
	fs.BoolVar(&cfg.list, "list", false, "print each workload's name and default -n, and exit")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: mkworkload -w NAME -o IMAGE [-n COUNT] [-size SIZE] [-j JOBS] [flags]\n\nworkloads:\n")
		for _, w := range workloads {
			fmt.Fprintf(fs.Output(), "  %-11s %s (-n default %d)\n", w.name, w.help, w.defCount)
		}
		fmt.Fprintf(fs.Output(), "\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.list {
		return cfg, nil
	}
	if cfg.workload == "" || cfg.image == "" {
		fs.Usage()
		return nil, errors.New("-w and -o are required")
	}
	if lookupWorkload(cfg.workload) == nil {
		return nil, fmt.Errorf("unknown workload %q (have %s)", cfg.workload, strings.Join(workloadNames(), ", "))
	}
	if size != "" {
		n, err := parseSize(size)
		if err != nil {
			return nil, fmt.Errorf("-size: %w", err)
		}
		cfg.size = n
	}
	switch {
	case cfg.count < 0:
		return nil, errors.New("-n must not be negative")
	case cfg.jobs < 1:
		return nil, errors.New("-j must be at least 1")
	case cfg.perFile < 1:
		return nil, errors.New("-extents must be at least 1")
	case cfg.bigFiles < 0:
		return nil, errors.New("-big must not be negative")
	}
	switch cfg.blockSize {
	case 0, 1024, 2048, 4096, 65536:
	default:
		return nil, fmt.Errorf("-b %d: want 1024, 2048, 4096 or 0", cfg.blockSize)
	}
	switch cfg.data {
	case "", "write", "fallocate":
	default:
		return nil, fmt.Errorf("-data %q: want write or fallocate", cfg.data)
	}
	return cfg, nil
}

// defaultSrc is the tree mixed copies when -src is not given: the Go
// installation if there is one, else /usr/share.
func defaultSrc() string {
	for _, d := range []string{"/usr/local/go", "/usr/lib/go", "/usr/share"} {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	return "/usr/share"
}

// workloadNames lists the workload names in table order.
func workloadNames() []string {
	names := make([]string, 0, len(workloads))
	for _, w := range workloads {
		names = append(names, w.name)
	}
	return names
}

// lookupWorkload returns the workload called name, or nil.
func lookupWorkload(name string) *workload {
	for i := range workloads {
		if workloads[i].name == name {
			return &workloads[i]
		}
	}
	return nil
}

// parseSize parses a byte count with an optional K, M, G or T suffix
// (powers of 1024, optional "iB" or "B").
func parseSize(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I")
	mult := int64(1)
	if t != "" {
		switch t[len(t)-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			t = t[:len(t)-1]
		}
	}
	var v float64
	if _, err := fmt.Sscanf(t, "%g", &v); err != nil || v <= 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	f := v * float64(mult)
	if f > 1<<60 {
		return 0, fmt.Errorf("size %q too large", s)
	}
	return int64(f), nil
}
