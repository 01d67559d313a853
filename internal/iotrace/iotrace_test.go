package iotrace_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gofsck/internal/blockdev"
	"gofsck/internal/dump"
	"gofsck/internal/fs"
	"gofsck/internal/iotrace"
	"gofsck/internal/ondisk"
	"gofsck/internal/testfs"
)

var example = flag.String("example", "", "write an example trace of reading inode tables and directories to this iotrace file")

func TestRecorderConcurrent(t *testing.T) {
	mem := &blockdev.Mem{Data: make([]byte, 1<<20)}
	rec := iotrace.NewLimit(mem, 5000)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			buf := make([]byte, 512)
			for i := 0; i < 1000; i++ {
				rec.ReadAt(buf, int64((g*1000+i)%2048)*512)
			}
		}(g)
	}
	wg.Wait()
	tr := rec.Trace()
	if len(tr.Events) != 5000 || tr.Dropped != 3000 {
		t.Fatalf("%d events, %d dropped; want 5000, 3000", len(tr.Events), tr.Dropped)
	}
	if st := mem.Stats(); st.ReadOps != 8000 {
		t.Errorf("device saw %d reads", st.ReadOps)
	}
	for _, e := range tr.Events {
		if e.Op != blockdev.OpRead || e.Len != 512 || e.Off%512 != 0 || e.Dur < 0 {
			t.Fatalf("bad event %+v", e)
		}
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	tr := &iotrace.Trace{Name: "run one", DeviceSize: 1 << 30, Dropped: 2, Events: []iotrace.Event{
		{Start: 0, Dur: 1500, Off: 4096, Len: 4096, Op: blockdev.OpRead},
		{Start: 2 * time.Millisecond, Dur: 70, Off: 1 << 29, Len: 65536, Op: blockdev.OpWrite},
	}}
	p := filepath.Join(t.TempDir(), "x.iotrace")
	if err := tr.Save(p); err != nil {
		t.Fatal(err)
	}
	got, err := iotrace.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(*got) != fmt.Sprint(*tr) {
		t.Errorf("round trip:\n got %+v\nwant %+v", *got, *tr)
	}
	for _, bad := range []string{"# iotrace 1\n1 2 R x 4\n", "# iotrace 1\n1 2 R 5\n", "garbage\n"} {
		if _, err := iotrace.Read(strings.NewReader(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

const blkparseSample = `  8,0    1        1     0.000000000  4242  Q   R 2048 + 8 [e2fsck]
  8,0    1        2     0.000001000  4242  G   R 2048 + 8 [e2fsck]
  8,0    1        3     0.000002500  4242  D   R 2048 + 8 [e2fsck]
  8,0    1        4     0.000100000     0  C   R 2048 + 8 [0]
  8,0    0        5     0.001000000  4242  Q  RA 4096 + 256 [e2fsck]
  8,0    0        6     0.001002000  4242  D  RA 4096 + 256 [e2fsck]
  8,0    0        7     0.002000000  4242  Q  WS 100 + 8 [jbd2/sda]
  8,0    0        8     0.002000500  4242  D  WS 100 + 8 [jbd2/sda]
  8,0    0        9     0.003000000  4242  D  RM 9000 + 16 [e2fsck]
CPU0 (e2fsck):
 Reads Queued:           1,        4KiB  Writes Queued:           0,        0KiB
Total (8,0):
 Reads Queued:           2,      132KiB  Writes Queued:           1,        4KiB
`

func TestParseBlkparse(t *testing.T) {
	tr, err := iotrace.ParseBlkparse(strings.NewReader(blkparseSample))
	if err != nil {
		t.Fatal(err)
	}
	want := []iotrace.Event{
		{Start: 0, Off: 2048 * 512, Len: 8 * 512, Op: blockdev.OpRead},
		{Start: 999500, Off: 4096 * 512, Len: 256 * 512, Op: blockdev.OpRead},
		{Start: 2997500, Off: 9000 * 512, Len: 16 * 512, Op: blockdev.OpRead},
	}
	if fmt.Sprint(tr.Events) != fmt.Sprint(want) {
		t.Errorf("got %+v\nwant %+v", tr.Events, want)
	}
	// Without D lines, Q lines are used.
	var q strings.Builder
	for _, l := range strings.Split(blkparseSample, "\n") {
		if !strings.Contains(l, "  D  ") && !strings.Contains(l, "  D   ") {
			q.WriteString(l + "\n")
		}
	}
	tr, err = iotrace.ParseBlkparse(strings.NewReader(q.String()))
	if err != nil || len(tr.Events) != 2 || tr.Events[1].Off != 4096*512 {
		t.Errorf("Q fallback: %v %+v", err, tr)
	}
	if _, err := iotrace.ParseBlkparse(strings.NewReader("hello\n")); err == nil {
		t.Error("accepted text without events")
	}
}

const straceSample = `100 1700000000.000100 pread64(3</usr/lib/libc.so.6>, ""..., 784, 64) = 784 <0.000005>
100 1700000000.001000 pread64(5</tmp/x.img>, ""..., 1024, 1024) = 1024 <0.000006>
101 1700000000.002000 pread64(5</tmp/x.img>,  <unfinished ...>
100 1700000000.002100 pread64(5</tmp/x.img>, ""..., 4096, 8192) = 4096 <0.000004>
101 1700000000.002300 <... pread64 resumed>""..., 32768, 1048576) = 32768 <0.000300>
`

func TestParseStrace(t *testing.T) {
	tr, err := iotrace.ParseStrace(strings.NewReader(straceSample), "/tmp/x.img")
	if err != nil {
		t.Fatal(err)
	}
	want := []iotrace.Event{
		{Start: 0, Dur: 6 * time.Microsecond, Off: 1024, Len: 1024, Op: blockdev.OpRead},
		{Start: 1100 * time.Microsecond, Dur: 4 * time.Microsecond, Off: 8192, Len: 4096, Op: blockdev.OpRead},
		{Start: 1000 * time.Microsecond, Dur: 300 * time.Microsecond, Off: 1048576, Len: 32768, Op: blockdev.OpRead},
	}
	if fmt.Sprint(tr.Events) != fmt.Sprint(want) {
		t.Errorf("got %+v\nwant %+v", tr.Events, want)
	}
}

func TestBinsAndSeeks(t *testing.T) {
	tr := &iotrace.Trace{Events: []iotrace.Event{
		{Start: 0, Off: 0, Len: 4096},
		{Start: time.Millisecond / 2, Off: 4096, Len: 4096},        // sequential
		{Start: 3 * time.Millisecond / 2, Off: 1 << 20, Len: 4096}, // seek
		{Start: 5 * time.Millisecond / 2, Off: 0, Len: 8192},       // seek
	}}
	if n := iotrace.Seeks(tr.Events); n != 3 {
		t.Errorf("seeks %d, want 3 (first I/O counts)", n)
	}
	b := tr.Bin(time.Millisecond, 100)
	if fmt.Sprint(b.Bytes, b.Ops, b.Seeks) != "[8192 4096 8192] [2 1 1] [1 1 1]" {
		t.Errorf("bins %v %v %v", b.Bytes, b.Ops, b.Seeks)
	}
}

// TestExampleTrace reads every inode table and directory block of a
// kernel-written image through a Recorder, two readers at a time, and
// checks that every read was recorded; with -example FILE it also saves
// the trace (docs/iowatch-example.svg is drawn from it by iowatch).
func TestExampleTrace(t *testing.T) {
	img := testfs.KernelImage(t, 2<<30, []string{"-t", "ext4", "-b", "4096"}, func(mnt string) {
		buf := make([]byte, 8<<10)
		for d := 0; d < 120; d++ {
			dir := filepath.Join(mnt, fmt.Sprintf("dir%03d", d))
			os.MkdirAll(dir, 0o755)
			for i := 0; i < 80; i++ {
				os.WriteFile(filepath.Join(dir, fmt.Sprintf("file-with-a-long-name-%04d", i)), buf[:(i*977)%len(buf)], 0o644)
			}
		}
	})
	dev, err := blockdev.Open(img, true, false)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	dropCache(t, img)
	rec := iotrace.New(dev)
	rec.Name = "read inode tables, then directories"
	before := dev.Stats().ReadOps
	f, err := fs.Open(rec, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Inode tables: two workers take groups in turn, reading the used part
	// of each table in 16 KiB pieces (what a pass 1 does).
	var dirs []uint32
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			chunk := make([]byte, 16<<10)
			for g := uint32(w); g < f.Groups; g += 2 {
				gd := f.Group(g)
				if gd.Flags()&ondisk.BgInodeUninit != 0 {
					continue
				}
				used := f.InodesPerGroup - gd.ItableUnused()
				nbytes := uint64(used) * uint64(f.InodeSize)
				for off := uint64(0); off < nbytes; off += uint64(len(chunk)) {
					n := min(uint64(len(chunk)), (nbytes-off+uint64(f.BlockSize)-1)/uint64(f.BlockSize)*uint64(f.BlockSize))
					if err := f.ReadBlock(gd.InodeTable()+off/uint64(f.BlockSize), chunk[:n]); err != nil {
						t.Error(err)
						return
					}
					for i := uint64(0); i+uint64(f.InodeSize) <= n && off+i < nbytes; i += uint64(f.InodeSize) {
						in := ondisk.Inode(chunk[i : i+uint64(f.InodeSize)])
						if in.IsDir() && in.LinksCount() > 0 {
							mu.Lock()
							dirs = append(dirs, g*f.InodesPerGroup+uint32((off+i)/uint64(f.InodeSize))+1)
							mu.Unlock()
						}
					}
				}
			}
		}(w)
	}
	wg.Wait()
	// Directory blocks, in inode order.
	blk := make([]byte, f.BlockSize)
	for _, ino := range dirs {
		in, err := dump.ReadInode(f, ino)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range dump.BlockMap(f, ino, in).Pieces {
			for k := uint64(0); k < p.Len; k++ {
				if err := f.ReadBlock(p.Pblk+k, blk); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	tr := rec.Trace()
	if got, want := uint64(len(tr.Events)), dev.Stats().ReadOps-before; got != want || tr.Dropped != 0 {
		t.Errorf("recorded %d events (%d dropped), device saw %d reads", got, tr.Dropped, want)
	}
	if len(dirs) < 40 {
		t.Errorf("found %d directories", len(dirs))
	}
	if *example != "" {
		if err := tr.Save(*example); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := tr.Write(&b); err != nil {
		t.Fatal(err)
	}
	back, err := iotrace.Read(&b)
	if err != nil || len(back.Events) != len(tr.Events) {
		t.Errorf("reload: %v, %d events", err, len(back.Events))
	}
}

// dropCache asks the kernel to forget the image's cached pages so the
// example trace shows device timing rather than page-cache copies.
func dropCache(t *testing.T, path string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const fadvDontneed = 4
	if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontneed, 0, 0); e != 0 {
		t.Logf("fadvise: %v", e)
	}
}
