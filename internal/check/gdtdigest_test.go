package check

import "testing"

// TestGDTDigest: the digest that stands for the descriptors as opened
// (repairState.origGDT) matches the same bytes, tells a change of any
// one byte, and matches again once the byte is restored.
func TestGDTDigest(t *testing.T) {
	gdt := make([]byte, 64<<10)
	for i := range gdt {
		gdt[i] = byte(i * 7)
	}
	d := newGDTDigest(gdt)
	if !d.matches(gdt) {
		t.Fatal("the digest does not match the table it was made of")
	}
	for _, i := range []int{0, 1, 4095, 4096, len(gdt) - 1} {
		gdt[i] ^= 0x10
		if d.matches(gdt) {
			t.Errorf("byte %d changed: the digest still matches", i)
		}
		gdt[i] ^= 0x10
		if !d.matches(gdt) {
			t.Errorf("byte %d restored: the digest no longer matches", i)
		}
	}
	if d.matches(gdt[:len(gdt)-64]) {
		t.Error("a shorter table matches")
	}
}
