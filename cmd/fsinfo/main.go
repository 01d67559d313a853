// Command fsinfo summarises an ext2/3/4 filesystem:
//
//	fsinfo [-hgf] [-n N] device
//
// -h prints the superblock as dumpe2fs -h does (same fields, names and
// values) followed by the journal superblock fields; -g a per-group table
// (free counts, flags, itable_unused, descriptor and bitmap checksums); -f
// the N (-n, default 10) most fragmented directories and files with their
// block ranges in debugfs stat's style. With none of -h, -g, -f all three
// are printed. The filesystem is only read.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"gofsck/internal/blockdev"
	"gofsck/internal/dump"
	"gofsck/internal/fs"
	"gofsck/internal/getopt"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

func usage(prog string, w io.Writer) int {
	fmt.Fprintf(w, "Usage: %s [-hgf] [-n N] [-b superblock] [-B blocksize] device\n", prog)
	return 1
}

func run(args []string, stdout, stderr io.Writer) int {
	prog := args[0]
	opts, operands, err := getopt.Parse(prog, args[1:], "hgfn:b:B:")
	if err != nil {
		fmt.Fprintln(stderr, err)
		return usage(prog, stderr)
	}
	var header, groups, frag bool
	n := 10
	var fo fs.Options
	for _, o := range opts {
		switch o.Name {
		case 'h':
			header = true
		case 'g':
			groups = true
		case 'f':
			frag = true
		case 'n':
			v, err := strconv.Atoi(o.Arg)
			if err != nil || v < 1 || v > 100000 {
				fmt.Fprintf(stderr, "%s: bad count '%s'\n", prog, o.Arg)
				return usage(prog, stderr)
			}
			n = v
		case 'b':
			v, err := strconv.ParseUint(o.Arg, 0, 64)
			if err != nil {
				fmt.Fprintf(stderr, "%s: invalid superblock '%s'\n", prog, o.Arg)
				return 1
			}
			fo.Superblock = v
		case 'B':
			v, err := strconv.Atoi(o.Arg)
			if err != nil {
				fmt.Fprintf(stderr, "%s: invalid block size '%s'\n", prog, o.Arg)
				return 1
			}
			fo.BlockSize = v
		}
	}
	if len(operands) != 1 {
		return usage(prog, stderr)
	}
	if !header && !groups && !frag {
		header, groups, frag = true, true, true
	}
	dev, err := blockdev.Open(operands[0], true, false)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	defer dev.Close()
	f, err := fs.Open(dev, fo)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v while trying to open %s\n", prog, err, operands[0])
		return 1
	}
	status := 0
	fail := func(what string, err error) {
		fmt.Fprintf(stderr, "%s: %s: %v\n", prog, what, err)
		status = 1
	}
	if header {
		if err := dump.WriteSuper(stdout, f.SB); err != nil {
			fail("superblock", err)
		}
		if err := dump.WriteJournal(stdout, f); err != nil {
			fail("journal", err)
		}
		fmt.Fprintln(stdout)
	}
	if groups {
		if err := dump.WriteGroups(stdout, f); err != nil {
			fail("groups", err)
		}
	}
	if frag {
		if groups {
			fmt.Fprintln(stdout)
		}
		r, err := dump.ScanFragmentation(f, dump.FragOptions{N: n})
		if err == nil {
			err = r.Write(stdout)
		}
		if err != nil {
			var be *fs.BlockRangeError
			if errors.As(err, &be) {
				err = fmt.Errorf("corrupt: %w", err)
			}
			fail("fragmentation", err)
		}
	}
	return status
}
