// Command freefrag reports free-space fragmentation like e2freefrag:
//
//	freefrag [-c chunksize in kb] [-h] device_name
//
// Its output is e2freefrag 1.47.0's, byte for byte, for an unmounted image
// or device (see internal/freefrag for what is reproduced).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"gofsck/internal/blockdev"
	"gofsck/internal/freefrag"
	"gofsck/internal/fs"
	"gofsck/internal/getopt"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

func usage(prog string, stderr io.Writer) int {
	fmt.Fprintf(stderr, "usage: %s [-c chunksize in kb] [-h] device_name\n", prog)
	return 1
}

// parseChunk is strtoull(s, &end, 0) with the whole string consumed.
func parseChunk(s string) (uint64, bool) {
	neg := false
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	switch {
	case strings.HasPrefix(t, "-"):
		neg, t = true, t[1:]
	case strings.HasPrefix(t, "+"):
		t = t[1:]
	}
	base := 10
	switch {
	case len(t) > 2 && (t[:2] == "0x" || t[:2] == "0X"):
		base, t = 16, t[2:]
	case len(t) > 1 && t[0] == '0':
		base, t = 8, t[1:]
	}
	if t == "" {
		return 0, s != "" && base == 8
	}
	v, err := strconv.ParseUint(t, base, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return ^uint64(0), true
		}
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

func run(args []string, stdout, stderr io.Writer) int {
	prog := args[0]
	opts, operands, err := getopt.Parse(prog, args[1:], "c:h")
	if err != nil {
		fmt.Fprintln(stderr, err)
		return usage(prog, stderr)
	}
	var chunk uint64
	for _, o := range opts {
		switch o.Name {
		case 'c':
			v, ok := parseChunk(o.Arg)
			if !ok {
				fmt.Fprintf(stderr, "%s: bad chunk size '%s'\n", prog, o.Arg)
				return usage(prog, stderr)
			}
			if v&(v-1) != 0 {
				fmt.Fprintf(stderr, "%s: chunk size must be a power of 2.\n", prog)
				return usage(prog, stderr)
			}
			chunk = v * 1024
		case 'h':
			return usage(prog, stderr)
		}
	}
	if len(operands) == 0 {
		fmt.Fprintf(stderr, "%s: missing device name.\n", prog)
		return usage(prog, stderr)
	}
	device := operands[0]
	// A mounted filesystem's bitmaps on disk lag behind what the kernel
	// holds in memory: the counts may be stale. e2freefrag asks the
	// kernel (GETFSMAP) instead; freefrag reads the device, and warns as
	// e2fsck -n does on a mounted device, in e2fsck's words.
	if mf, err := blockdev.CheckIfMounted(device); err == nil {
		switch {
		case mf&blockdev.Mounted != 0:
			fmt.Fprintf(stdout, "Warning!  %s is mounted.\n", device)
		case mf&blockdev.Busy != 0:
			fmt.Fprintf(stdout, "Warning!  %s is in use.\n", device)
		}
	}
	dev, err := blockdev.Open(device, true, false)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v while opening filesystem\n", device, errText(err))
		return 1
	}
	defer dev.Close()
	f, err := fs.Open(dev, fs.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v while opening filesystem\n", device, errText(err))
		return 1
	}
	if chunk != 0 && chunk < uint64(f.BlockSize) {
		fmt.Fprintf(stderr, "%s: chunksize must be greater than or equal to filesystem blocksize.\n", prog)
		return 1
	}
	freefrag.WriteHeader(stdout, device, f.BlockSize)
	bm, err := freefrag.ReadBlockBitmap(f)
	if err != nil {
		msg := freefrag.ErrBitmapRead.Error()
		if errors.Is(err, freefrag.ErrBitmapCsum) {
			msg = freefrag.ErrBitmapCsum.Error()
		}
		fmt.Fprintf(stderr, "%s: %s while reading block bitmap\n", device, msg)
		return 1
	}
	r, err := freefrag.Scan(f, bm, chunk)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	if err := r.Write(stdout); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	return 0
}

// errText gives com_err-like wording for open failures.
func errText(err error) string {
	var oe *blockdev.OpenError
	if errors.As(err, &oe) {
		if text, ok := oe.ComErr(); ok {
			return text
		}
		return oe.Err.Error()
	}
	switch {
	case errors.Is(err, fs.ErrBadMagic):
		return "Bad magic number in super-block"
	case errors.Is(err, fs.ErrSbCsum):
		return "Superblock checksum does not match superblock"
	case errors.Is(err, fs.ErrShortRead):
		return "Attempt to read block from filesystem resulted in short read"
	}
	return strings.TrimPrefix(err.Error(), "fs: ")
}
