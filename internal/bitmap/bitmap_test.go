package bitmap

import "testing"

func TestSetRangeReportsSecondClaims(t *testing.T) {
	b := New(300)
	b.SetRange(10, 100, func(i uint64) { t.Errorf("unexpected dup %d", i) })
	var dups []uint64
	b.SetRange(100, 150, func(i uint64) { dups = append(dups, i) })
	if len(dups) != 10 || dups[0] != 100 || dups[9] != 109 {
		t.Fatalf("dups = %v, want 100..109", dups)
	}
	if got := b.Count(0, 300); got != 240 {
		t.Fatalf("Count = %d, want 240", got)
	}
	if !b.TestAndSet(5) == true && b.TestAndSet(5) != true {
		t.Fatal("TestAndSet did not report the second claim")
	}
	if b.NextSet(0) != 5 || b.NextSet(6) != 10 || b.NextSet(250) != 300 {
		t.Fatalf("NextSet wrong: %d %d %d", b.NextSet(0), b.NextSet(6), b.NextSet(250))
	}
	// Out-of-range operations are ignored, never panic.
	b.Set(1 << 40)
	b.SetRange(299, 1<<40, nil)
	if !b.Test(299) || b.Test(300) {
		t.Fatal("range clamp wrong")
	}
}

func TestExtractMatchesBits(t *testing.T) {
	b := New(200)
	for _, i := range []uint64{0, 7, 8, 63, 64, 65, 130, 199} {
		b.Set(i)
	}
	dst := make([]byte, 25)
	b.Extract(dst, 0, 200)
	for i := uint64(0); i < 200; i++ {
		if got := dst[i/8]&(1<<(i%8)) != 0; got != b.Test(i) {
			t.Fatalf("bit %d: extracted %v, map %v", i, got, b.Test(i))
		}
	}
	b.Extract(dst, 63, 8)
	if dst[0] != 0b111 {
		t.Fatalf("unaligned extract = %08b, want 00000111", dst[0])
	}
}

// TestWordMatchesBits reads a map of every representation (absent, runs,
// dense) a word at a time and wants Test's bits, and zeros past Len.
func TestWordMatchesBits(t *testing.T) {
	const n = 3*pageBits + 100
	b := New(n)
	b.SetRange(70, 3, nil)          // runs in page 0
	b.SetRange(pageBits-5, 10, nil) // across pages 0 and 1
	for i := uint64(2 * pageBits); i < 2*pageBits+5000; i += 3 {
		b.Set(i) // page 2 goes dense
	}
	b.SetRange(n-40, 40, nil) // up to Len
	for k := uint64(0); k < (n+63)/64+2; k++ {
		var want uint64
		for j := uint64(0); j < 64; j++ {
			if b.Test(k*64 + j) {
				want |= 1 << j
			}
		}
		if got := b.Word(k); got != want {
			t.Fatalf("Word(%d) = %#x, want %#x", k, got, want)
		}
	}
	if b.DensePages() == 0 {
		t.Fatal("no dense page: the test lost its dense case")
	}
}
