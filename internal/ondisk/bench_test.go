package ondisk

import (
	"encoding/binary"
	"testing"
)

// BenchmarkInodeChecksum is the per-inode metadata_csum verification of
// pass 1 (256-byte inodes).
func BenchmarkInodeChecksum(b *testing.B) {
	n := make(Inode, 256)
	binary.LittleEndian.PutUint16(n[offIMode:], SIFREG|0o644)
	binary.LittleEndian.PutUint16(n[offIExtraIsize:], 32)
	for b.Loop() {
		n.ChecksumValid(0x12345678, 12)
	}
}

// BenchmarkDirentWalk decodes every entry of a 4 KiB directory block.
func BenchmarkDirentWalk(b *testing.B) {
	blk := make([]byte, 4096)
	off := 0
	for off+32 <= 4096 {
		binary.LittleEndian.PutUint32(blk[off:], 12)
		rec := 32
		if off+rec+32 > 4096 {
			rec = 4096 - off
		}
		binary.LittleEndian.PutUint16(blk[off+4:], uint16(rec))
		blk[off+6] = 20
		off += rec
	}
	for b.Loop() {
		for o := 0; o < 4096; {
			d, ok := DecodeDirent(blk, o, 4096)
			if !ok || d.RecLen == 0 {
				break
			}
			o += d.RecLen
		}
	}
}
