package check

import (
	"sync"
	"sync/atomic"

	"gofsck/internal/bitmap"
)

// countPageBits sets the number of inodes per page of a counts array.
const countPageBits = 12

// countOverflow marks a byte whose value lives in the overflow map.
const countOverflow = 0xFF

// counts is a per-inode counter (link counts from pass 1, references from
// pass 2) that costs memory only where it is used. A count of 1, by far
// the most common (every file with one name), is a bit of one; other
// values are one byte per inode, in pages allocated on their first write,
// with the rare values of 255 and more kept in a map (as e2fsck's icount
// keeps single counts in a bitmap and the others in a list). Values
// saturate at 0xFFFF, as e2fsck's do.
//
// Set may be called concurrently for distinct inodes (pass 1's workers own
// disjoint groups): one's bits and the pages' pointers change atomically,
// and the overflow map has its own lock. Get and Add are not safe against
// a concurrent Set of the same inode.
type counts struct {
	one   *bitmap.Bitmap // inodes whose count is 1 (their page byte is 0)
	pages []atomic.Pointer[[1 << countPageBits]uint8]
	mu    sync.Mutex
	over  map[uint32]uint16
}

// newCounts returns a zeroed counter for inodes 0..n-1. It allocates one
// pointer per page of inodes.
func newCounts(n uint64) *counts {
	return &counts{one: bitmap.New(n), pages: make([]atomic.Pointer[[1 << countPageBits]uint8], (n+(1<<countPageBits)-1)>>countPageBits)}
}

// page returns the page holding ino, allocating it when alloc is set; nil
// when it is absent (all counts zero) or ino is out of range.
func (c *counts) page(ino uint32, alloc bool) *[1 << countPageBits]uint8 {
	i := uint64(ino) >> countPageBits
	if i >= uint64(len(c.pages)) {
		return nil
	}
	p := c.pages[i].Load()
	if p != nil || !alloc {
		return p
	}
	p = new([1 << countPageBits]uint8)
	if c.pages[i].CompareAndSwap(nil, p) {
		return p
	}
	return c.pages[i].Load()
}

// Get returns ino's count.
func (c *counts) Get(ino uint32) uint16 {
	if c.one.Test(uint64(ino)) {
		return 1
	}
	p := c.page(ino, false)
	if p == nil {
		return 0
	}
	v := p[ino&(1<<countPageBits-1)]
	if v != countOverflow {
		return uint16(v)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.over[ino]
}

// onesWord returns the aligned 64 inodes 64k..64k+63 whose count is 1, as
// bits (bit j is inode 64k+j). Their bytes are zero (Set keeps them so),
// so a set bit is the whole of the inode's count.
func (c *counts) onesWord(k uint64) uint64 { return c.one.Word(k) }

// Set stores ino's count.
func (c *counts) Set(ino uint32, v uint16) {
	if v == 1 {
		c.one.Set(uint64(ino))
		v = 0 // and the byte, if any, is cleared
	} else {
		c.one.Clear(uint64(ino))
	}
	p := c.page(ino, v != 0)
	if p == nil {
		return
	}
	slot := &p[ino&(1<<countPageBits-1)]
	if v < countOverflow {
		if *slot == countOverflow {
			c.mu.Lock()
			delete(c.over, ino)
			c.mu.Unlock()
		}
		*slot = uint8(v)
		return
	}
	c.mu.Lock()
	if c.over == nil {
		c.over = map[uint32]uint16{}
	}
	c.over[ino] = v
	c.mu.Unlock()
	*slot = countOverflow
}

// Add increments ino's count, saturating at 0xFFFF, and returns the new
// value.
func (c *counts) Add(ino uint32) uint16 {
	v := c.Get(ino)
	if v < 0xFFFF {
		v++
		c.Set(ino, v)
	}
	return v
}

// Bytes returns the memory the counter holds now (pages and the page
// table; the overflow map is counted at 8 bytes an entry).
func (c *counts) Bytes() uint64 {
	b := uint64(len(c.pages))*8 + c.one.Bytes()
	for i := range c.pages {
		if c.pages[i].Load() != nil {
			b += 1 << countPageBits
		}
	}
	c.mu.Lock()
	b += uint64(len(c.over)) * 8
	c.mu.Unlock()
	return b
}
