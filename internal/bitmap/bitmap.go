// Package bitmap provides the bitmaps the checker keeps for inodes and
// blocks (clusters), with memory that follows what is set rather than the
// size of the volume.
//
// A map is a table of pages of 2^15 bits (one group's cluster bitmap at 4
// KiB blocks). A page is absent while all its bits are clear, a short list
// of runs while it holds few runs of set bits (the metadata of an empty
// group, a contiguous file), and 512 dense words once it holds more. One
// shared page stands for a page whose bits are all set. A mostly empty
// 256 TiB volume then costs its page table (8 bytes per 128 MiB of 4 KiB
// blocks) and a few hundred bytes per flex group, where a dense map would
// cost 8 GiB.
//
// Concurrency: Set, Clear, TestAndSet, SetRange and TestAtomic may run in
// any number of goroutines at once (pass 1's workers share one map
// without locks). A run page is immutable once published: a writer builds
// the changed page and installs it with compare-and-swap, retrying on
// failure, so no update is lost; a dense page is never replaced and its
// words change by atomic operations. Test and the range scans are plain
// reads meant for phases in which no writer runs.
package bitmap

import (
	"encoding/binary"
	"math/bits"
	"sync/atomic"
)

const (
	pageShift = 15
	pageBits  = 1 << pageShift
	pageMask  = pageBits - 1
	pageWords = pageBits / 64
	// maxRuns is the most runs a run page holds; one more makes the page
	// dense. A run costs 4 bytes against 4 KiB for a dense page.
	maxRuns = 16
	// compactRuns is the most runs Compact gives a page it turns back
	// from dense (a quarter of a dense page's bytes). The lookups search
	// runs by halving; the page's next change makes it dense again.
	compactRuns = 256
	// maxEdits is how many times a run page is rebuilt before the next
	// change makes it dense, so that a page filled bit by bit (a
	// block-mapped file's blocks, claimed one at a time) stops costing
	// an allocation per bit.
	maxEdits = 48
)

// run is the set bits lo..hi (inclusive) of a page.
type run struct{ lo, hi uint16 }

// page is one page of a map: dense words when w is set, else runs, sorted,
// disjoint and not adjacent. A run page is never changed once it is in a
// map's table.
type page struct {
	w     *[pageWords]uint64
	runs  []run
	edits uint16 // how many changes made this run page
}

// fullPage stands for a page whose every bit is set. It is never written.
var fullPage = &page{runs: []run{{0, pageMask}}}

// Bitmap is a set of bits numbered [0, Len). No bit at or past Len is ever
// set, so the scans need not mask them.
type Bitmap struct {
	pages []atomic.Pointer[page]
	len   uint64
	// dense counts the table's dense pages (Compact takes some back).
	dense atomic.Int64
}

// New returns an empty bitmap of n bits. It allocates only the page table.
func New(n uint64) *Bitmap {
	return &Bitmap{pages: make([]atomic.Pointer[page], (n+pageMask)>>pageShift), len: n}
}

// Len returns the number of bits.
func (b *Bitmap) Len() uint64 { return b.len }

// Bytes returns the memory the map holds: its page table and pages. It
// walks the table, so it is for reports, not hot paths.
func (b *Bitmap) Bytes() uint64 {
	n := uint64(len(b.pages)) * 8
	for i := range b.pages {
		p := b.pages[i].Load()
		switch {
		case p == nil, p == fullPage:
		case p.w != nil:
			n += pageWords*8 + 32
		default:
			n += uint64(cap(p.runs))*4 + 48
		}
	}
	return n
}

// firstRun returns the index of the first of runs that ends at or after
// off (len(runs) when none): a binary search, since a compacted page may
// hold up to compactRuns runs.
func firstRun(runs []run, off uint16) int {
	lo, hi := 0, len(runs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if runs[m].hi < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// has reports whether bit off of the run page is set.
func (p *page) has(off uint16) bool {
	i := firstRun(p.runs, off)
	return i < len(p.runs) && p.runs[i].lo <= off
}

// runsWord returns word k of a run page.
func (p *page) runsWord(k uint16) uint64 {
	lo, hi := k*64, k*64+63
	var w uint64
	for _, r := range p.runs[firstRun(p.runs, lo):] {
		if r.lo > hi {
			break
		}
		a, z := max(r.lo, lo)-lo, min(r.hi, hi)-lo
		w |= maskBits(uint64(a), uint64(z))
	}
	return w
}

// maskBits returns a word with bits a..z (inclusive, z < 64) set.
func maskBits(a, z uint64) uint64 {
	if z-a == 63 {
		return ^uint64(0)
	}
	return ((1 << (z - a + 1)) - 1) << a
}

// unionRuns returns runs with lo..hi added.
func unionRuns(runs []run, lo, hi uint16) []run {
	out := make([]run, 0, len(runs)+1)
	i := 0
	for ; i < len(runs) && uint32(runs[i].hi)+1 < uint32(lo); i++ {
		out = append(out, runs[i])
	}
	for ; i < len(runs) && uint32(runs[i].lo) <= uint32(hi)+1; i++ {
		lo, hi = min(lo, runs[i].lo), max(hi, runs[i].hi)
	}
	out = append(out, run{lo, hi})
	return append(out, runs[i:]...)
}

// covered reports whether one of runs holds all of lo..hi.
func covered(runs []run, lo, hi uint16) bool {
	for _, r := range runs {
		if r.lo <= lo && hi <= r.hi {
			return true
		}
	}
	return false
}

// minusRuns returns runs with bits lo..hi removed.
func minusRuns(runs []run, lo, hi uint16) []run {
	out := make([]run, 0, len(runs)+1)
	for _, r := range runs {
		if r.hi < lo || r.lo > hi {
			out = append(out, r)
			continue
		}
		if r.lo < lo {
			out = append(out, run{r.lo, lo - 1})
		}
		if r.hi > hi {
			out = append(out, run{hi + 1, r.hi})
		}
	}
	return out
}

// makePage returns the page holding runs, made from page old (nil: none):
// nil when there are no runs, the shared full page, a dense page past
// maxRuns or maxEdits, else a run page.
func makePage(old *page, runs []run) *page {
	edits := uint16(1)
	if old != nil {
		edits = old.edits + 1
	}
	switch {
	case len(runs) == 0:
		return nil
	case len(runs) == 1 && runs[0] == run{0, pageMask}:
		return fullPage
	case len(runs) > maxRuns || edits > maxEdits:
		return densePage(runs)
	}
	return &page{runs: runs, edits: edits}
}

// densePage returns a dense page with the runs' bits set.
func densePage(runs []run) *page {
	w := new([pageWords]uint64)
	for _, r := range runs {
		orWords(w, uint64(r.lo), uint64(r.hi), nil, 0)
	}
	return &page{w: w}
}

// orWords sets bits lo..hi (inclusive) of dense words w atomically and
// calls dup with base+bit for each bit that was already set.
func orWords(w *[pageWords]uint64, lo, hi uint64, dup func(uint64), base uint64) {
	for i := lo; i <= hi; {
		k := i >> 6
		z := min(hi, k<<6+63)
		m := maskBits(i&63, z&63)
		old := atomic.OrUint64(&w[k], m)
		if was := old & m; was != 0 && dup != nil {
			for was != 0 {
				dup(base + k<<6 | uint64(bits.TrailingZeros64(was)))
				was &= was - 1
			}
		}
		i = z + 1
	}
}

// word returns aligned word k of the map (bits 64k..64k+63), k < Len/64
// rounded up.
func (b *Bitmap) word(k uint64) uint64 {
	p := b.pages[k>>(pageShift-6)].Load()
	switch {
	case p == nil:
		return 0
	case p.w != nil:
		return p.w[k&(pageWords-1)]
	}
	return p.runsWord(uint16(k & (pageWords - 1)))
}

// Word returns the aligned 64 bits 64k..64k+63 (bit j of the result is
// bit 64k+j); bits at or past Len are zero. A loop that visits the set
// bits of several maps together reads them a word at a time with it.
func (b *Bitmap) Word(k uint64) uint64 {
	if k >= (b.len+63)>>6 {
		return 0
	}
	w := b.word(k)
	if rem := b.len - k<<6; rem < 64 {
		w &= 1<<rem - 1
	}
	return w
}

// Test reports whether bit i is set (false when out of range).
func (b *Bitmap) Test(i uint64) bool {
	if i >= b.len {
		return false
	}
	p := b.pages[i>>pageShift].Load()
	switch {
	case p == nil:
		return false
	case p.w != nil:
		return p.w[(i>>6)&(pageWords-1)]&(1<<(i&63)) != 0
	}
	return p.has(uint16(i & pageMask))
}

// TestAtomic is Test with an atomic load, for a bit another goroutine may
// Set or Clear meanwhile.
func (b *Bitmap) TestAtomic(i uint64) bool {
	if i >= b.len {
		return false
	}
	p := b.pages[i>>pageShift].Load()
	switch {
	case p == nil:
		return false
	case p.w != nil:
		return atomic.LoadUint64(&p.w[(i>>6)&(pageWords-1)])&(1<<(i&63)) != 0
	}
	return p.has(uint16(i & pageMask))
}

// swap installs page np in slot if it still holds old (a run page or
// none), counting np when it is dense.
func (b *Bitmap) swap(slot *atomic.Pointer[page], old, np *page) bool {
	if !slot.CompareAndSwap(old, np) {
		return false
	}
	if np != nil && np.w != nil {
		b.dense.Add(1)
	}
	return true
}

// DensePages returns how many of the map's pages are dense (4 KiB each):
// what Compact may be worth calling for.
func (b *Bitmap) DensePages() int64 { return b.dense.Load() }

// Set sets bit i atomically (ignored when out of range).
func (b *Bitmap) Set(i uint64) { b.TestAndSet(i) }

// Clear clears bit i atomically.
func (b *Bitmap) Clear(i uint64) {
	if i >= b.len {
		return
	}
	slot := &b.pages[i>>pageShift]
	off := uint16(i & pageMask)
	for {
		p := slot.Load()
		switch {
		case p == nil:
			return
		case p.w != nil:
			atomic.AndUint64(&p.w[off>>6], ^uint64(1<<(off&63)))
			return
		case !p.has(off):
			return
		}
		if b.swap(slot, p, makePage(p, minusRuns(p.runs, off, off))) {
			return
		}
	}
}

// TestAndSet sets bit i and reports whether it was already set. It is the
// O(1) second-claim detector of block ownership.
func (b *Bitmap) TestAndSet(i uint64) bool {
	if i >= b.len {
		return false
	}
	slot := &b.pages[i>>pageShift]
	off := uint16(i & pageMask)
	for {
		p := slot.Load()
		var runs []run
		switch {
		case p == nil:
		case p.w != nil:
			m := uint64(1) << (off & 63)
			return atomic.OrUint64(&p.w[off>>6], m)&m != 0
		case p.has(off):
			return true
		default:
			runs = p.runs
		}
		if b.swap(slot, p, makePage(p, unionRuns(runs, off, off))) {
			return false
		}
	}
}

// SetRange sets bits [start, start+n) and calls dup for every bit in the
// range that was already set. Dense words are set with one atomic
// operation each, and a range over a run page adds one run, so marking a
// long extent costs at most n/64 operations.
func (b *Bitmap) SetRange(start, n uint64, dup func(i uint64)) {
	if start >= b.len || n == 0 {
		return
	}
	n = min(n, b.len-start)
	end := start + n - 1
	for i := start; i <= end; {
		pi := i >> pageShift
		base := pi << pageShift
		lo, hi := i-base, min(end-base, pageMask)
		b.setInPage(pi, lo, hi, dup)
		i = base + hi + 1
	}
}

// setInPage is SetRange within page pi (bits lo..hi of the page).
func (b *Bitmap) setInPage(pi, lo, hi uint64, dup func(uint64)) {
	slot := &b.pages[pi]
	base := pi << pageShift
	for {
		p := slot.Load()
		if p != nil && p.w != nil {
			orWords(p.w, lo, hi, dup, base)
			return
		}
		var runs []run
		if p != nil {
			runs = p.runs
		}
		if !covered(runs, uint16(lo), uint16(hi)) && !b.swap(slot, p, makePage(p, unionRuns(runs, uint16(lo), uint16(hi)))) {
			continue
		}
		if dup != nil {
			for _, r := range runs {
				a, z := max(uint64(r.lo), lo), min(uint64(r.hi), hi)
				for k := a; k <= z && a <= z; k++ {
					dup(base + k)
				}
			}
		}
		return
	}
}

// SetBytes sets the bits of [start, start+n) that are set in the first n
// bits of src, a little-endian on-disk bitmap (bit k is bit k%8 of byte
// k/8). It goes page by page: where the page is dense, or the source
// holds more runs than a run page keeps (a fragmented group's bitmap,
// one run in two bits), the source's words are ORed into dense words;
// elsewhere each run of set bits is one SetRange.
func (b *Bitmap) SetBytes(start uint64, src []byte, n uint64) {
	if start >= b.len {
		return
	}
	n = min(n, uint64(len(src))*8, b.len-start)
	word := func(k uint64) uint64 {
		if k*8+8 <= uint64(len(src)) {
			return binary.LittleEndian.Uint64(src[k*8:])
		}
		var w uint64
		for i := uint64(0); k*8+i < uint64(len(src)); i++ {
			w |= uint64(src[k*8+i]) << (8 * i)
		}
		return w
	}
	// bitsFrom returns the 64 source bits from bit off on, zero past n.
	bitsFrom := func(off uint64) uint64 {
		k, sh := off>>6, off&63
		w := word(k) >> sh
		if sh != 0 {
			w |= word(k+1) << (64 - sh)
		}
		if left := n - off; left < 64 {
			w &= 1<<left - 1
		}
		return w
	}
	for i := uint64(0); i < n; {
		dst := start + i
		pi := dst >> pageShift
		chunk := min(n-i, (pi+1)<<pageShift-dst)
		if w := b.denseForBytes(pi, i, chunk, bitsFrom); w != nil {
			for d := uint64(0); d < chunk; {
				off := (dst + d) & 63
				cnt := min(64-off, chunk-d)
				v := bitsFrom(i + d)
				if cnt < 64 {
					v &= 1<<cnt - 1
				}
				if v != 0 {
					atomic.OrUint64(&w[((dst+d)&pageMask)>>6], v<<off)
				}
				d += cnt
			}
		} else {
			base := i
			wordRuns(chunk, func(k uint64) uint64 { return bitsFrom(base + k*64) }, func(lo, hi uint64) bool {
				b.SetRange(dst+lo, hi-lo, nil)
				return true
			})
		}
		i += chunk
	}
}

// denseForBytes returns page pi's dense words when SetBytes should OR the
// source bits [from, from+n) into them: the page is dense already, or
// the source holds more than maxRuns runs (the page would end dense), in
// which case a run page is made dense first. It returns nil when the
// runs should be set one by one (few runs, or a full page).
func (b *Bitmap) denseForBytes(pi, from, n uint64, bitsFrom func(uint64) uint64) *[pageWords]uint64 {
	slot := &b.pages[pi]
	p := slot.Load()
	if p != nil && p.w != nil {
		return p.w
	}
	if p == fullPage {
		return nil
	}
	runs, carry := 0, uint64(0)
	for d := uint64(0); d < n && runs <= maxRuns; d += 64 {
		v := bitsFrom(from + d)
		if left := n - d; left < 64 {
			v &= 1<<left - 1
		}
		runs += bits.OnesCount64(v &^ (v<<1 | carry))
		carry = v >> 63
	}
	if runs <= maxRuns {
		return nil
	}
	for {
		var old []run
		if p != nil {
			old = p.runs
		}
		np := densePage(old)
		if b.swap(slot, p, np) {
			return np.w
		}
		if p = slot.Load(); p != nil && p.w != nil {
			return p.w
		}
	}
}

// wordRuns calls emit(lo, hi) for each run [lo, hi) of set bits in the
// first n bits of the words word(0), word(1), ... (bit i is bit i%64 of
// word i/64), in ascending order. It stops as soon as emit returns false
// and reports whether it reached the end.
func wordRuns(n uint64, word func(k uint64) uint64, emit func(lo, hi uint64) bool) bool {
	var lo uint64
	inRun := false
	for k := uint64(0); k*64 < n; k++ {
		w := word(k)
		if left := n - k*64; left < 64 {
			w &= 1<<left - 1
		}
		if !inRun && w == 0 || inRun && w == ^uint64(0) {
			continue
		}
		for pos := uint64(0); pos < 64; {
			if inRun {
				o := uint64(bits.TrailingZeros64(^(w >> pos)))
				if pos+o >= 64 {
					break
				}
				if !emit(lo, k*64+pos+o) {
					return false
				}
				inRun = false
				pos += o
				continue
			}
			r := w >> pos
			if r == 0 {
				break
			}
			pos += uint64(bits.TrailingZeros64(r))
			lo, inRun = k*64+pos, true
		}
	}
	return !inRun || emit(lo, n)
}

// AnySet reports whether any bit in [start, start+n) is set.
func (b *Bitmap) AnySet(start, n uint64) bool {
	if start >= b.len {
		return false
	}
	end := start + min(n, b.len-start)
	return b.nextSet(start, end) < end
}

// NextSet returns the first set bit at or after i, or Len when none.
func (b *Bitmap) NextSet(i uint64) uint64 {
	if i >= b.len {
		return b.len
	}
	if r := b.nextSet(i, b.len); r < b.len {
		return r
	}
	return b.len
}

// firstInWords returns the first bit at or after off of a dense page
// that is set in its word xor flip (flip 0: set bits; all ones: clear
// bits), and whether there is one.
func firstInWords(w *[pageWords]uint64, off, flip uint64) (uint64, bool) {
	k := off >> 6
	x := (w[k] ^ flip) >> (off & 63) << (off & 63)
	for {
		if x != 0 {
			return k<<6 + uint64(bits.TrailingZeros64(x)), true
		}
		if k++; k == pageWords {
			return 0, false
		}
		x = w[k] ^ flip
	}
}

// nextSet returns the first set bit in [i, end), or end when none.
func (b *Bitmap) nextSet(i, end uint64) uint64 {
	for i < end {
		pi := i >> pageShift
		base := pi << pageShift
		p := b.pages[pi].Load()
		off := i - base
		switch {
		case p == nil:
		case p.w != nil:
			if at, ok := firstInWords(p.w, off, 0); ok {
				return min(base+at, end)
			}
		default:
			if k := firstRun(p.runs, uint16(off)); k < len(p.runs) {
				return min(base+max(uint64(p.runs[k].lo), off), end)
			}
		}
		i = base + pageBits
	}
	return end
}

// NextClear returns the first clear bit at or after i, or Len when there
// is none.
func (b *Bitmap) NextClear(i uint64) uint64 {
	for i < b.len {
		pi := i >> pageShift
		base := pi << pageShift
		p := b.pages[pi].Load()
		off := i - base
		switch {
		case p == nil:
			return i
		case p.w != nil:
			if at, ok := firstInWords(p.w, off, ^uint64(0)); ok {
				return min(base+at, b.len)
			}
		default:
			pos := off
			for _, r := range p.runs[firstRun(p.runs, uint16(off)):] {
				if uint64(r.lo) > pos {
					break
				}
				pos = uint64(r.hi) + 1
			}
			if pos < pageBits {
				return min(base+pos, b.len)
			}
		}
		i = base + pageBits
	}
	return b.len
}

// Count returns the number of set bits in [start, start+n).
func (b *Bitmap) Count(start, n uint64) uint64 {
	if start >= b.len || n == 0 {
		return 0
	}
	end := start + min(n, b.len-start) - 1
	var c uint64
	for i := start; i <= end; {
		pi := i >> pageShift
		base := pi << pageShift
		lo, hi := i-base, min(end-base, pageMask)
		p := b.pages[pi].Load()
		switch {
		case p == nil:
		case p.w != nil:
			for k := lo >> 6; k <= hi>>6; k++ {
				a, z := max(lo, k<<6), min(hi, k<<6+63)
				c += uint64(bits.OnesCount64(p.w[k] & maskBits(a&63, z&63)))
			}
		default:
			for _, r := range p.runs[firstRun(p.runs, uint16(lo)):] {
				if uint64(r.lo) > hi {
					break
				}
				c += min(uint64(r.hi), hi) - max(uint64(r.lo), lo) + 1
			}
		}
		i = base + hi + 1
	}
	return c
}

// bitsAt returns the 64 bits from bit i on (zero past Len).
func (b *Bitmap) bitsAt(i uint64) uint64 {
	if i >= b.len {
		return 0
	}
	k, sh := i>>6, i&63
	w := b.word(k) >> sh
	if sh != 0 && (k+1)<<6 < b.len {
		w |= b.word(k+1) << (64 - sh)
	}
	return w
}

// Equal reports whether b and o hold the same bits in [start, start+n).
// Pages that are the same page, or both absent, are passed over whole, and
// two run pages are compared run by run.
func (b *Bitmap) Equal(o *Bitmap, start, n uint64) bool {
	if n == 0 {
		return true
	}
	end := start + n - 1
	for i := start; i <= end; {
		pi := i >> pageShift
		base := pi << pageShift
		lo, hi := i-base, min(end-base, pageMask)
		pb, po := b.pageAt(pi), o.pageAt(pi)
		switch {
		case pb == po:
		case (pb == nil || pb.w == nil) && (po == nil || po.w == nil):
			if !sameRuns(pb, po, uint16(lo), uint16(hi)) {
				return false
			}
		default:
			for k := lo >> 6; k <= hi>>6; k++ {
				m := maskBits(max(lo, k<<6)&63, min(hi, k<<6+63)&63)
				if pb.wordOf(uint16(k))&m != po.wordOf(uint16(k))&m {
					return false
				}
			}
		}
		i = base + hi + 1
	}
	return true
}

// Compact turns the dense pages of [start, start+n) that hold at most
// compactRuns runs back into run pages, all-set ones into the shared full
// page and all-clear ones into absent pages, and returns the bytes freed.
//
// A page goes dense after maxEdits changes whatever its runs, so a group
// of files allocated one after another (each its own SetRange) ends dense
// although its bits are a few runs: on a 4 TiB volume holding 2M small
// files in 2048 directories that is 8 MB of dense pages for 1 MB of
// runs. Compact must not run while another goroutine changes the map;
// passes call it when their workers have stopped.
func (b *Bitmap) Compact(start, n uint64) uint64 {
	if start >= b.len || n == 0 {
		return 0
	}
	n = min(n, b.len-start)
	var freed uint64
	var buf [compactRuns]run
	for pi := start >> pageShift; pi <= (start+n-1)>>pageShift; pi++ {
		p := b.pages[pi].Load()
		if p == nil || p.w == nil {
			continue
		}
		runs, ok := denseRuns(p.w, buf[:0])
		if !ok {
			continue
		}
		var np *page
		switch {
		case len(runs) == 0:
		case len(runs) == 1 && runs[0] == run{0, pageMask}:
			np = fullPage
		default:
			np = &page{runs: append([]run(nil), runs...)}
		}
		b.pages[pi].Store(np)
		b.dense.Add(-1)
		freed += pageWords*8 + 32
	}
	return freed
}

// denseRuns appends the runs of set bits of dense words w to runs, and
// reports false as soon as there are more than cap(runs).
func denseRuns(w *[pageWords]uint64, runs []run) ([]run, bool) {
	ok := wordRuns(pageWords*64, func(k uint64) uint64 { return w[k] }, func(lo, hi uint64) bool {
		if len(runs) == cap(runs) {
			return false
		}
		runs = append(runs, run{uint16(lo), uint16(hi - 1)})
		return true
	})
	return runs, ok
}

// pageAt returns page pi, nil past the table.
func (b *Bitmap) pageAt(pi uint64) *page {
	if pi >= uint64(len(b.pages)) {
		return nil
	}
	return b.pages[pi].Load()
}

// wordOf returns word k of a page of any kind (nil: zero).
func (p *page) wordOf(k uint16) uint64 {
	switch {
	case p == nil:
		return 0
	case p.w != nil:
		return p.w[k]
	}
	return p.runsWord(k)
}

// sameRuns reports whether two run pages (nil: empty) hold the same bits
// in lo..hi.
func sameRuns(a, b *page, lo, hi uint16) bool {
	var ra, rb []run
	if a != nil {
		ra = a.runs
	}
	if b != nil {
		rb = b.runs
	}
	clip := func(rs []run) []run {
		for len(rs) > 0 && rs[0].hi < lo {
			rs = rs[1:]
		}
		for len(rs) > 0 && rs[len(rs)-1].lo > hi {
			rs = rs[:len(rs)-1]
		}
		return rs
	}
	ra, rb = clip(ra), clip(rb)
	if len(ra) != len(rb) {
		return false
	}
	for k := range ra {
		x, y := ra[k], rb[k]
		x.lo, y.lo = max(x.lo, lo), max(y.lo, lo)
		x.hi, y.hi = min(x.hi, hi), min(y.hi, hi)
		if x != y {
			return false
		}
	}
	return true
}

// CountAnd returns the number of bits in [start, start+n) set in both b
// and o.
func (b *Bitmap) CountAnd(o *Bitmap, start, n uint64) uint64 {
	var c uint64
	for k := uint64(0); k < n; {
		i := start + k
		if i&pageMask == 0 && n-k >= pageBits && (i >= b.len || b.pages[i>>pageShift].Load() == nil || i >= o.len || o.pages[i>>pageShift].Load() == nil) {
			k += pageBits
			continue
		}
		step := min(64, n-k)
		w := b.bitsAt(i) & o.bitsAt(i)
		if step < 64 {
			w &= 1<<step - 1
		}
		c += uint64(bits.OnesCount64(w))
		k += step
	}
	return c
}

// Extract copies n bits starting at bit start into dst as a little-endian
// on-disk bitmap (bit k of the range is bit k%8 of byte k/8). Bits past Len
// read as zero.
func (b *Bitmap) Extract(dst []byte, start, n uint64) {
	clear(dst[:(n+7)/8])
	for k := uint64(0); k < n; k += 64 {
		w := b.bitsAt(start + k)
		if w == 0 {
			continue
		}
		if left := n - k; left < 64 {
			w &= 1<<left - 1
		}
		for j := uint64(0); j < 8 && k/8+j < (n+7)/8; j++ {
			dst[k/8+j] = byte(w >> (8 * j))
		}
	}
}

// Clone returns a copy of the bitmap (not safe against concurrent
// writers). Run pages are shared, being immutable.
func (b *Bitmap) Clone() *Bitmap { return b.CloneLen(b.len) }

// CloneLen returns a copy of the bitmap resized to n bits: bits past the
// old length are clear, bits at or past n are dropped.
func (b *Bitmap) CloneLen(n uint64) *Bitmap {
	c := New(n)
	for i := range c.pages {
		if i >= len(b.pages) {
			break
		}
		p := b.pages[i].Load()
		if p == nil {
			continue
		}
		base := uint64(i) << pageShift
		if p.w != nil {
			w := *p.w
			np := &page{w: &w}
			if base+pageBits > n {
				for k := range w {
					lo := base + uint64(k)<<6
					switch {
					case lo >= n:
						w[k] = 0
					case lo+64 > n:
						w[k] &= 1<<(n-lo) - 1
					}
				}
			}
			c.pages[i].Store(np)
			c.dense.Add(1)
			continue
		}
		if base+pageBits > n {
			p = makePage(nil, minusRuns(p.runs, uint16(n-base), pageMask))
			if p != nil && p.w != nil {
				c.dense.Add(1)
			}
		}
		c.pages[i].Store(p)
	}
	return c
}

// Batch gathers marks made by one goroutine, bit by bit or range by range,
// into a few pending runs before they reach the maps, so that marking a
// flex group's bitmaps and inode tables one group at a time (interleaved
// runs, each growing by one) costs a run page a handful of edits instead
// of one per block. Test sees the pending runs. The maps must not be
// written by anyone else until Flush.
type Batch struct {
	maps    []*Bitmap // the first is the one Test reads
	pending [batchRuns]struct{ start, n uint64 }
	used    int
}

const batchRuns = 8

// NewBatch returns a batch marking every one of maps (at least one).
func NewBatch(maps ...*Bitmap) *Batch { return &Batch{maps: maps} }

// Test reports whether bit i is set in the first map or pending.
func (b *Batch) Test(i uint64) bool {
	for k := 0; k < b.used; k++ {
		if r := b.pending[k]; i >= r.start && i-r.start < r.n {
			return true
		}
	}
	return b.maps[0].Test(i)
}

// AnySet reports whether a bit of [start, start+n) is set in the first map
// or pending.
func (b *Batch) AnySet(start, n uint64) bool {
	for k := 0; k < b.used; k++ {
		if r := b.pending[k]; start < r.start+r.n && r.start < start+n {
			return true
		}
	}
	return b.maps[0].AnySet(start, n)
}

// Mark sets bits [start, start+n) in every map, eventually.
func (b *Batch) Mark(start, n uint64) {
	if n == 0 {
		return
	}
	for k := 0; k < b.used; k++ {
		if r := &b.pending[k]; r.start+r.n == start {
			r.n += n
			return
		}
	}
	if b.used == batchRuns {
		b.flushOne(0)
	}
	b.pending[b.used] = struct{ start, n uint64 }{start, n}
	b.used++
}

// flushOne sets pending run k in the maps and drops it.
func (b *Batch) flushOne(k int) {
	r := b.pending[k]
	for _, m := range b.maps {
		m.SetRange(r.start, r.n, nil)
	}
	copy(b.pending[k:], b.pending[k+1:b.used])
	b.used--
}

// Flush sets every pending run in the maps.
func (b *Batch) Flush() {
	for b.used > 0 {
		b.flushOne(0)
	}
}
