package check

import (
	"sync"
	"sync/atomic"

	"gofsck/internal/bitmap"
)

// lazyMap is a bitmap made on its first set: the duplicate-block map,
// empty on nearly every volume, whose page table alone is 8 bytes per 128
// MiB of blocks (4 MB on 64 TiB, 64 MB on 1 PiB). All of a Checker's
// shards share one lazyMap, so a map one worker makes is every worker's.
type lazyMap struct {
	n    uint64
	once sync.Once
	m    atomic.Pointer[bitmap.Bitmap]
}

func newLazyMap(n uint64) *lazyMap { return &lazyMap{n: n} }

// get returns the map, making it when it does not exist yet.
func (l *lazyMap) get() *bitmap.Bitmap {
	if m := l.m.Load(); m != nil {
		return m
	}
	l.once.Do(func() { l.m.Store(bitmap.New(l.n)) })
	return l.m.Load()
}

// Test reports whether bit i is set (false before the map exists).
func (l *lazyMap) Test(i uint64) bool {
	m := l.m.Load()
	return m != nil && m.Test(i)
}

// TestAndSet sets bit i and reports whether it was set.
func (l *lazyMap) TestAndSet(i uint64) bool { return l.get().TestAndSet(i) }

// Clear clears bit i.
func (l *lazyMap) Clear(i uint64) {
	if m := l.m.Load(); m != nil {
		m.Clear(i)
	}
}

// Bytes returns the memory the map holds (none before it exists).
func (l *lazyMap) Bytes() uint64 {
	if m := l.m.Load(); m != nil {
		return m.Bytes()
	}
	return 0
}

// made returns the map, or nil while nothing was set.
func (l *lazyMap) made() *bitmap.Bitmap { return l.m.Load() }
