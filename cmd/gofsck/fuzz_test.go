package main

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"gofsck/internal/testfs"
)

// Limits of one fuzzed repair run (gofsck -fy, then gofsck -fn).
const (
	repairTimeLimit = 20 * time.Second
	repairHeapLimit = 512 << 20
)

// runBounded runs gofsck in process with args, failing t when it panics,
// uses more than repairTimeLimit of CPU time per worker (the process's
// CPU time, which a loaded machine does not stretch; a run blocked without
// using the CPU is caught by testfs.WallBackstop) or grows the heap past
// repairHeapLimit. It returns the exit code and output.
func runBounded(t *testing.T, args ...string) (int, string) {
	t.Helper()
	type result struct {
		code  int
		out   string
		panic any
		stack []byte
	}
	done := make(chan result, 1)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r.panic, r.stack = p, debug.Stack()
			}
			done <- r
		}()
		var out bytes.Buffer
		r.code = run(append([]string{"gofsck"}, args...), &out, &out)
		r.out = out.String()
	}()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	cpu0 := testfs.ProcessCPU()
	deadline := time.NewTimer(testfs.WallBackstop(repairTimeLimit))
	defer deadline.Stop()
	for {
		select {
		case r := <-done:
			if r.panic != nil {
				t.Fatalf("gofsck %v panicked: %v\n%s", args, r.panic, r.stack)
			}
			return r.code, r.out
		case <-tick.C:
			runtime.ReadMemStats(&ms)
			if grow := ms.HeapInuse - min(ms.HeapInuse, base); grow > repairHeapLimit {
				t.Fatalf("gofsck %v: heap grew by %d MiB (limit %d MiB)", args, grow>>20, repairHeapLimit>>20)
			}
			if used := testfs.ProcessCPU() - cpu0; used > 2*repairTimeLimit {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Fatalf("gofsck %v still running after %v of CPU time (limit %v, two workers)\n%s", args, used, 2*repairTimeLimit, buf)
			}
		case <-deadline.C:
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("gofsck %v still running after %v of wall time\n%s", args, testfs.WallBackstop(repairTimeLimit), buf)
		}
	}
}

// FuzzRepair mutates the metadata blocks of two small real images and
// repairs them with gofsck -fy, the whole writable run in process
// (journal recovery, restarts, every fix, the final flush): it must not
// panic, hang or blow up its heap, and the check that follows (-fn) must
// not either, nor write a byte.
func FuzzRepair(f *testing.F) {
	bases := testfs.FuzzBases(f)
	for i, b := range bases {
		f.Add(b.Seed(i))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		img := testfs.ImageFromInput(bases, in)
		if img == nil {
			return
		}
		path := filepath.Join(t.TempDir(), "fuzz.img")
		if err := os.WriteFile(path, img, 0o644); err != nil {
			t.Fatal(err)
		}
		runBounded(t, "-fy", path)
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		runBounded(t, "-fn", path)
		again, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256(after) != sha256.Sum256(again) {
			t.Fatal("gofsck -fn wrote to the image")
		}
	})
}

// TestFuzzRepairBasesClean: the seeds are clean images, which a repair
// leaves clean (exit 0) and a check then finds clean.
func TestFuzzRepairBasesClean(t *testing.T) {
	bases := testfs.FuzzBases(t)
	for i, b := range bases {
		img := testfs.ImageFromInput(bases, b.Seed(i))
		if !bytes.Equal(img, b.Data) {
			t.Fatal("a seed does not rebuild its base image")
		}
		path := filepath.Join(t.TempDir(), "base.img")
		if err := os.WriteFile(path, img, 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out := runBounded(t, "-fy", path); code != 0 {
			t.Errorf("base %d: gofsck -fy exit %d:\n%s", i, code, out)
		}
		if code, out := runBounded(t, "-fn", path); code != 0 {
			t.Errorf("base %d: gofsck -fn exit %d after the repair:\n%s", i, code, out)
		}
	}
}
