// Package csum implements the checksums of the ext4 on-disk format and of
// jbd2, in the exact conventions the kernel uses.
//
//   - CRC32C is the Castagnoli CRC in the kernel's "raw" form: the caller
//     passes the initial value (usually ^0 or a filesystem seed) and no final
//     inversion is applied. Go's hash/crc32 inverts on entry and exit, so
//     Crc32c(seed, p) == ^crc32.Update(^seed, castagnoli, p). It uses the
//     hardware instruction where the CPU has one.
//   - CRC16 is the ANSI CRC-16 (polynomial 0x8005, reflected as 0xA001) used by
//     the uninit_bg group-descriptor checksum, again without final inversion.
//   - Crc32Be is the big-endian (non-reflected) CRC32 with polynomial
//     0x04C11DB7 used by jbd2's v1 "compat checksum" commit blocks.
package csum

import "hash/crc32"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Crc32c continues a raw CRC32C from crc over p.
func Crc32c(crc uint32, p []byte) uint32 {
	return ^crc32.Update(^crc, castagnoli, p)
}

// Crc32cUint32 feeds one little-endian 32-bit word, as the kernel does when it
// checksums an inode number or a generation. It uses a byte table rather
// than hash/crc32 so that no buffer escapes to the heap (it runs per inode).
func Crc32cUint32(crc uint32, v uint32) uint32 {
	for i := 0; i < 4; i++ {
		crc = crc>>8 ^ castagnoliTable[byte(crc)^byte(v)]
		v >>= 8
	}
	return crc
}

// Crc32cZeros feeds n zero bytes (the zeroed checksum fields), without
// allocating.
func Crc32cZeros(crc uint32, n int) uint32 {
	for ; n > 0; n-- {
		crc = crc>>8 ^ castagnoliTable[byte(crc)]
	}
	return crc
}

// castagnoliTable is the reflected byte table of the Castagnoli polynomial,
// for the raw (non-inverting) form used above.
var castagnoliTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0x82F63B78
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()

// crc16Table is the reflected table for polynomial 0x8005.
var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xA001
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()

// Crc16 continues a CRC-16 (ANSI, reflected) from crc over p.
func Crc16(crc uint16, p []byte) uint16 {
	for _, b := range p {
		crc = crc>>8 ^ crc16Table[byte(crc)^b]
	}
	return crc
}

// crc32BeTable is the MSB-first table for polynomial 0x04C11DB7.
var crc32BeTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i) << 24
		for range 8 {
			if c&0x80000000 != 0 {
				c = c<<1 ^ 0x04C11DB7
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// Crc32Be continues a big-endian CRC32 from crc over p (jbd2 v1 checksums).
func Crc32Be(crc uint32, p []byte) uint32 {
	for _, b := range p {
		crc = crc<<8 ^ crc32BeTable[byte(crc>>24)^b]
	}
	return crc
}
