package blockdev

import (
	"io"
	"slices"
	"sync"
	"sync/atomic"
)

// overlayPage is the unit the Overlay keeps: 1024 bytes, the smallest ext
// block size and the size of the superblock, so no filesystem structure
// is split unevenly.
const overlayPage = 1024

// Overlay is a Device that keeps every write in memory and serves reads
// from the pending writes over the base device. A repair decides all its
// fixes against the Overlay; nothing reaches the base device until Flush,
// which writes the changed pages in ascending order through one writer.
// An aborted repair therefore leaves the device untouched.
//
// Reads and writes may come from any goroutine; each WriteAt is atomic
// with respect to other calls (a read sees all of it or none of it).
type Overlay struct {
	Base Device

	mu    sync.RWMutex
	pages map[int64]*[overlayPage]byte // by page index
	dirty atomic.Bool                  // len(pages) > 0, read without mu
	counters
}

// NewOverlay returns an Overlay over base with no pending writes.
func NewOverlay(base Device) *Overlay {
	return &Overlay{Base: base, pages: map[int64]*[overlayPage]byte{}}
}

// ReadAt reads from the base device and patches in the pending writes.
func (o *Overlay) ReadAt(p []byte, off int64) (int, error) {
	n, err := o.Base.ReadAt(p, off)
	if !o.dirty.Load() {
		return n, err
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	end := off + int64(len(p))
	for pg := off / overlayPage; pg*overlayPage < end; pg++ {
		d, ok := o.pages[pg]
		if !ok {
			continue
		}
		start := pg * overlayPage
		lo, hi := max(start, off), min(start+overlayPage, end)
		copy(p[lo-off:hi-off], d[lo-start:hi-start])
		if err != nil && hi-off > int64(n) {
			// A pending write covers what the base could not supply: the
			// read succeeds up to the end of the patched page run.
			n = int(hi - off)
			if n == len(p) {
				err = nil
			}
		}
	}
	return n, err
}

// WriteAt records p as the new contents of [off, off+len(p)). Pages are
// loaded from the base device the first time they are touched, so partial
// page writes keep the bytes around them.
func (o *Overlay) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > o.Base.Size() {
		return 0, io.ErrShortWrite
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	end := off + int64(len(p))
	for pg := off / overlayPage; pg*overlayPage < end; pg++ {
		start := pg * overlayPage
		d, ok := o.pages[pg]
		if !ok {
			d = new([overlayPage]byte)
			lo, hi := max(start, off), min(start+overlayPage, end)
			if lo > start || hi < start+overlayPage {
				// Partly overwritten: keep the rest of the page.
				if _, err := o.Base.ReadAt(d[:], start); err != nil && err != io.EOF {
					return 0, err
				}
			}
			o.pages[pg] = d
		}
		lo, hi := max(start, off), min(start+overlayPage, end)
		copy(d[lo-start:hi-start], p[lo-off:hi-off])
	}
	o.dirty.Store(true)
	o.writeOps.Add(1)
	o.writeBytes.Add(uint64(len(p)))
	return len(p), nil
}

// Size is the base device's size.
func (o *Overlay) Size() int64 { return o.Base.Size() }

// Stats returns the base device's read counters and the Overlay's pending
// write counters.
func (o *Overlay) Stats() Stats {
	s := o.Base.Stats()
	w := o.counters.stats()
	s.WriteBytes += w.WriteBytes
	s.WriteOps += w.WriteOps
	return s
}

// Close closes the base device; pending writes are dropped.
func (o *Overlay) Close() error { return o.Base.Close() }

// Prefetch forwards read-ahead hints to the base device.
func (o *Overlay) Prefetch(off, n int64) {
	if p, ok := o.Base.(Prefetcher); ok {
		p.Prefetch(off, n)
	}
}

// PrefetchLater forwards later-pass hints to the base device.
func (o *Overlay) PrefetchLater(off, n int64) {
	if p, ok := o.Base.(LaterPrefetcher); ok {
		p.PrefetchLater(off, n)
	}
}

// PromoteLater forwards to the base device.
func (o *Overlay) PromoteLater() {
	if p, ok := o.Base.(LaterPrefetcher); ok {
		p.PromoteLater()
	}
}

// Dirty reports whether any write is pending.
func (o *Overlay) Dirty() bool { return o.dirty.Load() }

// PendingBytes is the amount of data Flush would write.
func (o *Overlay) PendingBytes() int64 {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return int64(len(o.pages)) * overlayPage
}

// Discard drops every pending write.
func (o *Overlay) Discard() {
	o.mu.Lock()
	o.pages = map[int64]*[overlayPage]byte{}
	o.dirty.Store(false)
	o.mu.Unlock()
}

// Flush writes the pending pages to w (the base device, or an undo writer
// in front of it) in ascending offset order, contiguous pages in one
// write, and forgets them. Pages whose contents equal the base device's
// are still written: Flush does not read the base again.
func (o *Overlay) Flush(w io.WriterAt) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	idx := make([]int64, 0, len(o.pages))
	for pg := range o.pages {
		idx = append(idx, pg)
	}
	slices.Sort(idx)
	const maxRun = 256 // pages per write (256 KiB)
	buf := make([]byte, 0, maxRun*overlayPage)
	for i := 0; i < len(idx); {
		j := i
		buf = buf[:0]
		for j < len(idx) && j-i < maxRun && idx[j] == idx[i]+int64(j-i) {
			buf = append(buf, o.pages[idx[j]][:]...)
			j++
		}
		if _, err := w.WriteAt(buf, idx[i]*overlayPage); err != nil {
			return err
		}
		for _, pg := range idx[i:j] {
			delete(o.pages, pg)
		}
		i = j
	}
	o.dirty.Store(false)
	return nil
}

var _ Device = (*Overlay)(nil)
