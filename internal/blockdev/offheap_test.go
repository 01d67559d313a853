package blockdev

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

func TestOffHeapLivesAsLongAsItsOwner(t *testing.T) {
	var freed atomic.Int32
	var freedAddr atomic.Uintptr
	unmap = func(b []byte) error {
		freedAddr.Store(uintptr(unsafe.Pointer(&b[0])))
		freed.Add(1)
		return syscall.Munmap(b)
	}
	defer func() { unmap = syscall.Munmap }()
	type owner struct{ buf []byte }
	o := &owner{}
	o.buf = OffHeap(o, 3<<20)
	if len(o.buf) != 3<<20 {
		t.Fatalf("len %d", len(o.buf))
	}
	for i := range o.buf {
		if o.buf[i] != 0 {
			t.Fatalf("byte %d is %d, not zero", i, o.buf[i])
		}
		o.buf[i] = byte(i)
	}
	addr := uintptr(unsafe.Pointer(&o.buf[0]))
	runtime.GC()
	if freed.Load() != 0 {
		t.Fatal("the mapping was released while its owner is alive")
	}
	runtime.KeepAlive(o)
	o = nil
	// Cleanups run after a collection, on a goroutine of their own.
	for i := 0; i < 60000 && freed.Load() == 0; i++ { // up to 10 minutes under load
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if freed.Load() != 1 || freedAddr.Load() != addr {
		t.Fatalf("released %d mappings (%#x), want the one at %#x", freed.Load(), freedAddr.Load(), addr)
	}
	small := OffHeap(&owner{}, 4096)
	if len(small) != 4096 {
		t.Fatalf("small buffer: len %d", len(small))
	}
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	if freed.Load() != 1 {
		t.Fatal("a small buffer, from the heap, was unmapped")
	}
}
