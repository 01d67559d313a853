package bitmap

import "testing"

// BenchmarkSetRange marks extents of a fragmented file (pass 1's block
// ownership): 8-block runs, one claim each.
func BenchmarkSetRange(b *testing.B) {
	m := New(1 << 24)
	var i uint64
	for b.Loop() {
		m.SetRange((i*8)%(1<<24-8), 8, nil)
		i++
	}
}

// BenchmarkExtractCompare is pass 5's range-wise comparison of one group.
func BenchmarkExtractCompare(b *testing.B) {
	m := New(1 << 20)
	m.SetRange(0, 1<<19, nil)
	dst := make([]byte, 32768/8)
	for b.Loop() {
		m.Extract(dst, 65536, 32768)
	}
}

// BenchmarkTestAndSet is pass 1's claim of single blocks spread over a
// volume whose pages are dense (a filled filesystem).
func BenchmarkTestAndSet(b *testing.B) {
	m := New(1 << 26)
	m.SetRange(0, 1<<26, nil)
	for i := uint64(0); i < 1<<26; i += 3 {
		m.Clear(i)
	}
	var i uint64
	for b.Loop() {
		m.TestAndSet((i * 0x9e3779b97f4a7c15) >> 38)
		i++
	}
}

// BenchmarkTest is a plain read of the same map.
func BenchmarkTest(b *testing.B) {
	m := New(1 << 26)
	for i := uint64(0); i < 1<<26; i += 3 {
		m.Set(i)
	}
	var i uint64
	var n int
	for b.Loop() {
		if m.Test((i * 0x9e3779b97f4a7c15) >> 38) {
			n++
		}
		i++
	}
	_ = n
}
