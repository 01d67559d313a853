package main

import (
	"fmt"
	"io"
	"runtime"
	"syscall"
	"time"

	"gofsck/internal/blockdev"
	"gofsck/internal/check"
)

// resources is a snapshot of time, CPU and I/O used, like e2fsck's
// resource_track.
type resources struct {
	wall       time.Time
	user, sys  time.Duration
	read, wrtn uint64
}

func snapshot(dev blockdev.Device) resources {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	r := resources{
		wall: time.Now(),
		user: time.Duration(ru.Utime.Nano()),
		sys:  time.Duration(ru.Stime.Nano()),
	}
	if dev != nil {
		st := dev.Stats()
		r.read, r.wrtn = st.ReadBytes, st.WriteBytes
	}
	return r
}

// timer prints e2fsck's -t output: with -t -t a report after every pass
// (and "Peak memory" at the start of pass 3), and the totals at the end.
type timer struct {
	out     io.Writer
	dev     blockdev.Device
	perPass bool
	start   resources
	pass    resources
	// estimate, printed before pass 1, is what the check's large
	// structures will take (e2fsck prints no such line).
	estimate check.MemoryEstimate
	// ra, when set, adds the read-ahead's plan before pass 1 and what it
	// did to the totals (e2fsck prints no such lines).
	ra *readaheadRun
}

func newTimer(out io.Writer, dev blockdev.Device, perPass bool) *timer {
	now := snapshot(dev)
	return &timer{out: out, dev: dev, perPass: perPass, start: now, pass: now}
}

// PassStart implements check.PassObserver.
func (t *timer) PassStart(name string) {
	if name == "Pass 1" && t.estimate.Total() > 0 {
		e := t.estimate
		kb := func(v uint64) uint64 { return (v + 1023) / 1024 }
		fmt.Fprintf(t.out, "Memory estimate: %dk (descriptors %dk, inode maps %dk, block maps %dk, pass 5 maps %dk, link counts %dk, directories %dk, worker buffers %dk, runtime %dk)\n",
			kb(e.Total()), kb(e.Descriptors), kb(e.InodeMaps), kb(e.BlockMaps), kb(e.Pass5Maps), kb(e.LinkCounts), kb(e.Dirs), kb(e.Workers), kb(e.Runtime))
	}
	if name == "Pass 1" && t.ra != nil {
		fmt.Fprintf(t.out, "Read-ahead: %s\n", t.ra.plan)
	}
	t.pass = snapshot(t.dev)
	if t.perPass && name == "Pass 3" {
		t.report("Peak memory: ", t.start, false)
	}
}

// PassEnd implements check.PassObserver.
func (t *timer) PassEnd(name string) {
	if t.perPass {
		t.report(name+": ", t.pass, true)
	}
}

// total prints the unlabelled totals.
func (t *timer) total() {
	t.report("", t.start, true)
	if t.ra != nil {
		fmt.Fprintf(t.out, "Read-ahead: %s\n", t.ra.done())
	}
}

// report prints the memory/time line and, when io, the I/O line. Memory
// is the Go heap as e2fsck prints malloc statistics: "arena/mmap
// (in use/free)" in KiB, here heap obtained from the system / other
// runtime memory (heap in use / heap free).
func (t *timer) report(label string, since resources, io bool) {
	now := snapshot(t.dev)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	kb := func(v uint64) uint64 { return (v + 1023) / 1024 }
	wall := now.wall.Sub(since.wall).Seconds()
	fmt.Fprintf(t.out, "%sMemory used: %dk/%dk (%dk/%dk), time: %5.2f/%5.2f/%5.2f\n", label,
		kb(ms.HeapSys), kb(ms.Sys-ms.HeapSys), kb(ms.HeapAlloc), kb(ms.HeapSys-ms.HeapAlloc),
		wall, (now.user - since.user).Seconds(), (now.sys - since.sys).Seconds())
	if !io {
		return
	}
	const mega = 1 << 20
	r, w := now.read-since.read, now.wrtn-since.wrtn
	rate := 0.0
	if wall > 0 {
		rate = float64(r+w) / mega / wall
	}
	fmt.Fprintf(t.out, "%sI/O read: %dMB, write: %dMB, rate: %.2fMB/s\n", label, (r+mega-1)/mega, (w+mega-1)/mega, rate)
}
