package blockdev

import (
	"sync"
	"syscall"
)

// Faulty wraps a device and fails reads that touch chosen byte ranges
// with EIO, as a disk with unreadable sectors does. A write over a whole
// failing range heals it (the disk remaps the sector), so a later read
// succeeds. It exists to test the checker's read-error handling on
// images, since loop devices cannot fail on demand.
type Faulty struct {
	Device
	mu  sync.Mutex
	bad []Extent // failing byte ranges
}

// Extent is a byte range of a device.
type Extent struct{ Off, Len int64 }

// NewFaulty returns dev with reads of the given ranges failing.
func NewFaulty(dev Device, bad []Extent) *Faulty {
	return &Faulty{Device: dev, bad: append([]Extent(nil), bad...)}
}

func overlaps(e Extent, off, n int64) bool { return off < e.Off+e.Len && e.Off < off+n }

// ReadAt fails with EIO when [off, off+len(p)) touches a failing range;
// the bytes before the first failing one are read, as a device returns
// the sectors it could read.
func (d *Faulty) ReadAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	first := int64(-1)
	for _, e := range d.bad {
		if overlaps(e, off, int64(len(p))) && (first < 0 || e.Off < first) {
			first = max(e.Off, off)
		}
	}
	d.mu.Unlock()
	if first < 0 {
		return d.Device.ReadAt(p, off)
	}
	n, _ := d.Device.ReadAt(p[:first-off], off)
	return n, syscall.EIO
}

// WriteAt writes through and heals the failing ranges it covers whole.
func (d *Faulty) WriteAt(p []byte, off int64) (int, error) {
	n, err := d.Device.WriteAt(p, off)
	if err == nil {
		d.mu.Lock()
		kept := d.bad[:0]
		for _, e := range d.bad {
			if !(off <= e.Off && e.Off+e.Len <= off+int64(n)) {
				kept = append(kept, e)
			}
		}
		d.bad = kept
		d.mu.Unlock()
	}
	return n, err
}
