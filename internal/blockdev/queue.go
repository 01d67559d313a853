package blockdev

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// QueueInfo is what sysfs says of a block device.
type QueueInfo struct {
	// Known is false when sysfs has no queue for it (FUSE, tmpfs, NFS).
	Known      bool
	Rotational bool
	// Requests is the request queue's depth (nr_requests).
	Requests int
	// MaxRead is the largest request the device takes (max_sectors_kb),
	// in bytes; 0 when unknown.
	MaxRead int64
}

// Queue reads a block device's queue attributes from /sys/dev/block.
// For an image file it knows nothing: the disk under its filesystem is
// seen through the page cache (and in a virtual machine, the host's), and
// its sysfs values say little of how the file's reads are served.
func (d *File) Queue() QueueInfo {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(d.f.Fd()), &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFBLK {
		return QueueInfo{}
	}
	return queueInfo("/sys", major(st.Rdev), minor(st.Rdev))
}

// queueInfo reads MAJ:MIN's queue under sysroot; a partition's queue is
// its disk's.
func queueInfo(sysroot string, maj, min uint64) QueueInfo {
	dir := filepath.Join(sysroot, "dev", "block", fmt.Sprintf("%d:%d", maj, min))
	q := filepath.Join(dir, "queue")
	if _, err := os.Stat(q); err != nil {
		// A partition: its directory (a link resolved first, since
		// Join cleans ".." lexically) sits in its disk's.
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return QueueInfo{}
		}
		q = filepath.Join(filepath.Dir(real), "queue")
		if _, err := os.Stat(q); err != nil {
			return QueueInfo{}
		}
	}
	read := func(name string) (int64, bool) {
		b, err := os.ReadFile(filepath.Join(q, name))
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return v, err == nil && v >= 0
	}
	info := QueueInfo{Known: true}
	if v, ok := read("rotational"); ok {
		info.Rotational = v == 1
	}
	if v, ok := read("nr_requests"); ok && v <= 1<<20 {
		info.Requests = int(v)
	}
	if v, ok := read("max_sectors_kb"); ok && v <= 1<<20 {
		info.MaxRead = v << 10
	}
	return info
}

// minor is a device number's minor half (major is in mounted.go).
func minor(dev uint64) uint64 { return dev&0xff | (dev>>12)&^0xff }

// ProbeResult is what Probe measured.
type ProbeResult struct {
	// One is the time of one small read (the faster of two); Many is
	// the median completion time of probeReads small reads issued at
	// once, at other offsets (the smaller of two batches').
	One, Many time.Duration
}

// probeReads is how many reads Probe issues at once.
const probeReads = 8

// Serial reports whether the device took the concurrent reads one after
// another: the median of them took more than 2.5 times as long as one
// read (a device serving one at a time completes the k-th after about k
// reads' time, its median after 4.5), and one read was slow enough to come
// from a device rather than a cache. The median keeps one slow read from
// deciding.
func (p ProbeResult) Serial() bool {
	return p.One >= 50*time.Microsecond && 2*p.Many > 5*p.One
}

// Probe measures whether the device serves reads concurrently, for a
// device sysfs says nothing about: two 4 KiB reads one after the other,
// then twice probeReads at once, all at offsets spread over the device
// (so that one read's read-ahead does not serve another). One is the
// faster single read, Many the smaller of the two batches' medians: a
// loaded machine can only make a concurrent device look serial, by
// delaying reads, so the faster measurements are the truer. It costs a
// few reads' latency.
func (d *File) Probe() ProbeResult {
	const n = 4096
	const reads = 2*probeReads + 2
	if d.size < 4*reads*n {
		return ProbeResult{}
	}
	var bufs [reads][n]byte
	pread := func(i int) time.Duration {
		off := (d.size / (2 * reads) * int64(2*i+1)) &^ (n - 1)
		t := time.Now()
		syscall.Syscall6(syscall.SYS_PREAD64, d.f.Fd(), uintptr(unsafe.Pointer(&bufs[i][0])), n, uintptr(off), 0, 0)
		return time.Since(t)
	}
	var r ProbeResult
	r.One = min(pread(0), pread(1))
	for batch := 0; batch < 2; batch++ {
		var wg sync.WaitGroup
		var done [probeReads]time.Duration
		for i := range done {
			wg.Add(1)
			go func() {
				defer wg.Done()
				done[i] = pread(2 + batch*probeReads + i)
			}()
		}
		wg.Wait()
		sort.Slice(done[:], func(a, b int) bool { return done[a] < done[b] })
		m := (done[probeReads/2-1] + done[probeReads/2]) / 2
		if batch == 0 || m < r.Many {
			r.Many = m
		}
	}
	return r
}

// DefaultReadaheadDepth is the reads kept in flight on a device that
// serves requests concurrently: enough for an NVMe drive or an array, and
// for network storage with a few milliseconds per read.
const DefaultReadaheadDepth = 32

// Read sizes: a parallel device gets reads of at most parallelRead, so
// that a long range becomes several reads served at once; a serial one
// gets the longest merges it takes, up to serialRead.
const (
	parallelRead = 128 << 10
	serialRead   = 1 << 20
)

// ReadaheadPlan is the read-ahead chosen for a device, and why.
type ReadaheadPlan struct {
	Depth   int
	MaxRead int64
	Mode    ReadaheadMode
	// Source says where the decision came from: "io_depth", "sysfs" or
	// "measured".
	Source string
	Probe  ProbeResult // when measured
}

// PlanReadahead chooses the read-ahead for the device. depth > 0 is the
// caller's choice (1 means a serial device). Otherwise a block device that
// sysfs says is not rotational is parallel; a rotational one, an image
// file or a device sysfs knows nothing of is measured (Probe).
func (d *File) PlanReadahead(depth int) ReadaheadPlan {
	q := d.Queue()
	limit := func(n int64) int64 {
		if q.MaxRead > 0 {
			return min(n, q.MaxRead)
		}
		return n
	}
	serial := func(p ReadaheadPlan) ReadaheadPlan {
		// Two reads: the device never waits for the next request.
		p.Depth, p.MaxRead, p.Mode = 2, limit(serialRead), Serial
		return p
	}
	parallel := func(p ReadaheadPlan, n int) ReadaheadPlan {
		p.Depth, p.MaxRead, p.Mode = n, limit(parallelRead), Parallel
		return p
	}
	switch {
	case depth == 1:
		return serial(ReadaheadPlan{Source: "io_depth"})
	case depth > 1:
		return parallel(ReadaheadPlan{Source: "io_depth"}, depth)
	case q.Known && !q.Rotational:
		return parallel(ReadaheadPlan{Source: "sysfs"}, DefaultReadaheadDepth)
	}
	// A rotational disk is measured too: virtual machines' disks say
	// rotational whatever serves them, and an array of disks serves many
	// reads at once.
	p := ReadaheadPlan{Source: "measured", Probe: d.Probe()}
	if q.Rotational {
		p.Source = "sysfs: rotational, measured"
	}
	if p.Probe.Serial() {
		return serial(p)
	}
	return parallel(p, DefaultReadaheadDepth)
}
