// Package dirhash computes the name hashes that ext3/ext4 hash-indexed
// (htree, dir_index) directories are sorted by.
//
// The algorithm is chosen by dx_root_info.hash_version. Versions 0-2 treat the
// name's bytes as signed chars and 3-5 as unsigned chars; the kernel picks the
// unsigned variant when the superblock has EXT2_FLAGS_UNSIGNED_HASH set (see
// [Version.Unsigned]). The seed is the superblock's s_hash_seed read as four
// little-endian 32-bit words; an all-zero (or nil) seed selects the default
// MD4 initial state, as the kernel does. The legacy hash ignores the seed.
//
// Results follow fs/ext4/hash.c: bit 0 of the major hash is always clear, and
// a major hash equal to the 32-bit end-of-directory cookie
// (EXT4_HTREE_EOF_32BIT<<1 = 0xfffffffe) is moved down to 0xfffffffc.
// libext2fs (and so debugfs dx_hash) omits that last step; it only differs for
// one major hash value in 2^31.
//
// Names are hashed as raw bytes. In a casefolded directory the name is
// folded first (internal/casefold; internal/check's hashName is
// ext2fs_dirhash2), which keeps this package free of Unicode tables. Hash
// does not allocate.
package dirhash

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// Version identifies a directory hash algorithm, as stored in
// dx_root_info.hash_version and s_def_hash_version.
type Version uint8

// Hash versions (DX_HASH_* in the kernel, EXT2_HASH_* in e2fsprogs).
const (
	Legacy          Version = 0 // dx_hack_hash, signed chars
	HalfMD4         Version = 1 // half MD4, signed chars
	TEA             Version = 2 // TEA, signed chars
	LegacyUnsigned  Version = 3 // dx_hack_hash, unsigned chars
	HalfMD4Unsigned Version = 4 // half MD4, unsigned chars
	TEAUnsigned     Version = 5 // TEA, unsigned chars
	SipHash         Version = 6 // SipHash-2-4 of casefolded+encrypted names
)

// versionNames holds the names e2fsprogs uses (e2p_hash2string) for the
// versions it knows, plus names for the unsigned variants.
var versionNames = [...]string{
	Legacy:          "legacy",
	HalfMD4:         "half_md4",
	TEA:             "tea",
	LegacyUnsigned:  "legacy_unsigned",
	HalfMD4Unsigned: "half_md4_unsigned",
	TEAUnsigned:     "tea_unsigned",
	SipHash:         "siphash",
}

// String returns the algorithm's name, or "HASHALG_<n>" for unknown versions
// (the form e2p_hash2string prints).
func (v Version) String() string {
	if int(v) < len(versionNames) {
		return versionNames[v]
	}
	return fmt.Sprintf("HASHALG_%d", uint8(v))
}

// Unsigned maps a signed-char version (0-2) to its unsigned-char twin (3-5),
// as the kernel and e2fsck do for a filesystem with EXT2_FLAGS_UNSIGNED_HASH
// set. Other versions are returned unchanged.
func (v Version) Unsigned() Version {
	if v <= TEA {
		return v + 3
	}
	return v
}

var (
	// ErrUnsupported reports a hash version this package does not know.
	ErrUnsupported = errors.New("dirhash: unsupported hash version")
	// ErrNeedKey reports that SipHash was requested through Hash. The
	// kernel keys it with the directory's fscrypt-derived dirhash key, not
	// with s_hash_seed, so it cannot be computed from the superblock; the
	// hash is stored in the directory entry instead. Use [SipHashKeyed]
	// when the key is known.
	ErrNeedKey = errors.New("dirhash: siphash needs the directory's encryption key")
)

// defaultSeed is the MD4 initial state used when s_hash_seed is all zero.
var defaultSeed = [4]uint32{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476}

// eof32 is EXT4_HTREE_EOF_32BIT<<1: the major hash value the kernel reserves
// as the end-of-directory readdir cookie.
const eof32 = 0x7fffffff << 1

// Hash returns the major and minor hash of name under version v with the
// given s_hash_seed. The minor hash of the legacy versions is 0.
func Hash(v Version, name []byte, seed *[4]uint32) (major, minor uint32, err error) {
	state := defaultSeed
	if seed != nil && *seed != [4]uint32{} {
		state = *seed
	}
	switch v {
	case Legacy, LegacyUnsigned:
		major = legacy(name, v == Legacy)
	case HalfMD4, HalfMD4Unsigned:
		var in [8]uint32
		signed := v == HalfMD4
		for p := name; len(p) > 0; p = p[min(len(p), 32):] {
			fill(in[:], p, signed)
			halfMD4(&state, &in)
		}
		major, minor = state[1], state[2]
	case TEA, TEAUnsigned:
		var in [4]uint32
		signed := v == TEA
		for p := name; len(p) > 0; p = p[min(len(p), 16):] {
			fill(in[:], p, signed)
			tea(&state, &in)
		}
		major, minor = state[0], state[1]
	case SipHash:
		return 0, 0, ErrNeedKey
	default:
		return 0, 0, fmt.Errorf("%w %d", ErrUnsupported, uint8(v))
	}
	return finish(major), minor, nil
}

// SipHashKeyed returns the major and minor hash the kernel computes for a
// name in a casefolded, encrypted directory (hash version 6), given the
// directory's 16-byte fscrypt dirhash key. The 64-bit SipHash-2-4 value is
// split high word major, low word minor.
func SipHashKeyed(key *[16]byte, name []byte) (major, minor uint32) {
	h := sipHash24(binary.LittleEndian.Uint64(key[0:]), binary.LittleEndian.Uint64(key[8:]), name)
	return finish(uint32(h >> 32)), uint32(h)
}

// finish clears the collision bit and steers clear of the EOF cookie, as the
// kernel's ext4fs_dirhash does for every version.
func finish(major uint32) uint32 {
	major &^= 1
	if major == eof32 {
		major = eof32 - 2
	}
	return major
}

// char widens a name byte the way a C char of the given signedness would be
// promoted to int and then converted to __u32.
func char(b byte, signed bool) uint32 {
	if signed {
		return uint32(int32(int8(b)))
	}
	return uint32(b)
}

// legacy is dx_hack_hash: a simple multiplicative hash modulo 2^31-1-ish,
// returning the last state shifted left by one.
func legacy(name []byte, signed bool) uint32 {
	h0, h1 := uint32(0x12a3fe2d), uint32(0x37abe8f9)
	for _, b := range name {
		h := h1 + (h0 ^ char(b, signed)*7152373)
		if h&0x80000000 != 0 {
			h -= 0x7fffffff
		}
		h0, h1 = h, h0
	}
	return h0 << 1
}

// fill packs the first 4*len(in) bytes of msg big-endian-ish into the words
// of in (str2hashbuf). Every word starts from a padding pattern made of the
// length of the whole remaining msg (not just this chunk) repeated in each
// byte, and each name byte is added after shifting the word left by 8; so
// short final words keep some padding in their high bytes, and words past
// the end of msg are pure padding. Signed chars make bytes >= 0x80 subtract.
func fill(in []uint32, msg []byte, signed bool) {
	pad := uint32(len(msg))
	pad |= pad << 8
	pad |= pad << 16
	n := min(len(msg), 4*len(in))
	w, val := 0, pad
	for i := range n {
		val = val<<8 + char(msg[i], signed)
		if i%4 == 3 {
			in[w] = val
			w++
			val = pad
		}
	}
	if w < len(in) {
		in[w] = val
		w++
	}
	for ; w < len(in); w++ {
		in[w] = pad
	}
}

// Round constants of the cut-down MD4: 0, sqrt(2) and sqrt(3) scaled by 2^30.
const (
	md4K2 = 0x5a827999
	md4K3 = 0x6ed9eba1
)

// halfMD4 is the three-round MD4 compression over eight words used by
// half_md4_transform, added into state.
func halfMD4(state *[4]uint32, in *[8]uint32) {
	a, b, c, d := state[0], state[1], state[2], state[3]
	f := func(x, y, z uint32) uint32 { return z ^ (x & (y ^ z)) }
	g := func(x, y, z uint32) uint32 { return (x & y) + ((x ^ y) & z) }
	h := func(x, y, z uint32) uint32 { return x ^ y ^ z }
	rot := bits.RotateLeft32

	// Round 1: selection, words in order.
	for i := 0; i < 8; i += 4 {
		a = rot(a+f(b, c, d)+in[i], 3)
		d = rot(d+f(a, b, c)+in[i+1], 7)
		c = rot(c+f(d, a, b)+in[i+2], 11)
		b = rot(b+f(c, d, a)+in[i+3], 19)
	}
	// Round 2: majority, odd words then even words.
	for _, i := range [2]int{1, 0} {
		a = rot(a+g(b, c, d)+in[i]+md4K2, 3)
		d = rot(d+g(a, b, c)+in[i+2]+md4K2, 5)
		c = rot(c+g(d, a, b)+in[i+4]+md4K2, 9)
		b = rot(b+g(c, d, a)+in[i+6]+md4K2, 13)
	}
	// Round 3: parity, words 3 7 2 6 then 1 5 0 4.
	for _, i := range [2]int{3, 1} {
		a = rot(a+h(b, c, d)+in[i]+md4K3, 3)
		d = rot(d+h(a, b, c)+in[i+4]+md4K3, 9)
		c = rot(c+h(d, a, b)+in[i-1]+md4K3, 11)
		b = rot(b+h(c, d, a)+in[i+3]+md4K3, 15)
	}
	state[0] += a
	state[1] += b
	state[2] += c
	state[3] += d
}

// teaDelta is the TEA key schedule constant, 2^32 / golden ratio.
const teaDelta = 0x9e3779b9

// tea runs 16 cycles of TEA encrypting state[0:2] with the four words of in
// as the key, then adds the result into state (a Davies-Meyer construction).
func tea(state *[4]uint32, in *[4]uint32) {
	var sum uint32
	b0, b1 := state[0], state[1]
	for range 16 {
		sum += teaDelta
		b0 += (b1<<4 + in[0]) ^ (b1 + sum) ^ (b1>>5 + in[1])
		b1 += (b0<<4 + in[2]) ^ (b0 + sum) ^ (b0>>5 + in[3])
	}
	state[0] += b0
	state[1] += b1
}

// sipHash24 is SipHash-2-4 with key (k0, k1) over msg.
func sipHash24(k0, k1 uint64, msg []byte) uint64 {
	v0 := k0 ^ 0x736f6d6570736575
	v1 := k1 ^ 0x646f72616e646f6d
	v2 := k0 ^ 0x6c7967656e657261
	v3 := k1 ^ 0x7465646279746573
	round := func() {
		v0 += v1
		v1 = bits.RotateLeft64(v1, 13) ^ v0
		v0 = bits.RotateLeft64(v0, 32)
		v2 += v3
		v3 = bits.RotateLeft64(v3, 16) ^ v2
		v0 += v3
		v3 = bits.RotateLeft64(v3, 21) ^ v0
		v2 += v1
		v1 = bits.RotateLeft64(v1, 17) ^ v2
		v2 = bits.RotateLeft64(v2, 32)
	}
	n := len(msg)
	for ; len(msg) >= 8; msg = msg[8:] {
		m := binary.LittleEndian.Uint64(msg)
		v3 ^= m
		round()
		round()
		v0 ^= m
	}
	// Last block: remaining bytes little-endian, total length in the top byte.
	m := uint64(n) << 56
	for i, b := range msg {
		m |= uint64(b) << (8 * i)
	}
	v3 ^= m
	round()
	round()
	v0 ^= m
	v2 ^= 0xff
	for range 4 {
		round()
	}
	return v0 ^ v1 ^ v2 ^ v3
}
