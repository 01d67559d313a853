package check

import (
	"context"
	"io"
	"sync"
	"testing"
	"unsafe"

	"gofsck/internal/blockdev"
	"gofsck/internal/fs"
	"gofsck/internal/problem"
	"gofsck/internal/testfs"
)

// TestCounts checks the paged counter: zero until set, byte values, the
// overflow map from 255 up, saturation, and pages only where written.
func TestCounts(t *testing.T) {
	c := newCounts(3 << countPageBits)
	// The page tables: of the byte pages and of the single-count bitmap.
	base := uint64(3*8 + 8)
	if c.Get(5) != 0 || c.Bytes() != base {
		t.Fatalf("fresh counter: Get=%d Bytes=%d", c.Get(5), c.Bytes())
	}
	c.Set(5, 0) // a zero write allocates nothing
	if c.Bytes() != base {
		t.Errorf("zero Set allocated a page: %d bytes", c.Bytes())
	}
	for _, v := range []uint16{1, 254, 255, 256, 40000, 0xFFFF, 3} {
		c.Set(7, v)
		if got := c.Get(7); got != v {
			t.Errorf("Set(7,%d): Get=%d", v, got)
		}
	}
	if len(c.over) != 0 {
		t.Errorf("overflow entry kept after a small value: %v", c.over)
	}
	c.Set(9, 0xFFFE)
	if c.Add(9) != 0xFFFF || c.Add(9) != 0xFFFF || c.Get(9) != 0xFFFF {
		t.Errorf("Add does not saturate at 0xFFFF: %d", c.Get(9))
	}
	if c.Get(3<<countPageBits+10) != 0 {
		t.Error("out-of-range Get is not zero")
	}
	c.Set(3<<countPageBits+10, 4) // out of range: ignored, no panic
	if want := base + 1<<countPageBits + 8; c.Bytes() != want {
		t.Errorf("Bytes=%d, want %d (one page and one overflow entry)", c.Bytes(), want)
	}
}

// TestCountsConcurrentSet has workers set disjoint inodes sharing pages,
// as pass 1's groups do; run with -race.
func TestCountsConcurrentSet(t *testing.T) {
	const n = 4 << countPageBits
	c := newCounts(n)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				c.Set(uint32(i), uint16(i%300))
			}
		}(w)
	}
	wg.Wait()
	for i := 0; i < n; i++ {
		if got := c.Get(uint32(i)); got != uint16(i%300) {
			t.Fatalf("inode %d: %d, want %d", i, got, i%300)
		}
	}
}

// TestEstimateMemory checks the estimate printed with -t against what a
// check of a real image allocates for the structures it names.
func TestEstimateMemory(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{
		Size: 64 << 20, BlockSize: 1024, FSType: "ext4", Inodes: 40000,
		Populate: func(tr *testfs.Tree) {
			tr.ManyFiles("a", 3000)
			tr.ManyFiles("b", 2000)
		},
	})
	dev, err := blockdev.Open(img, true, false)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	f, err := fs.Open(dev, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if unsafe.Sizeof(dirInfo{}) != dirInfoBytes || unsafe.Sizeof(dirBlock{}) != dirBlockBytes {
		t.Errorf("record sizes changed: dirInfo %d, dirBlock %d", unsafe.Sizeof(dirInfo{}), unsafe.Sizeof(dirBlock{}))
	}
	est := EstimateMemory(f, 3)
	c := New(f, problem.NewReporter(io.Discard, problem.Options{Mode: problem.ModeNo}), Options{ReadOnly: true, Workers: 3})
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The maps' memory follows use; the estimate counts a dense page
	// wherever the descriptors say something is used, so it bounds what
	// is allocated, within a small factor.
	within := func(what string, est, got uint64) {
		t.Helper()
		if est < got || est > 4*got+256<<10 {
			t.Errorf("%s: estimate %d, allocated %d", what, est, got)
		}
	}
	within("inode maps", est.InodeMaps, c.inodeUsed.Bytes()+c.inodeDir.Bytes()+c.inodeReg.Bytes()+c.inodeBad.Bytes())
	within("block maps", est.BlockMaps, c.blockFound.Bytes()+c.blockMeta.Bytes()+c.blockDup.Bytes())
	within("link counts", est.LinkCounts, c.linkInfo.Bytes()+c.refCount.Bytes())
	// Every directory has a record and at least one block-list entry.
	if got := uint64(len(c.dirs)) * (dirInfoBytes + dirBlockBytes); est.Dirs != got {
		t.Errorf("directories: estimate %d bytes, %d directories found", est.Dirs, len(c.dirs))
	}
	if est.Total() != est.Descriptors+est.InodeMaps+est.BlockMaps+est.Pass5Maps+est.LinkCounts+est.Dirs+est.Workers+est.Runtime || est.Workers == 0 {
		t.Errorf("total %d does not add up: %+v", est.Total(), est)
	}
}
