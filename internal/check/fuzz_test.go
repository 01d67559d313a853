package check_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"gofsck/internal/blockdev"
	"gofsck/internal/check"
	"gofsck/internal/fs"
	"gofsck/internal/problem"
	"gofsck/internal/testfs"
)

// Limits every whole-check run in these tests must stay within.
const (
	checkTimeLimit  = 10 * time.Second
	checkHeapLimit  = 512 << 20 // heap growth over the run, sampled
	checkAllocLimit = 1 << 30   // bytes allocated by the run
)

// The directory block list is the known amplification: every hole before
// a directory's last block is an entry, as in e2fsck. It is capped at one
// entry per filesystem block plus 1M (dblistCap); before the cap the
// fuzzer found a 2 MiB image allocating 4.7 GiB (testdata/regress/
// dir_holes_past_blocks_count).

// checkOutcome is what a bounded run of the whole check produced.
type checkOutcome struct {
	Stage    string // "open", "features", "super", "run", "done"
	Err      error  // open or run error
	Invalid  bool   // the reporter says the filesystem still has errors
	Aborted  bool
	Problems int // problems reported
	Elapsed  time.Duration
	PeakHeap uint64 // highest sampled heap growth over the run
	Alloc    uint64 // bytes allocated during the run (process-wide)
}

// Corrupt reports whether the run reached a non-zero verdict: the image
// could not be opened, or problems were found, or the run was aborted.
func (o checkOutcome) Corrupt() bool {
	return o.Stage != "done" || o.Err != nil || o.Invalid || o.Aborted || o.Problems > 0
}

// countingSink counts the problems that reach the reporter.
type countingSink struct {
	*problem.Reporter
	n int
}

func (s *countingSink) Fix(p problem.Problem) bool {
	s.n++
	return s.Reporter.Fix(p)
}

// checkImage runs what `gofsck -fn` runs (open with the relaxed retry,
// descriptor check, feature check, superblock checks, passes 1-5) on img in
// memory, with a reporter in ModeNo writing to io.Discard. It fails t when
// the run panics, outlives checkTimeLimit or its heap grows past
// checkHeapLimit.
func checkImage(t testing.TB, img []byte) checkOutcome {
	t.Helper()
	return checkImageLimit(t, img, checkAllocLimit, checkTimeLimit)
}

// checkImageLimit is checkImage with a limit on the bytes the run may
// allocate (garbage included; 0: no limit) and on its duration.
func checkImageLimit(t testing.TB, img []byte, allocLimit uint64, timeLimit time.Duration) checkOutcome {
	t.Helper()
	type result struct {
		out   checkOutcome
		panic any
		stack []byte
	}
	done := make(chan result, 1)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseHeap, baseAlloc := ms.HeapInuse, ms.TotalAlloc
	start := time.Now()
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r.panic, r.stack = p, debug.Stack()
			}
			done <- r
		}()
		r.out = runWholeCheck(img, timeLimit)
	}()
	var peak uint64
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	// The limit is on CPU time, which a loaded machine does not stretch
	// (CI runs packages side by side): the process's, at most twice the
	// limit for the check's two workers. A check blocked without using
	// the CPU is caught by the wall-clock backstop.
	cpu0 := testfs.ProcessCPU()
	deadline := time.NewTimer(testfs.WallBackstop(timeLimit))
	defer deadline.Stop()
	for {
		select {
		case r := <-done:
			if r.panic != nil {
				t.Fatalf("check panicked: %v\n%s", r.panic, r.stack)
			}
			r.out.Elapsed = time.Since(start)
			runtime.ReadMemStats(&ms)
			r.out.PeakHeap = max(peak, ms.HeapInuse-min(ms.HeapInuse, baseHeap))
			r.out.Alloc = ms.TotalAlloc - baseAlloc
			if allocLimit > 0 && r.out.Alloc > allocLimit {
				t.Fatalf("check allocated %d MiB (limit %d MiB)", r.out.Alloc>>20, allocLimit>>20)
			}
			return r.out
		case <-tick.C:
			runtime.ReadMemStats(&ms)
			grow := ms.HeapInuse - min(ms.HeapInuse, baseHeap)
			peak = max(peak, grow)
			if grow > checkHeapLimit || allocLimit > 0 && ms.TotalAlloc-baseAlloc > 4*allocLimit {
				t.Fatalf("check heap grew by %d MiB and allocated %d MiB (limits %d, %d MiB)",
					grow>>20, (ms.TotalAlloc-baseAlloc)>>20, checkHeapLimit>>20, 4*allocLimit>>20)
			}
			if used := testfs.ProcessCPU() - cpu0; used > 2*timeLimit {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Fatalf("check still running after %v of CPU time (limit %v, two workers)\n%s", used, 2*timeLimit, buf)
			}
		case <-deadline.C:
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("check still running after %v of wall time\n%s", testfs.WallBackstop(timeLimit), buf)
		}
	}
}

func runWholeCheck(img []byte, timeLimit time.Duration) checkOutcome {
	dev := &blockdev.Mem{Data: img, ReadOnly: true}
	f, err := fs.Open(dev, fs.Options{})
	if err != nil && (errors.Is(err, fs.ErrCorruptSuper) || errors.Is(err, fs.ErrBadDescSize)) {
		f, err = fs.Open(dev, fs.Options{Relaxed: true})
	}
	if err != nil {
		return checkOutcome{Stage: "open", Err: err}
	}
	descErr := f.CheckDesc()
	if err := f.CheckFeatures(); err != nil {
		return checkOutcome{Stage: "features", Err: err}
	}
	ropt := problem.Options{Mode: problem.ModeNo, Device: "fuzz"}
	copt := check.Options{ReadOnly: true, Now: time.Now(), Workers: 2}
	chk := check.New(f, problem.NewReporter(io.Discard, ropt), copt)
	ropt.Namer = chk
	sink := &countingSink{Reporter: problem.NewReporter(io.Discard, ropt)}
	chk = check.New(f, sink, copt)
	out := checkOutcome{Stage: "super", Err: descErr}
	if msg := chk.CheckJournal(); msg != "" {
		out.Aborted = true
		return out
	}
	chk.CheckSuper(uint64(dev.Size()) >> f.BlockBits)
	if sink.Aborted() {
		out.Aborted, out.Problems = true, sink.n
		return out
	}
	chk.CheckResizeInode()
	out.Stage = "run"
	ctx, cancel := context.WithTimeout(context.Background(), testfs.WallBackstop(timeLimit))
	defer cancel()
	err = chk.Run(ctx)
	if err != nil {
		out.Err = err
	} else {
		out.Stage = "done"
	}
	st := sink.Status()
	out.Invalid, out.Aborted, out.Problems = st.Invalid || chk.SuperInvalid(), st.Aborted, sink.n
	return out
}

// TestFuzzBasesClean makes sure the fuzz seeds are clean images: the
// checker must find nothing wrong in them.
func TestFuzzBasesClean(t *testing.T) {
	for i, b := range testfs.FuzzBases(t) {
		t.Run(b.Name, func(t *testing.T) {
			img := testfs.ImageFromInput(testfs.FuzzBases(t), b.Seed(i))
			if !bytes.Equal(img, b.Data) {
				t.Fatal("seed does not rebuild the base image")
			}
			out := checkImage(t, img)
			if out.Corrupt() {
				t.Errorf("clean base image %s: %+v", b.Name, out)
			}
		})
	}
}

// FuzzCheck mutates the metadata blocks of two small real images (ext2 with
// block maps and indirect blocks, ext4 with extents, inline data, htree and
// xattrs) and runs the whole read-only check: it must not panic, must
// finish within checkTimeLimit and keep its heap under checkHeapLimit.
func FuzzCheck(f *testing.F) {
	bs := testfs.FuzzBases(f)
	for i, b := range bs {
		f.Add(b.Seed(i))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		img := testfs.ImageFromInput(bs, in)
		if img == nil {
			return
		}
		checkImage(t, img)
	})
}

// TestRegressions runs the check on every image in testdata/regress: inputs
// that once crashed, hung or blew up the checker, named after what they
// broke.
func TestRegressions(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "regress", "*.img.gz"))
	for _, p := range files {
		name := strings.TrimSuffix(filepath.Base(p), ".img.gz")
		t.Run(name, func(t *testing.T) {
			img, err := testfs.ReadGz(p)
			if err != nil {
				t.Fatal(err)
			}
			out := checkImage(t, img)
			if !out.Corrupt() {
				t.Errorf("%s: checker found nothing wrong: %+v", name, out)
			}
		})
	}
}

// saveRegression writes a mutated image as testdata/regress/NAME.img.gz; it
// is used by hand when turning a fuzz crasher into a named regression.
func saveRegression(t testing.TB, name string, img []byte) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(img)
	zw.Close()
	p := filepath.Join("testdata", "regress", name+".img.gz")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", p)
}

var _ = fmt.Sprint
