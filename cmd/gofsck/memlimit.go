package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	"gofsck/internal/check"
	"gofsck/internal/problem"
)

// memoryBudget returns the bytes a check may use: -E memory_limit when
// given, else what the machine can give now (MemAvailable, bounded by the
// cgroup's memory.max less its memory.current). 0 means unknown: no limit.
func memoryBudget(o *options) uint64 {
	if o.ext.memLimit > 0 {
		return o.ext.memLimit
	}
	avail := meminfoAvailable("/proc/meminfo")
	if lim, cur := cgroupValue("/sys/fs/cgroup/memory.max"), cgroupValue("/sys/fs/cgroup/memory.current"); lim > 0 && lim > cur {
		if avail == 0 || lim-cur < avail {
			avail = lim - cur
		}
	}
	return avail
}

// meminfoAvailable reads MemAvailable (bytes) from a meminfo file; 0 when
// absent.
func meminfoAvailable(path string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil || kb > 1<<44 {
			return 0
		}
		return kb << 10
	}
	return 0
}

// cgroupValue reads a cgroup v2 byte count; 0 when absent or "max".
func cgroupValue(path string) uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// parseSize parses memory_limit's value: a byte count with an optional
// k, m, g or t suffix (powers of 1024).
func parseSize(s string) (uint64, bool) {
	mult := uint64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		case 't', 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			s = s[:n-1]
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v == 0 || v > (1<<62)/mult {
		return 0, false
	}
	return v * mult, true
}

// overBudget reports (and prints why) when the estimate of a check's large
// structures exceeds the budget: the check must not start, since running
// out of memory halfway would end it in a runtime crash.
func overBudget(o *options, est check.MemoryEstimate, budget uint64, name string, stderr io.Writer) bool {
	if budget == 0 || est.Total() <= budget {
		return false
	}
	fmt.Fprintf(stderr, "%s: Memory allocation failed: checking %s needs about %dM (inode maps %dM, block maps %dM, pass 5 maps %dM, descriptors %dM), more than the %dM available",
		o.prog, name, mib(est.Total()), mib(est.InodeMaps), mib(est.BlockMaps), mib(est.Pass5Maps), mib(est.Descriptors), mib(budget))
	if o.ext.memLimit > 0 {
		fmt.Fprintf(stderr, " (-E memory_limit)")
	}
	fmt.Fprintf(stderr, "\n%s: aborted\n", o.prog)
	return true
}

func mib(v uint64) uint64 { return (v + 1<<20 - 1) >> 20 }

// memoryWatch ends the run with exit 8 when the process's memory passes
// the budget while the check runs, before anything is written: the runtime
// would otherwise crash with "out of memory" later. It is disarmed before
// a repair's writes begin, which are then allowed to finish.
type memoryWatch struct {
	mu       sync.Mutex
	disarmed bool // mu protects disarmed: the watch exits holding mu.
	stop     chan struct{}
}

// watchMemory starts the watch (nil when there is no budget). The Go
// runtime is also told the budget, so that it collects harder as use
// approaches it.
func watchMemory(o *options, budget uint64, name string, stderr io.Writer) *memoryWatch {
	if budget == 0 {
		return nil
	}
	debug.SetMemoryLimit(int64(min(budget, 1<<62)))
	w := &memoryWatch{stop: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 || sample[1].Value.Kind() != metrics.KindUint64 {
				return
			}
			used := sample[0].Value.Uint64() - sample[1].Value.Uint64()
			if used <= budget {
				continue
			}
			w.mu.Lock()
			if !w.disarmed {
				fmt.Fprintf(stderr, "%s: Memory allocation failed: checking %s uses %dM, more than the %dM available; nothing was written\n%s: aborted\n",
					o.prog, name, mib(used), mib(budget), o.prog)
				os.Exit(problem.ExitError)
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// disarm keeps the watch from ending the run from now on.
func (w *memoryWatch) disarm() {
	if w != nil {
		w.mu.Lock()
		w.disarmed = true
		w.mu.Unlock()
	}
}

// end stops the watch.
func (w *memoryWatch) end() {
	if w != nil {
		w.disarm()
		close(w.stop)
	}
}
