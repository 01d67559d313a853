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
