package main

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
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
	// The copy is removed however the run ends: Ctrl-C and SIGTERM end
	// run, which returns; a reader that goes away (gofsck --sample |
	// head) would kill the process with SIGPIPE at the next write, and a
	// hangup kill it too, before the deferred removal. With SIGPIPE
	// caught the writes fail with EPIPE instead and the run ends; a
	// hangup removes the copy and is raised again.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGPIPE, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		for sig := range sigs {
			if sig == syscall.SIGHUP {
				os.Remove(tmp.Name())
				signal.Reset(syscall.SIGHUP)
				syscall.Kill(os.Getpid(), syscall.SIGHUP)
			}
		}
	}()
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
