package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"gofsck/internal/ondisk"
)

// Limits of one fuzzed repair run (gofsck -fy, then gofsck -fn).
const (
	repairTimeLimit = 20 * time.Second
	repairHeapLimit = 512 << 20
)

// repairBase is a clean image FuzzRepair mutates: the fuzz input
// overwrites its non-zero blocks in order (as FuzzCheck's inputs do).
type repairBase struct {
	data   []byte
	bs     int
	blocks []int
}

var (
	repairBasesOnce sync.Once
	repairBases     []*repairBase
	repairBasesErr  error
)

// loadRepairBases reads FuzzCheck's base images (internal/check/testdata:
// a small ext2 with indirect blocks and an ext4 with extents, inline data,
// htree and xattrs).
func loadRepairBases(t testing.TB) []*repairBase {
	t.Helper()
	repairBasesOnce.Do(func() {
		for _, name := range []string{"ext2", "ext4"} {
			f, err := os.Open(filepath.Join("..", "..", "internal", "check", "testdata", name+".img.gz"))
			if err != nil {
				repairBasesErr = err
				return
			}
			zr, err := gzip.NewReader(f)
			if err != nil {
				f.Close()
				repairBasesErr = err
				return
			}
			data, err := io.ReadAll(zr)
			f.Close()
			if err != nil {
				repairBasesErr = err
				return
			}
			sb, err := ondisk.NewSuperblock(data[ondisk.SuperblockOffset:])
			if err != nil {
				repairBasesErr = err
				return
			}
			b := &repairBase{data: data, bs: sb.BlockSize()}
			zero := make([]byte, b.bs)
			for blk := 0; (blk+1)*b.bs <= len(data); blk++ {
				if !bytes.Equal(data[blk*b.bs:(blk+1)*b.bs], zero) {
					b.blocks = append(b.blocks, blk)
				}
			}
			repairBases = append(repairBases, b)
		}
	})
	if repairBasesErr != nil {
		t.Fatalf("loading the fuzz base images: %v", repairBasesErr)
	}
	return repairBases
}

// seed is the input that rebuilds base i unchanged.
func (b *repairBase) seed(i int) []byte {
	in := []byte{byte(i)}
	for _, blk := range b.blocks {
		in = append(in, b.data[blk*b.bs:(blk+1)*b.bs]...)
	}
	return in
}

// image rebuilds an image from a fuzz input: in[0] picks the base, the
// rest overwrites its non-zero blocks in order.
func repairImage(bases []*repairBase, in []byte) []byte {
	if len(in) == 0 {
		return nil
	}
	b := bases[int(in[0])%len(bases)]
	img := bytes.Clone(b.data)
	rest := in[1:]
	for _, blk := range b.blocks {
		if len(rest) == 0 {
			break
		}
		n := copy(img[blk*b.bs:(blk+1)*b.bs], rest)
		rest = rest[n:]
	}
	return img
}

// runBounded runs gofsck in process with args, failing t when it panics,
// outlives repairTimeLimit or grows the heap past repairHeapLimit. It
// returns the exit code and output.
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
	deadline := time.NewTimer(repairTimeLimit)
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
		case <-deadline.C:
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("gofsck %v still running after %v\n%s", args, repairTimeLimit, buf)
		}
	}
}

// FuzzRepair mutates the metadata blocks of two small real images and
// repairs them with gofsck -fy, the whole writable run in process
// (journal recovery, restarts, every fix, the final flush): it must not
// panic, hang or blow up its heap, and the check that follows (-fn) must
// not either, nor write a byte.
func FuzzRepair(f *testing.F) {
	bases := loadRepairBases(f)
	for i, b := range bases {
		f.Add(b.seed(i))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		img := repairImage(bases, in)
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
	bases := loadRepairBases(t)
	for i, b := range bases {
		img := repairImage(bases, b.seed(i))
		if !bytes.Equal(img, b.data) {
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
