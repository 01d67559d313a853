package blockdev

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestOverlayMatchesDirectWrites applies the same random writes to a Mem
// directly and through an Overlay: reads through the Overlay must match
// the direct device before Flush, the base must be untouched until Flush,
// and equal to the direct device after it.
func TestOverlayMatchesDirectWrites(t *testing.T) {
	const size = 64 << 10
	rng := rand.New(rand.NewPCG(1, 2))
	orig := make([]byte, size)
	for i := range orig {
		orig[i] = byte(rng.Uint32())
	}
	direct := &Mem{Data: bytes.Clone(orig)}
	base := &Mem{Data: bytes.Clone(orig)}
	o := NewOverlay(base)
	for k := 0; k < 300; k++ {
		off := rng.Int64N(size - 1)
		n := 1 + rng.IntN(min(5000, int(size-off)))
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		direct.WriteAt(p, off)
		if _, err := o.WriteAt(p, off); err != nil {
			t.Fatal(err)
		}
		// A random read sees exactly the direct device's bytes.
		roff := rng.Int64N(size - 1)
		rn := 1 + rng.IntN(int(size-roff))
		got := make([]byte, rn)
		if _, err := o.ReadAt(got, roff); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, direct.Data[roff:roff+int64(rn)]) {
			t.Fatalf("write %d: read [%d,+%d) through the overlay differs from the direct device", k, roff, rn)
		}
	}
	if !bytes.Equal(base.Data, orig) {
		t.Fatal("base device changed before Flush")
	}
	if _, err := o.WriteAt([]byte{1}, size); err == nil {
		t.Fatal("write past the end accepted")
	}
	if err := o.Flush(base); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(base.Data, direct.Data) {
		t.Fatal("base after Flush differs from the direct device")
	}
	if o.Dirty() {
		t.Fatal("overlay dirty after Flush")
	}
}

// TestOverlayDiscard: discarded writes never reach the base.
func TestOverlayDiscard(t *testing.T) {
	base := &Mem{Data: make([]byte, 8192)}
	o := NewOverlay(base)
	o.WriteAt([]byte("hello"), 3000)
	o.Discard()
	got := make([]byte, 5)
	o.ReadAt(got, 3000)
	if !bytes.Equal(got, make([]byte, 5)) || o.Dirty() {
		t.Fatal("discarded write still visible")
	}
	o.Flush(base)
	if !bytes.Equal(base.Data, make([]byte, 8192)) {
		t.Fatal("discarded write reached the base")
	}
}

// TestOverlayConcurrent writes disjoint ranges that share pages from many
// goroutines (as repair workers writing neighbouring inodes do); no write
// may be lost. Run with -race.
func TestOverlayConcurrent(t *testing.T) {
	base := &Mem{Data: make([]byte, 256<<10)}
	o := NewOverlay(base)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < 1024; i += 8 {
				rec := bytes.Repeat([]byte{byte(i)}, 256)
				o.WriteAt(rec, int64(i)*256)
				got := make([]byte, 256)
				o.ReadAt(got, int64(i)*256)
				if !bytes.Equal(got, rec) {
					t.Errorf("record %d not read back", i)
				}
			}
		}()
	}
	wg.Wait()
	o.Flush(base)
	for i := 0; i < 1024; i++ {
		if !bytes.Equal(base.Data[i*256:(i+1)*256], bytes.Repeat([]byte{byte(i)}, 256)) {
			t.Fatalf("record %d lost", i)
		}
	}
}
