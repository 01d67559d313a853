package bitmap

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"testing"
)

// oracle is a plain dense bitmap, one bool a bit: what every Bitmap
// operation is checked against.
type oracle []bool

func (o oracle) setRange(start, n uint64, dup func(uint64)) {
	for i := start; i < start+n && i < uint64(len(o)); i++ {
		if o[i] && dup != nil {
			dup(i)
		}
		o[i] = true
	}
}

func (o oracle) count(start, n uint64) (c uint64) {
	for i := start; i < start+n && i < uint64(len(o)); i++ {
		if o[i] {
			c++
		}
	}
	return c
}

func (o oracle) next(i uint64, want bool) uint64 {
	for ; i < uint64(len(o)); i++ {
		if o[i] == want {
			return i
		}
	}
	return uint64(len(o))
}

// randomOps applies the same random operations to a Bitmap and the
// oracle: single bits, short and page-long ranges, clears, bytes of an
// on-disk bitmap; biased to page edges, where the representations change.
func randomOps(t *testing.T, r *rand.Rand, b *Bitmap, o oracle, ops int) {
	t.Helper()
	n := uint64(len(o))
	pick := func() uint64 {
		switch r.IntN(4) {
		case 0:
			// near a page boundary
			p := r.Uint64N(n/pageBits + 1)
			return min(n-1, p*pageBits+r.Uint64N(130)-min(p*pageBits, 65))
		default:
			return r.Uint64N(n)
		}
	}
	for k := 0; k < ops; k++ {
		i := pick()
		switch r.IntN(8) {
		case 0:
			if got, want := b.TestAndSet(i), o[i]; got != want {
				t.Fatalf("op %d: TestAndSet(%d) = %v, oracle %v", k, i, got, want)
			}
			o[i] = true
		case 1:
			b.Clear(i)
			o[i] = false
		case 2, 3:
			ln := r.Uint64N(200) + 1
			if r.IntN(4) == 0 {
				ln = r.Uint64N(pageBits) + 1
			}
			var got, want []uint64
			b.SetRange(i, ln, func(x uint64) { got = append(got, x) })
			o.setRange(i, ln, func(x uint64) { want = append(want, x) })
			if len(got) != len(want) {
				t.Fatalf("op %d: SetRange(%d, %d) dups %d, oracle %d", k, i, ln, len(got), len(want))
			}
			for q := range got {
				if got[q] != want[q] {
					t.Fatalf("op %d: SetRange(%d, %d) dup %d = %d, oracle %d", k, i, ln, q, got[q], want[q])
				}
			}
		case 4:
			ln := r.Uint64N(2*pageBits) + 1
			src := make([]byte, (ln+7)/8)
			for q := range src {
				if r.IntN(3) == 0 {
					src[q] = byte(r.Uint32())
				} else if r.IntN(2) == 0 {
					src[q] = 0xFF
				}
			}
			b.SetBytes(i, src, ln)
			for q := uint64(0); q < ln && i+q < n; q++ {
				if src[q/8]&(1<<(q%8)) != 0 {
					o[i+q] = true
				}
			}
		case 5:
			// clear a range bit by bit
			for q := i; q < min(n, i+r.Uint64N(100)); q++ {
				b.Clear(q)
				o[q] = false
			}
		default:
			if got, want := b.Test(i), o[i]; got != want {
				t.Fatalf("op %d: Test(%d) = %v, oracle %v", k, i, got, want)
			}
		}
	}
}

// compareAll checks every read operation of b against the oracle.
func compareAll(t *testing.T, r *rand.Rand, b *Bitmap, o oracle) {
	t.Helper()
	n := uint64(len(o))
	var dense int64
	for i := range b.pages {
		if p := b.pages[i].Load(); p != nil && p.w != nil {
			dense++
		}
	}
	if b.DensePages() != dense {
		t.Fatalf("DensePages = %d, the table holds %d", b.DensePages(), dense)
	}
	for i := uint64(0); i < n; i++ {
		if b.Test(i) != o[i] || b.TestAtomic(i) != o[i] {
			t.Fatalf("bit %d: %v, oracle %v", i, b.Test(i), o[i])
		}
	}
	for k := 0; k < 60; k++ {
		start := r.Uint64N(n + 10)
		ln := r.Uint64N(3 * pageBits)
		if got, want := b.Count(start, ln), o.count(start, ln); got != want {
			t.Fatalf("Count(%d, %d) = %d, oracle %d", start, ln, got, want)
		}
		if got, want := b.NextSet(start), o.next(start, true); got != want {
			t.Fatalf("NextSet(%d) = %d, oracle %d", start, got, want)
		}
		if got, want := b.NextClear(start), o.next(start, false); got != want {
			t.Fatalf("NextClear(%d) = %d, oracle %d", start, got, want)
		}
		if got, want := b.AnySet(start, ln), o.count(start, ln) > 0; got != want {
			t.Fatalf("AnySet(%d, %d) = %v, oracle %v", start, ln, got, want)
		}
		dst := make([]byte, (ln+7)/8)
		b.Extract(dst, start, ln)
		want := make([]byte, len(dst))
		for q := uint64(0); q < ln; q++ {
			if start+q < n && o[start+q] {
				want[q/8] |= 1 << (q % 8)
			}
		}
		if !bytes.Equal(dst, want) {
			t.Fatalf("Extract(%d, %d) differs", start, ln)
		}
	}
}

func TestAgainstOracle(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
		n := uint64(1 + r.IntN(3*pageBits))
		if seed%3 == 0 {
			n = 4 * pageBits // page-aligned length
		}
		b, o := New(n), make(oracle, n)
		randomOps(t, r, b, o, 3000)
		compareAll(t, r, b, o)
		// Compacting a part, then the whole, changes no bit, and the
		// compacted pages take further changes.
		b.Compact(r.Uint64N(n), r.Uint64N(n))
		compareAll(t, r, b, o)
		b.Compact(0, n)
		compareAll(t, r, b, o)
		randomOps(t, r, b, o, 1000)
		compareAll(t, r, b, o)

		c := b.Clone()
		for _, m := range []uint64{n / 3, n, n + pageBits + 5} {
			cl := b.CloneLen(m)
			co := make(oracle, m)
			copy(co, o)
			compareAll(t, r, cl, co)
		}
		// The clone is independent of the original.
		randomOps(t, r, b, o, 500)
		compareAll(t, r, b, o)
		if !c.Equal(c, 0, n) {
			t.Fatal("a map is not Equal to itself")
		}
		// Equal and CountAnd over random ranges against the oracle.
		o2 := make(oracle, n)
		b2 := New(n)
		for i := uint64(0); i < n; i++ {
			if o[i] && r.IntN(50) != 0 {
				o2[i] = true
			}
		}
		for i := uint64(0); i < n; {
			j := o2.next(i, true)
			if j >= n {
				break
			}
			e := min(o2.next(j, false), n)
			b2.SetRange(j, e-j, nil)
			i = e
		}
		for k := 0; k < 100; k++ {
			start := r.Uint64N(n)
			ln := r.Uint64N(n - start + 1)
			eq, and := true, uint64(0)
			for i := start; i < start+ln; i++ {
				if o[i] != o2[i] {
					eq = false
				}
				if o[i] && o2[i] {
					and++
				}
			}
			if got := b.Equal(b2, start, ln); got != eq {
				t.Fatalf("seed %d: Equal(%d, %d) = %v, oracle %v", seed, start, ln, got, eq)
			}
			if got := b.CountAnd(b2, start, ln); got != and {
				t.Fatalf("seed %d: CountAnd(%d, %d) = %d, oracle %d", seed, start, ln, got, and)
			}
		}
	}
}

// TestConcurrentSetters: goroutines claiming overlapping ranges and bits
// of the same pages (run pages turning dense under them) lose no bit, and
// every bit's first claim is reported as such exactly once. Run under the
// race detector in CI.
func TestConcurrentSetters(t *testing.T) {
	const n = 3 * pageBits
	b := New(n)
	var wg sync.WaitGroup
	firsts := make([][]uint64, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for k := 0; k < 20000; k++ {
				i := r.Uint64N(n)
				if r.IntN(2) == 0 {
					if !b.TestAndSet(i) {
						firsts[g] = append(firsts[g], i)
					}
					continue
				}
				ln := r.Uint64N(40) + 1
				dups := map[uint64]bool{}
				b.SetRange(i, ln, func(x uint64) { dups[x] = true })
				for x := i; x < min(i+ln, n); x++ {
					if !dups[x] {
						firsts[g] = append(firsts[g], x)
					}
				}
			}
		}(g)
	}
	wg.Wait()
	seen := make([]bool, n)
	for _, fs := range firsts {
		for _, x := range fs {
			if seen[x] {
				t.Fatalf("bit %d claimed first twice", x)
			}
			seen[x] = true
		}
	}
	for i := uint64(0); i < n; i++ {
		if seen[i] != b.Test(i) {
			t.Fatalf("bit %d: set %v, first claims %v", i, b.Test(i), seen[i])
		}
	}
}

// TestMemoryFollowsUse: a map of 2^38 bits (1 PiB of 4 KiB blocks) with
// the metadata of an empty volume's flex groups costs its page table and
// a few bytes per run, not 32 GiB.
func TestMemoryFollowsUse(t *testing.T) {
	b := New(1 << 38)
	for g := uint64(0); g < 1<<23; g += 16 {
		b.SetRange(g*pageBits+1026, 16+16+16*512, nil)
	}
	if got, limit := b.Bytes(), uint64(1<<38)/pageBits*8+(1<<23)/16*128; got > limit {
		t.Fatalf("Bytes = %d, want at most %d", got, limit)
	}
	if got, want := b.Count(0, 1<<38), uint64(1<<23)/16*(32+16*512); got != want {
		t.Fatalf("Count = %d, want %d", got, want)
	}
	full := New(4 * pageBits)
	full.SetRange(0, 4*pageBits, nil)
	if full.Bytes() != 4*8 {
		t.Fatalf("a full map costs %d bytes, want its table only", full.Bytes())
	}
}

// TestCompact: pages that went dense by many edits but hold few runs
// become run pages again (the full page when all set, absent when clear);
// pages with more runs stay dense.
func TestCompact(t *testing.T) {
	b := New(5 * pageBits)
	o := make(oracle, 5*pageBits)
	// page 0: 200 adjacent ranges, one run in the end
	for i := uint64(0); i < 200; i++ {
		b.SetRange(100+i*10, 10, nil)
		o.setRange(100+i*10, 10, nil)
	}
	// page 1: compactRuns+1 separate runs set one by one, then page 2 set
	// whole bit by bit, page 3 set and cleared again
	for i := uint64(0); i <= compactRuns; i++ {
		b.SetRange(pageBits+i*100, 3, nil)
		o.setRange(pageBits+i*100, 3, nil)
	}
	// page 4: compactRuns runs exactly, the last reaching the page's end
	for i := uint64(0); i < compactRuns; i++ {
		b.SetRange(5*pageBits-1-i*100, 2, nil)
		o.setRange(5*pageBits-1-i*100, 2, nil)
	}
	for i := uint64(0); i < pageBits; i++ {
		b.Set(2*pageBits + i)
		o[2*pageBits+i] = true
	}
	for i := uint64(0); i < 100; i++ {
		b.Set(3*pageBits + i*7)
	}
	for i := uint64(0); i < 100; i++ {
		b.Clear(3*pageBits + i*7)
	}
	dense := func(pi int) bool { p := b.pages[pi].Load(); return p != nil && p.w != nil }
	for _, pi := range []int{0, 1, 2, 3} {
		if !dense(pi) {
			t.Fatalf("page %d is not dense before Compact", pi)
		}
	}
	if b.DensePages() != 5 {
		t.Errorf("DensePages = %d before Compact, want 5", b.DensePages())
	}
	before := b.Bytes()
	freed := b.Compact(0, 5*pageBits)
	if b.DensePages() != 1 {
		t.Errorf("DensePages = %d after Compact, want 1", b.DensePages())
	}
	if b.Bytes() != before-freed+uint64(cap(b.pages[0].Load().runs)+cap(b.pages[4].Load().runs))*4+2*48 {
		t.Errorf("Bytes %d -> %d, Compact says it freed %d", before, b.Bytes(), freed)
	}
	if p := b.pages[0].Load(); p == nil || p.w != nil || len(p.runs) != 1 {
		t.Errorf("page 0 after Compact: %+v, want one run", p)
	}
	if !dense(1) {
		t.Error("page 1 (compactRuns+1 runs) was made a run page")
	}
	if p := b.pages[4].Load(); p == nil || p.w != nil || len(p.runs) != compactRuns {
		t.Errorf("page 4 after Compact is not a page of %d runs", compactRuns)
	}
	if b.pages[2].Load() != fullPage {
		t.Error("page 2 (all set) is not the full page")
	}
	if b.pages[3].Load() != nil {
		t.Error("page 3 (all clear) is still held")
	}
	r := rand.New(rand.NewPCG(3, 3))
	compareAll(t, r, b, o)
	randomOps(t, r, b, o, 2000)
	compareAll(t, r, b, o)
}
