// Package bitmap provides the dense bitmaps the checker keeps for inodes and
// blocks (clusters). Bits are stored in uint64 words; the Set/TestAndSet
// methods are atomic so that pass-1 workers can share one map without
// locks, while Test and the range scans are plain reads meant for phases
// where no writer runs.
package bitmap

import (
	"math/bits"
	"sync/atomic"
)

// Bitmap is a fixed-size set of bits numbered [0, Len).
type Bitmap struct {
	w   []uint64
	len uint64
}

// New returns an empty bitmap of n bits.
func New(n uint64) *Bitmap {
	return &Bitmap{w: make([]uint64, (n+63)/64), len: n}
}

// Len returns the number of bits.
func (b *Bitmap) Len() uint64 { return b.len }

// Test reports whether bit i is set (false when out of range).
func (b *Bitmap) Test(i uint64) bool {
	if i >= b.len {
		return false
	}
	return b.w[i>>6]&(1<<(i&63)) != 0
}

// TestAtomic is Test with an atomic load, for a bit another goroutine may
// Set or Clear meanwhile.
func (b *Bitmap) TestAtomic(i uint64) bool {
	if i >= b.len {
		return false
	}
	return atomic.LoadUint64(&b.w[i>>6])&(1<<(i&63)) != 0
}

// Set sets bit i atomically (ignored when out of range).
func (b *Bitmap) Set(i uint64) {
	if i >= b.len {
		return
	}
	atomic.OrUint64(&b.w[i>>6], 1<<(i&63))
}

// Clear clears bit i atomically.
func (b *Bitmap) Clear(i uint64) {
	if i >= b.len {
		return
	}
	atomic.AndUint64(&b.w[i>>6], ^uint64(1<<(i&63)))
}

// TestAndSet sets bit i and reports whether it was already set. It is the
// O(1) second-claim detector of block ownership.
func (b *Bitmap) TestAndSet(i uint64) bool {
	if i >= b.len {
		return false
	}
	m := uint64(1) << (i & 63)
	return atomic.OrUint64(&b.w[i>>6], m)&m != 0
}

// SetRange sets bits [start, start+n) and calls dup for every bit in the
// range that was already set. Whole words are set with one atomic
// operation each, so marking a long extent costs n/64 operations.
func (b *Bitmap) SetRange(start, n uint64, dup func(i uint64)) {
	if start >= b.len {
		return
	}
	if n > b.len-start {
		n = b.len - start
	}
	end := start + n
	for i := start; i < end; {
		word := i >> 6
		lo := i & 63
		hi := uint64(64)
		if (end-1)>>6 == word {
			hi = (end-1)&63 + 1
		}
		var m uint64
		if hi-lo == 64 {
			m = ^uint64(0)
		} else {
			m = ((1 << (hi - lo)) - 1) << lo
		}
		old := atomic.OrUint64(&b.w[word], m)
		if was := old & m; was != 0 && dup != nil {
			for was != 0 {
				t := uint64(bits.TrailingZeros64(was))
				dup(word<<6 | t)
				was &= was - 1
			}
		}
		i = word<<6 + hi
	}
}

// AnySet reports whether any bit in [start, start+n) is set.
func (b *Bitmap) AnySet(start, n uint64) bool {
	if start >= b.len {
		return false
	}
	if n > b.len-start {
		n = b.len - start
	}
	i := b.NextSet(start)
	return i < start+n
}

// NextSet returns the first set bit at or after i, or Len when none.
func (b *Bitmap) NextSet(i uint64) uint64 {
	if i >= b.len {
		return b.len
	}
	word := i >> 6
	w := b.w[word] >> (i & 63)
	if w != 0 {
		r := i + uint64(bits.TrailingZeros64(w))
		return min(r, b.len)
	}
	for word++; word < uint64(len(b.w)); word++ {
		if b.w[word] != 0 {
			return min(word<<6+uint64(bits.TrailingZeros64(b.w[word])), b.len)
		}
	}
	return b.len
}

// Count returns the number of set bits in [start, start+n).
func (b *Bitmap) Count(start, n uint64) uint64 {
	if start >= b.len {
		return 0
	}
	if n > b.len-start {
		n = b.len - start
	}
	var c uint64
	end := start + n
	for i := start; i < end; {
		word := i >> 6
		lo := i & 63
		hi := uint64(64)
		if (end-1)>>6 == word {
			hi = (end-1)&63 + 1
		}
		w := b.w[word] >> lo
		if hi-lo < 64 {
			w &= (1 << (hi - lo)) - 1
		}
		c += uint64(bits.OnesCount64(w))
		i = word<<6 + hi
	}
	return c
}

// Extract copies n bits starting at bit start into dst as a little-endian
// on-disk bitmap (bit k of the range is bit k%8 of byte k/8). Bits past Len
// read as zero.
func (b *Bitmap) Extract(dst []byte, start, n uint64) {
	clear(dst[:(n+7)/8])
	for k := uint64(0); k < n; {
		i := start + k
		if i >= b.len {
			return
		}
		if i&63 == 0 && k&7 == 0 && n-k >= 64 && i+64 <= b.len {
			w := b.w[i>>6]
			for j := uint64(0); j < 8; j++ {
				dst[k/8+j] = byte(w >> (8 * j))
			}
			k += 64
			continue
		}
		if b.w[i>>6]&(1<<(i&63)) != 0 {
			dst[k/8] |= 1 << (k & 7)
		}
		k++
	}
}

// Clone returns a copy of the bitmap (not safe against concurrent writers).
func (b *Bitmap) Clone() *Bitmap {
	return &Bitmap{w: append([]uint64(nil), b.w...), len: b.len}
}

// CloneLen returns a copy of the bitmap resized to n bits: bits past the
// old length are clear, bits at or past n are dropped.
func (b *Bitmap) CloneLen(n uint64) *Bitmap {
	c := New(n)
	copy(c.w, b.w)
	if r := n & 63; r != 0 && len(c.w) > 0 {
		c.w[len(c.w)-1] &= 1<<r - 1
	}
	return c
}

// NextClear returns the first clear bit at or after i, or Len when there
// is none.
func (b *Bitmap) NextClear(i uint64) uint64 {
	if i >= b.len {
		return b.len
	}
	word := i >> 6
	w := ^b.w[word] >> (i & 63)
	if w != 0 {
		return min(i+uint64(bits.TrailingZeros64(w)), b.len)
	}
	for word++; word < uint64(len(b.w)); word++ {
		if ^b.w[word] != 0 {
			return min(word<<6+uint64(bits.TrailingZeros64(^b.w[word])), b.len)
		}
	}
	return b.len
}
