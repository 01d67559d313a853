package blockdev

import (
	"runtime"
	"syscall"
)

// offHeapMin is the smallest buffer OffHeap maps outside the heap.
const offHeapMin = 1 << 20

// OffHeap returns n zeroed bytes for a large buffer that lives as long as
// owner and holds no pointers (the group descriptor table): from an
// anonymous mapping when n is at least 1 MiB, else from the heap. The
// mapping is unmapped once owner is unreachable, so the slice and every
// slice of it must not be kept past owner.
//
// Why: the collector lets the heap grow to gcPercent past its live bytes,
// and a table that is live for the whole run counts as live. The 32 MB of
// descriptors of a 64 TiB volume would let the heap grow 16 MB more (256 MB
// more at 1 PiB) for garbage that a smaller heap collects just as well.
// When the mapping fails (a limit on mappings), the heap serves instead.
func OffHeap[T any](owner *T, n int) []byte {
	if n < offHeapMin {
		return make([]byte, n)
	}
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n)
	}
	runtime.AddCleanup(owner, func(b []byte) { unmap(b) }, b)
	return b
}

// unmap releases an OffHeap mapping (a variable for the test).
var unmap = syscall.Munmap
