package ondisk

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// TestMMPLayout checks the view against struct mmp_struct's offsets and
// size, the name fields as gethostname and strncpy fill them, and the
// checksum (crc32c over the 1020 bytes before mmp_checksum).
func TestMMPLayout(t *testing.T) {
	if _, err := NewMMP(make([]byte, MMPSize-1)); err == nil {
		t.Fatal("short buffer accepted")
	}
	b := make([]byte, 4096)
	m, err := NewMMP(b)
	if err != nil || len(m) != MMPSize {
		t.Fatalf("NewMMP: %d bytes, %v", len(m), err)
	}
	m.SetMagic(MMPMagic)
	m.SetSeq(MMPSeqFsck)
	m.SetTime(0x1122334455667788)
	m.SetCheckInterval(300)
	for off, want := range map[int]uint64{0: MMPMagic, 4: MMPSeqFsck, 8: 0x1122334455667788, 0x70: 300} {
		var got uint64
		switch off {
		case 8:
			got = binary.LittleEndian.Uint64(b[off:])
		case 0x70:
			got = uint64(binary.LittleEndian.Uint16(b[off:]))
		default:
			got = uint64(binary.LittleEndian.Uint32(b[off:]))
		}
		if got != want {
			t.Errorf("field at %#x = %#x, want %#x", off, got, want)
		}
	}
	m.PutNodeName([]byte("a-long-host-name"))
	m.PutNodeName([]byte("vm"))
	if !bytes.Equal(m.NodeName(), []byte("vm")) || b[0x10+3] != 'o' {
		t.Errorf("node name %q, bytes %q: gethostname leaves the old tail after its NUL", m.NodeName(), b[0x10:0x20])
	}
	long := bytes.Repeat([]byte("d"), 40)
	m.PutBdevName(long)
	if !bytes.Equal(m.BdevName(), long[:MMPBdevNameLen]) || b[0x70] != 44 {
		t.Errorf("device name %q: want 32 bytes, truncated, next field intact", m.BdevName())
	}
	m.PutBdevName([]byte("/dev/x"))
	if !bytes.Equal(b[0x50:0x70], append([]byte("/dev/x"), make([]byte, 26)...)) {
		t.Errorf("device name not NUL-padded: %q", b[0x50:0x70])
	}
	const seed = 0x12345678
	m.SetChecksum(seed)
	want := ^crc32.Update(^uint32(seed), crc32.MakeTable(crc32.Castagnoli), b[:0x3FC])
	if m.Checksum() != want || binary.LittleEndian.Uint32(b[0x3FC:]) != want {
		t.Errorf("checksum %#x, want %#x", m.Checksum(), want)
	}
	if b[MMPSize] != 0 {
		t.Error("wrote past the structure")
	}
}
