package main

import (
	"os"
	"runtime/pprof"
)

// startProfile writes a CPU profile to $GOFSCK_CPUPROFILE and a heap
// profile (all allocations) to $GOFSCK_MEMPROFILE when they are set
// (developer aids for the benchmarks; not e2fsck options). It returns the
// function that stops them.
func startProfile() func() {
	stopCPU := startCPUProfile()
	mem := os.Getenv("GOFSCK_MEMPROFILE")
	if mem == "" {
		return stopCPU
	}
	return func() {
		stopCPU()
		if f, err := os.Create(mem); err == nil {
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
}

func startCPUProfile() func() {
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
