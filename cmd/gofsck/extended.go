package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// extendedOptions are the parsed -E options.
type extendedOptions struct {
	threads int // threads=N: workers for the parallel passes (0: two per CPU)
	// prefetch=N: work units whose reads are hinted ahead of the workers
	// (0: the default, two per worker; -1 after prefetch=0: none).
	prefetch int
	// ioDepth is io_depth=N: reads the device's read-ahead keeps in
	// flight (0: chosen for the device; -1 after io_depth=0: kernel
	// read-ahead hints only).
	ioDepth int
	trace   string // trace=FILE: record every device read to FILE (iotrace format)
	json    string // json=FILE: write a JSON report of the run (docs/json-report.md)
	// noOptimizeExtents is no_optimize_extents (optimize_extents clears
	// it): pass 1 does not offer to rebuild extent trees.
	noOptimizeExtents bool
	// bmap2extent converts block-mapped files to extents.
	bmap2extent bool
	// fixesOnly (also E2FSCK_FIXES_ONLY in the environment) keeps pass 1
	// from offering optimisations: no extent-tree statistics.
	fixesOnly bool
	// checkEncoding: validate the names of casefolded directories even
	// without the strict flag.
	checkEncoding bool
	// noSpeculation: a writable run checks passes 1 and 2 serially from
	// the start instead of in parallel first (check.Options.NoSpeculation).
	noSpeculation bool
	// memLimit is memory_limit=SIZE: the bytes the check may use (0:
	// what the machine has available).
	memLimit uint64
}

// extendedHelp is printed for an unknown -E option, as e2fsck does, with
// gofsck's own options added.
const extendedHelp = `
Extended options are separated by commas, and may take an argument which
is set off by an equals ('=') sign.  Valid extended options are:

	ea_ver=<ea_version (1 or 2)>
	fragcheck
	journal_only
	discard
	nodiscard
	optimize_extents
	no_optimize_extents
	inode_count_fullmap
	no_inode_count_fullmap
	readahead_kb=<buffer size>
	bmap2extent
	unshare_blocks
	fixes_only
	check_encoding
	threads=<number of workers (gofsck)>
	prefetch=<work units read ahead of the workers, 0 for none (gofsck)>
	io_depth=<reads kept in flight ahead of the workers, 1 for a disk that takes one at a time, 0 for kernel read-ahead only (gofsck)>
	trace=<file to record the I/O of the check in (gofsck)>
	json=<file to write a JSON report of the check to (gofsck)>
	no_speculation (gofsck: repairs run passes 1 and 2 serially only)
	memory_limit=<bytes the check may use, k/m/g/t suffixes (gofsck)>

`

// parseExtended parses -E's comma list. e2fsck's own keys are accepted (most
// have no effect on a read-only check); unknown ones print the list and
// exit 1 like e2fsck.
func parseExtended(list []string, stderr io.Writer) (extendedOptions, int, bool) {
	var x extendedOptions
	for _, opt := range list {
		if opt == "" {
			continue
		}
		key, val, hasVal := strings.Cut(opt, "=")
		switch key {
		case "threads":
			n, err := strconv.Atoi(val)
			if !hasVal || err != nil || n < 1 || n > 1024 {
				fmt.Fprintf(stderr, "Invalid threads parameter: %s\n", val)
				return x, 1, false
			}
			x.threads = n
		case "prefetch":
			n, err := strconv.Atoi(val)
			if !hasVal || err != nil || n < 0 || n > 1<<16 {
				fmt.Fprintf(stderr, "Invalid prefetch parameter: %s\n", val)
				return x, 1, false
			}
			x.prefetch = n
			if n == 0 {
				x.prefetch = -1
			}
		case "io_depth":
			n, err := strconv.Atoi(val)
			if !hasVal || err != nil || n < 0 || n > 1024 {
				fmt.Fprintf(stderr, "Invalid io_depth parameter: %s\n", val)
				return x, 1, false
			}
			x.ioDepth = n
			if n == 0 {
				x.ioDepth = -1
			}
		case "trace":
			if !hasVal || val == "" {
				fmt.Fprintf(stderr, "Invalid trace parameter\n")
				return x, 1, false
			}
			x.trace = val
		case "json":
			if !hasVal || val == "" {
				fmt.Fprintf(stderr, "Invalid json parameter\n")
				return x, 1, false
			}
			x.json = val
		case "ea_ver", "readahead_kb":
			if !hasVal {
				fmt.Fprintf(stderr, "Invalid %s parameter\n", key)
				return x, 1, false
			}
		case "optimize_extents", "no_optimize_extents":
			x.noOptimizeExtents = key == "no_optimize_extents"
		case "bmap2extent":
			x.bmap2extent = true
		case "fixes_only":
			x.fixesOnly = true
		case "no_speculation":
			x.noSpeculation = true
		case "memory_limit":
			n, ok := parseSize(val)
			if !hasVal || !ok {
				fmt.Fprintf(stderr, "Invalid memory_limit parameter: %s\n", val)
				return x, 1, false
			}
			x.memLimit = n
		case "fragcheck", "journal_only", "discard", "nodiscard",
			"inode_count_fullmap", "no_inode_count_fullmap",
			"unshare_blocks":
		case "check_encoding":
			x.checkEncoding = true
		default:
			fmt.Fprintf(stderr, "Unknown extended option: %s\n", opt)
			fmt.Fprint(stderr, extendedHelp)
			return x, 1, false
		}
	}
	return x, 0, true
}
