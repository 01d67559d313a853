package main

import (
	"os"
	"runtime/pprof"
)

// startProfile writes a CPU profile to $GOFSCK_CPUPROFILE when it is set (a
// developer aid for the benchmarks; not an e2fsck option). It returns the
// function that stops it.
func startProfile() func() {
	path := os.Getenv("GOFSCK_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
