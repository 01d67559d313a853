package csum

import "testing"

// Known answers: CRC32C("123456789") with standard init/xorout is 0xE3069283,
// so the raw form from ^0 is its complement. CRC-16/ARC("123456789") with
// init 0 is 0xBB3D; CRC-32/MPEG-2 (big-endian, init ^0, no xorout) is 0x0376E6E7.
func TestKnownAnswers(t *testing.T) {
	msg := []byte("123456789")
	if got := ^Crc32c(^uint32(0), msg); got != 0xE3069283 {
		t.Errorf("crc32c = %#x, want 0xe3069283", got)
	}
	if got := Crc16(0, msg); got != 0xBB3D {
		t.Errorf("crc16 = %#x, want 0xbb3d", got)
	}
	if got := Crc32Be(^uint32(0), msg); got != 0x0376E6E7 {
		t.Errorf("crc32be = %#x, want 0x0376e6e7", got)
	}
	// Feeding in two pieces equals feeding at once.
	if a, b := Crc32c(7, msg), Crc32c(Crc32c(7, msg[:4]), msg[4:]); a != b {
		t.Errorf("crc32c not incremental: %#x vs %#x", a, b)
	}
	if a, b := Crc32cUint32(1, 0x04030201), Crc32c(1, []byte{1, 2, 3, 4}); a != b {
		t.Errorf("Crc32cUint32 = %#x, want %#x", a, b)
	}
	if a, b := Crc32cZeros(0x12345678, 6), Crc32c(0x12345678, make([]byte, 6)); a != b {
		t.Errorf("Crc32cZeros = %#x, want %#x", a, b)
	}
	if n := testing.AllocsPerRun(100, func() { Crc32cUint32(Crc32cZeros(1, 4), 7) }); n != 0 {
		t.Errorf("Crc32cUint32/Crc32cZeros allocate %v times", n)
	}
}
