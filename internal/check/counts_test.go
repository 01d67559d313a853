package check

import (
	"math/rand/v2"
	"sync"
	"testing"
)

// TestCountsAgainstMap: Set, Add and Get of the counter (a bit for 1,
// bytes for the rest, a map past 254) agree with a plain map under random
// operations biased to the values that change representation.
func TestCountsAgainstMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	const n = 50000
	c := newCounts(n)
	want := map[uint32]uint16{}
	vals := []uint16{0, 1, 2, 254, 255, 256, 0xFFFE, 0xFFFF}
	for k := 0; k < 200000; k++ {
		ino := uint32(r.IntN(n))
		switch r.IntN(3) {
		case 0:
			v := vals[r.IntN(len(vals))]
			c.Set(ino, v)
			want[ino] = v
		case 1:
			got := c.Add(ino)
			if want[ino] < 0xFFFF {
				want[ino]++
			}
			if got != want[ino] {
				t.Fatalf("Add(%d) = %d, want %d", ino, got, want[ino])
			}
		default:
			if got := c.Get(ino); got != want[ino] {
				t.Fatalf("Get(%d) = %d, want %d", ino, got, want[ino])
			}
		}
	}
	for ino := uint32(0); ino < n; ino++ {
		if got := c.Get(ino); got != want[ino] {
			t.Fatalf("Get(%d) = %d, want %d", ino, got, want[ino])
		}
	}
}

// TestCountsSingles: counts of 0, 1 and 2 set at once by several workers
// on distinct inodes read back (run under the race detector in CI), and a
// map of ones costs a bit an inode.
func TestCountsSingles(t *testing.T) {
	const n = 1 << 16
	c := newCounts(n)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for ino := uint32(g); ino < n; ino += 4 {
				c.Set(ino, uint16(ino%3))
			}
		}(g)
	}
	wg.Wait()
	for ino := uint32(0); ino < n; ino++ {
		if got := c.Get(ino); got != uint16(ino%3) {
			t.Fatalf("Get(%d) = %d, want %d", ino, got, ino%3)
		}
	}
	// Single counts cost a bit each: no byte pages for a map of ones.
	ones := newCounts(n)
	for ino := uint32(0); ino < n; ino++ {
		ones.Set(ino, 1)
	}
	if b := ones.Bytes(); b > n/8+2048 {
		t.Fatalf("%d inodes of count 1 cost %d bytes", n, b)
	}
}
