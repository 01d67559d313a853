package main

import (
	"fmt"
	"strings"
	"time"

	"gofsck/internal/blockdev"
)

// readaheadRun is the read-ahead of a run: the plan chosen for the device
// and the device, for what it did.
type readaheadRun struct {
	plan  raPlan
	file  *blockdev.File
	start time.Time
}

// startReadahead gives the device the read-ahead -E io_depth asks for, or
// the one chosen for it (blockdev.PlanReadahead); nil with io_depth=0,
// which leaves read-ahead to the kernel's hints.
func startReadahead(o *options, file *blockdev.File) *readaheadRun {
	if o.ext.ioDepth < 0 {
		return nil
	}
	p := file.PlanReadahead(o.ext.ioDepth)
	file.SetReadahead(p.Depth, p.MaxRead, p.Mode)
	return &readaheadRun{plan: raPlan(p), file: file, start: time.Now()}
}

// window is how many bytes the passes hint ahead of their workers: twice
// what the read-ahead has in flight when it is full, so that it always
// has the next reads queued.
func (r *readaheadRun) window() int64 {
	return 2 * int64(r.plan.Depth) * r.plan.MaxRead
}

// raPlan prints a plan for -t.
type raPlan blockdev.ReadaheadPlan

func (p raPlan) String() string {
	s := fmt.Sprintf("%d reads of up to %dk in flight, %s (%s", p.Depth, p.MaxRead>>10, p.Mode, p.Source)
	if p.Probe.One > 0 {
		s += fmt.Sprintf(": one read %s, 8 at once %s each (median)", asciiDuration(p.Probe.One), asciiDuration(p.Probe.Many))
	}
	return s + ")"
}

// asciiDuration is d to the microsecond, spelt in ASCII ("19us", not Go's
// "19µs"): e2fsck's -t output is ASCII, and so is the rest of gofsck's,
// which logs and terminals in the C locale show as it is.
func asciiDuration(d time.Duration) string {
	return strings.Replace(d.Round(time.Microsecond).String(), "µs", "us", 1)
}

// done says what the read-ahead did: reads, megabytes and the average
// number in flight over the run.
func (r *readaheadRun) done() string {
	st := r.file.ReadaheadStats()
	wall := time.Since(r.start)
	avg := 0.0
	if wall > 0 {
		avg = float64(st.Busy) / float64(wall)
	}
	return fmt.Sprintf("%d reads, %dMB, %.1f in flight on average, %d hints dropped, %d skipped as cached", st.Reads, (st.Bytes+(1<<20)-1)>>20, avg, st.Dropped, st.Skipped)
}
