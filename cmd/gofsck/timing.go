package main

import (
	"fmt"
	"io"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"gofsck/internal/blockdev"
	"gofsck/internal/check"
)

// resources is a snapshot of time, CPU and I/O used, like e2fsck's
// resource_track.
type resources struct {
	wall      time.Time
	user, sys time.Duration
	// serial is the CPU time (user+sys) of the calling OS thread. Taken
	// from the goroutine that runs the check while it is locked to its
	// thread (lockCheckThread), the difference between two snapshots is
	// the CPU the pass spent outside its workers: the serial part that
	// more CPUs cannot shorten.
	serial     time.Duration
	read, wrtn uint64
}

func snapshot(dev blockdev.Device) resources {
	var ru syscall.Rusage
	var thread unix.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	unix.Getrusage(unix.RUSAGE_THREAD, &thread)
	r := resources{
		wall:   time.Now(),
		user:   time.Duration(ru.Utime.Nano()),
		sys:    time.Duration(ru.Stime.Nano()),
		serial: time.Duration(thread.Utime.Nano() + thread.Stime.Nano()),
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
	if t.perPass {
		cpu, serial := (now.user-since.user)+(now.sys-since.sys), now.serial-since.serial
		fmt.Fprintf(t.out, "%sParallel: %s\n", label, parallelism(cpu, serial, now.wall.Sub(since.wall)))
	}
}

// parallelism describes how much of a stretch of the check ran in
// parallel (e2fsck prints no such line): the CPU time of all threads
// over the wall time, and the serial part's CPU time (serial, the
// check's own goroutine) with its share of the CPU. By Amdahl's law a
// stretch can run at most cpu/serial times faster than on one CPU however
// many are added.
func parallelism(cpu, serial, wall time.Duration) string {
	ratio, share := 0.0, 0.0
	if wall > 0 {
		ratio = cpu.Seconds() / wall.Seconds()
	}
	if cpu > 0 {
		share = 100 * min(serial.Seconds()/cpu.Seconds(), 1)
	}
	return fmt.Sprintf("cpu %.2f over real %.2f (%.2fx), serial cpu %.2f (%.0f%%)",
		cpu.Seconds(), wall.Seconds(), ratio, serial.Seconds(), share)
}

// lockCheckThread locks the calling goroutine, the one that runs the
// check, to its OS thread for the rest of the run, so that snapshot's
// thread CPU time is the check's serial part. The check's own goroutine
// replays the workers' results in order and runs passes 3 and 4; when it
// waits for a worker the thread sleeps and its CPU time stands still.
// It returns the function that unlocks.
func lockCheckThread() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
