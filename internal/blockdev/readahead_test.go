package blockdev

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// queued returns a readahead that queues without reading (its workers
// are never started), for checking the queue's rules.
func queued(maxRead int64, mode ReadaheadMode) *readahead {
	r := &readahead{depth: 1, maxRead: maxRead, mode: mode, started: true}
	r.cond.L = &r.mu
	return r
}

func TestReadaheadQueueSplitsAndMerges(t *testing.T) {
	r := queued(64<<10, Parallel)
	r.add(0, 100<<10)             // split: 64k + 36k
	r.add(100<<10, 8<<10)         // touches the 36k read: merged
	r.add(120<<10, 4<<10)         // gap of 12k, 48k wanted of 60k: merged
	r.add(1<<20, 4<<10)           // far: its own read
	r.add(1<<20, 4<<10)           // the same again: dropped as queued
	r.add(2<<20, 4<<10)           // far again
	r.add((2<<20)+(40<<10), 4096) // 8k wanted of 44k: under a quarter, its own read
	want := []raSpan{
		{0, 64 << 10},
		{64 << 10, 60 << 10},
		{1 << 20, 4 << 10},
		{2 << 20, 4 << 10},
		{(2 << 20) + (40 << 10), 4096},
	}
	if !reflect.DeepEqual(r.queue[r.head:], want) {
		t.Errorf("queue = %v, want %v", r.queue[r.head:], want)
	}
}

func TestReadaheadSerialGoesUpAndMerges(t *testing.T) {
	r := queued(1<<20, Serial)
	for _, off := range []int64{900 << 10, 100 << 10, 108 << 10, 5 << 20, 104 << 10, 50 << 10, 3 << 20} {
		r.add(off, 4<<10)
	}
	r.cursor = 60 << 10
	var got []raSpan
	for r.head < len(r.queue) {
		got = append(got, r.nextAscending())
	}
	// From the cursor up: 100k..112k merged (12k of 12k), 900k alone
	// (with it, 16k of 812k would be wanted), 3M, 5M, then wrapping to
	// 50k.
	want := []raSpan{{100 << 10, 12 << 10}, {900 << 10, 4 << 10}, {3 << 20, 4 << 10}, {5 << 20, 4 << 10}, {50 << 10, 4 << 10}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
}

func TestReadaheadQueueIsBounded(t *testing.T) {
	r := queued(4096, Parallel)
	for i := int64(0); i < maxQueue+10; i++ {
		r.add(i*1<<20, 4096)
	}
	if n := len(r.queue) - r.head; n != maxQueue {
		t.Errorf("%d queued, want %d", n, maxQueue)
	}
	if d := r.dropped.Load(); d != 10 {
		t.Errorf("%d dropped, want 10", d)
	}
}

// TestReadaheadReadsHints reads hinted ranges of a real file from many
// goroutines (run it under -race) and stops cleanly on Close. The file is
// in the page cache, so every read is a cached one: the 41 hints stay
// under warmLevel, before which none is skipped.
func TestReadaheadReadsHints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dev.img")
	if err := os.WriteFile(path, make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []ReadaheadMode{Parallel, Serial} {
		d, err := Open(path, true, false)
		if err != nil {
			t.Fatal(err)
		}
		d.SetReadahead(8, 64<<10, mode)
		// The file was just written and is cached: without the probe
		// every hint is read (TestReadaheadSkipsCachedRanges has it).
		d.ra.noProbe.Store(true)
		var want uint64
		for i := int64(0); i < 40; i++ {
			d.Prefetch(i*100<<10, 8<<10)
			want += 8 << 10
		}
		d.Prefetch(4<<20-4096, 1<<20) // cut at the end of the device
		d.Prefetch(8<<20, 4096)       // past it: ignored
		want += 4096
		deadline := time.Now().Add(10 * time.Minute) // catches a hang only
		for d.ReadaheadStats().Bytes < want && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		st := d.ReadaheadStats()
		if st.Bytes < want || st.Dropped != 0 {
			t.Errorf("%s: read-ahead read %d bytes (want at least %d), dropped %d", mode, st.Bytes, want, st.Dropped)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		d.Prefetch(0, 4096) // after Close: dropped, no panic
	}
}

// TestReadaheadSkipsCachedRanges: hints over ranges the page cache holds
// cost a probe each, not a read, where preadv2's RWF_NOWAIT is supported;
// where it is not, they are read as before.
func TestReadaheadSkipsCachedRanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dev.img")
	data := make([]byte, 4<<20)
	for i := range data {
		data[i] = byte(i)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(path); err != nil { // cached, whatever the filesystem
		t.Fatal(err)
	}
	d, err := Open(path, true, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.SetReadahead(4, 64<<10, Parallel)
	ra := d.ra
	for i := int64(0); i < 32; i++ {
		d.Prefetch(i*128<<10, 64<<10)
	}
	deadline := time.Now().Add(10 * time.Minute) // catches a hang only
	for st := d.ReadaheadStats(); st.Skipped+st.Reads < 32 && time.Now().Before(deadline); st = d.ReadaheadStats() {
		time.Sleep(time.Millisecond)
	}
	st := d.ReadaheadStats()
	switch {
	case ra.noProbe.Load():
		t.Logf("RWF_NOWAIT is not supported here: %d reads", st.Reads)
		if st.Reads != 32 {
			t.Errorf("without the probe, %d of 32 hints were read", st.Reads)
		}
	case st.Reads != 0 || st.Skipped != 32:
		t.Errorf("cached ranges: %d read, %d skipped; want 0 and 32", st.Reads, st.Skipped)
	}
}

func TestProbeSerial(t *testing.T) {
	for _, c := range []struct {
		one, many time.Duration
		want      bool
	}{
		{time.Millisecond, 1200 * time.Microsecond, false}, // 8 at once in about one read's time
		{time.Millisecond, 4500 * time.Microsecond, true},  // one after another
		{time.Millisecond, 2400 * time.Microsecond, false},
		{10 * time.Microsecond, 80 * time.Microsecond, false}, // a cache, not a device
	} {
		if got := (ProbeResult{One: c.one, Many: c.many}).Serial(); got != c.want {
			t.Errorf("one %v, many %v: Serial() = %v, want %v", c.one, c.many, got, c.want)
		}
	}
}

func TestQueueInfoFromSysfs(t *testing.T) {
	root := t.TempDir()
	write := func(p, v string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A disk (8:0) and its partition (8:1), whose queue is the disk's:
	// /sys/dev/block/8:1 is a link into the disk's directory.
	disk := filepath.Join(root, "devices", "sda")
	write(filepath.Join(disk, "queue", "rotational"), "1")
	write(filepath.Join(disk, "queue", "nr_requests"), "64")
	write(filepath.Join(disk, "queue", "max_sectors_kb"), "512")
	write(filepath.Join(disk, "sda1", "partition"), "1")
	if err := os.MkdirAll(filepath.Join(root, "dev", "block"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"8:0": disk, "8:1": filepath.Join(disk, "sda1")} {
		if err := os.Symlink(target, filepath.Join(root, "dev", "block", link)); err != nil {
			t.Fatal(err)
		}
	}
	want := QueueInfo{Known: true, Rotational: true, Requests: 64, MaxRead: 512 << 10}
	for _, mm := range [][2]uint64{{8, 0}, {8, 1}} {
		if got := queueInfo(root, mm[0], mm[1]); got != want {
			t.Errorf("%d:%d: %+v, want %+v", mm[0], mm[1], got, want)
		}
	}
	if got := queueInfo(root, 0, 42); got.Known {
		t.Errorf("0:42 (no sysfs entry): %+v, want unknown", got)
	}
}

func TestReadaheadLaterWaitsForTheRunningPass(t *testing.T) {
	r := queued(64<<10, Parallel)
	r.depth = 8
	r.addLater(10<<20, 8<<10)
	r.addLater(10<<20+8<<10, 8<<10) // merged with the one before
	r.add(0, 4096)
	r.add(1<<20, 4096)
	var order []raSpan
	var later []bool
	for i := 0; i < 3; i++ {
		s, l, ok := r.next()
		if !ok {
			t.Fatal("closed")
		}
		order, later = append(order, s), append(later, l)
	}
	want := []raSpan{{0, 4096}, {1 << 20, 4096}, {10 << 20, 16 << 10}}
	if !reflect.DeepEqual(order, want) || !reflect.DeepEqual(later, []bool{false, false, true}) {
		t.Errorf("order %v (later %v), want %v with only the last later", order, later, want)
	}
	// Two of 8 workers may read later ranges at once: the one taken
	// above and one more.
	r.addLater(20<<20, 4096)
	r.addLater(30<<20, 4096)
	if !r.laterOK() {
		t.Fatal("a second later read refused")
	}
	r.next()
	if r.laterOK() {
		t.Error("a third later read allowed with 8 workers")
	}
	r.done(true)
	if !r.laterOK() {
		t.Error("later read refused after one ended")
	}
}

func TestReadaheadPromoteLater(t *testing.T) {
	r := queued(64<<10, Parallel)
	r.add(0, 4096)
	r.next() // in flight
	r.add(1<<20, 4096)
	r.addLater(10<<20, 4096)
	r.addLater(20<<20, 4096)
	r.promote()
	var got []raSpan
	for i := 0; i < 3; i++ {
		s, later, _ := r.next()
		if later {
			t.Errorf("%v still read as a later range", s)
		}
		got = append(got, s)
	}
	want := []raSpan{{10 << 20, 4096}, {20 << 20, 4096}, {1 << 20, 4096}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after promote: %v, want %v", got, want)
	}
}
