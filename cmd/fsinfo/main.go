// Command fsinfo summarises an ext2/3/4 filesystem:
//
//	fsinfo [-bhgf] [-n N] [-o superblock=N] [-o blocksize=N] device
//
// Options follow dumpe2fs where both have them: -b prints the bad-block
// list, one block a line, and nothing else; -o superblock= and -o
// blocksize= pick a backup superblock; errors are dumpe2fs's. -h prints the superblock as dumpe2fs -h does (same fields, names and
// values) followed by the journal superblock fields; -g a per-group table
// (free counts, flags, itable_unused, descriptor and bitmap checksums); -f
// the N (-n, default 10) most fragmented directories and files with their
// block ranges in debugfs stat's style. With none of -h, -g, -f all three
// are printed. The filesystem is only read.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"gofsck/internal/blockdev"
	"gofsck/internal/dump"
	"gofsck/internal/ext2fs"
	"gofsck/internal/fs"
	"gofsck/internal/getopt"
	"gofsck/internal/ondisk"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

func usage(prog string, w io.Writer) int {
	fmt.Fprintf(w, "Usage: %s [-bhgf] [-n N] [-o superblock=<num>] [-o blocksize=<num>] device\n", prog)
	return 1
}

func run(args []string, stdout, stderr io.Writer) int {
	prog := args[0]
	opts, operands, err := getopt.Parse(prog, args[1:], "bhgfn:o:")
	if err != nil {
		fmt.Fprintln(stderr, err)
		return usage(prog, stderr)
	}
	var header, groups, frag, badBlocks bool
	n := 10
	var fo fs.Options
	for _, o := range opts {
		switch o.Name {
		case 'b':
			badBlocks = true
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
		case 'o':
			// dumpe2fs's -o superblock=N and -o blocksize=N.
			key, val, _ := strings.Cut(o.Arg, "=")
			v, err := strconv.ParseUint(val, 0, 64)
			switch {
			case key == "superblock" && err == nil:
				fo.Superblock = v
			case key == "blocksize" && err == nil && v <= 65536:
				fo.BlockSize = int(v)
			case key == "superblock" || key == "blocksize":
				fmt.Fprintf(stderr, "Invalid %s parameter: %s\n", key, val)
				return 1
			default:
				fmt.Fprintf(stderr, "Bad extended option(s) specified: %s\n", o.Arg)
				return 1
			}
		}
	}
	if len(operands) != 1 {
		return usage(prog, stderr)
	}
	if !header && !groups && !frag && !badBlocks {
		header, groups, frag = true, true, true
	}
	device := operands[0]
	dev, err := blockdev.Open(device, true, false)
	if err == nil {
		var f *fs.FS
		if f, err = fs.Open(dev, fo); err == nil {
			defer dev.Close()
			if badBlocks {
				return listBadBlocks(f, stdout, stderr)
			}
			return report(f, prog, header, groups, frag, n, stdout, stderr)
		}
		dev.Close()
	}
	// As dumpe2fs says it.
	fmt.Fprintf(stderr, "%s: %s while trying to open %s\n", prog, errText(err), device)
	fmt.Fprintln(stdout, "Couldn't find valid filesystem superblock.")
	return 1
}

// report prints the -h, -g and -f reports.
func report(f *fs.FS, prog string, header, groups, frag bool, n int, stdout, stderr io.Writer) int {
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
		// dumpe2fs -h's bad-block line, when there are any.
		if list, err := readBadBlocks(f); err != nil {
			fail("bad blocks", err)
		} else if len(list) > 0 {
			fmt.Fprint(stdout, "Bad blocks: ")
			for i, b := range list {
				if i > 0 {
					fmt.Fprint(stdout, ", ")
				}
				fmt.Fprint(stdout, b)
			}
			fmt.Fprintln(stdout)
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

// listBadBlocks prints the bad-block inode's list, one block a line, as
// dumpe2fs -b does.
func listBadBlocks(f *fs.FS, stdout, stderr io.Writer) int {
	list, err := readBadBlocks(f)
	if err != nil {
		fmt.Fprintf(stderr, "ext2fs_read_bb_inode: %s\n", err)
		return 1
	}
	bw := bufio.NewWriter(stdout)
	for _, b := range list {
		fmt.Fprintf(bw, "%d\n", b)
	}
	if err := bw.Flush(); err != nil {
		return 1
	}
	return 0
}

// readBadBlocks returns the blocks the bad-block inode lists, sorted
// (ext2fs_read_bb_inode).
func readBadBlocks(f *fs.FS) ([]uint64, error) {
	buf := make([]byte, f.InodeSize)
	if err := f.ReadInode(ondisk.BadBlocksIno, buf, make([]byte, f.BlockSize)); err != nil {
		return nil, errors.New(errText(err))
	}
	w := &ext2fs.BBWalk{Fsys: &ext2fs.Filsys{FS: f, IO: readOnlyIO{f}}, Budget: 1 << 24}
	var list ext2fs.BadBlocksList
	w.ReadBBInode(ondisk.Inode(buf), &list)
	if w.Err != nil {
		return nil, w.Err
	}
	return list.Sorted(), nil
}

// readOnlyIO reads through the filesystem; the walks fsinfo makes never
// write.
type readOnlyIO struct{ f *fs.FS }

func (r readOnlyIO) ReadBlock(blk uint64, buf []byte) error { return r.f.ReadBlock(blk, buf) }
func (readOnlyIO) WriteBlock(uint64, []byte)                { panic("fsinfo: write") }
func (readOnlyIO) WriteInode(uint32, ondisk.Inode)          { panic("fsinfo: write") }

// errText is com_err's wording for an open failure, as dumpe2fs prints
// it ("Bad magic number in super-block"), not the Go error chain.
func errText(err error) string {
	var oe *blockdev.OpenError
	if errors.As(err, &oe) {
		if text, ok := oe.ComErr(); ok {
			return text
		}
	}
	switch {
	case errors.Is(err, fs.ErrBadMagic):
		return "Bad magic number in super-block"
	case errors.Is(err, fs.ErrSbCsum):
		return "Superblock checksum does not match superblock"
	case errors.Is(err, fs.ErrShortRead):
		return "Attempt to read block from filesystem resulted in short read"
	case errors.Is(err, fs.ErrCorruptSuper):
		return "The ext2 superblock is corrupt"
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		t := errno.Error()
		return strings.ToUpper(t[:1]) + t[1:]
	}
	return strings.TrimPrefix(err.Error(), "fs: ")
}
