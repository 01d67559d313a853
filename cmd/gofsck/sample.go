package main

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"os"
)

// sampleImage is a small ext4 image damaged on purpose (see
// sample/mksample.sh): `gofsck --sample` checks a copy of it.
//
//go:embed sample/damaged.img.gz
var sampleImage []byte

// runSample copies the embedded sample image to a temporary file and checks
// it read-only, so that a fresh clone can show what gofsck reports.
func runSample(prog string, stdout, stderr io.Writer) int {
	zr, err := gzip.NewReader(bytes.NewReader(sampleImage))
	if err != nil {
		fmt.Fprintf(stderr, "%s: embedded sample: %v\n", prog, err)
		return 8
	}
	tmp, err := os.CreateTemp("", "gofsck-sample-*.img")
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 8
	}
	defer os.Remove(tmp.Name())
	// The image is 4 MiB; limit the copy so a bad embed cannot fill the disk.
	if _, err := io.Copy(tmp, io.LimitReader(zr, 64<<20)); err != nil {
		tmp.Close()
		fmt.Fprintf(stderr, "%s: writing %s: %v\n", prog, tmp.Name(), err)
		return 8
	}
	tmp.Close()
	fmt.Fprintf(stdout, "Checking the embedded damaged sample image (copied to %s):\n  %s -fn %s\n\n", tmp.Name(), prog, tmp.Name())
	return run([]string{prog, "-fn", tmp.Name()}, stdout, stderr)
}
