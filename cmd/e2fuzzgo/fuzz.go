package main

import "fmt"

// rng is splitmix64: a generator whose sequence is fixed by its seed
// alone, whatever the Go version, so a seed names the same corruption
// forever.
type rng uint64

func (s *rng) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (s *rng) intn(n int) int { return int(s.next() % uint64(n)) }

// Change is one byte the fuzzer overwrote.
type Change struct {
	Kind     Kind
	Block    uint64
	Off      int64 // byte offset in the image
	Old, New byte
}

func (c Change) String() string {
	return fmt.Sprintf("%s block %d byte %d: %#02x -> %#02x", c.Kind, c.Block, c.Off, c.Old, c.New)
}

// Fuzz overwrites nbytes bytes of img (the whole image, in memory) in the
// metadata blocks m lists, chosen by seed: one or two kinds of metadata
// among those present, then for each change a block of those kinds, then either a single byte or a short run
// (a field's worth) at a random offset, set to a random value, a flipped
// bit, zero or 0xff. The same (m, seed, nbytes) always gives the same
// changes. Bytes beyond the end of img are never touched.
func Fuzz(img []byte, m *Meta, seed uint64, nbytes int) []Change {
	var kinds []Kind
	for k := Kind(0); k < numKinds; k++ {
		if len(m.Blocks[k]) > 0 {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 || nbytes <= 0 {
		return nil
	}
	r := rng(seed)
	// One or two kinds per image: corruption that hits every kind at once
	// nearly always includes the superblock, and both checkers then
	// stop at the same first complaint.
	pick := []Kind{kinds[r.intn(len(kinds))]}
	if r.intn(2) == 0 {
		pick = append(pick, kinds[r.intn(len(kinds))])
	}
	var changes []Change
	for len(changes) < nbytes {
		k := pick[r.intn(len(pick))]
		blk := m.Blocks[k][r.intn(len(m.Blocks[k]))]
		start, size := m.blockRange(k, blk)
		run := 1
		if r.intn(4) == 0 {
			run = 1 + r.intn(8)
		}
		at := r.intn(size)
		how := r.intn(4)
		for i := 0; i < run && len(changes) < nbytes; i++ {
			off := start + int64((at+i)%size)
			if off >= int64(len(img)) {
				break
			}
			old := img[off]
			var v byte
			switch how {
			case 0:
				v = byte(r.next())
			case 1:
				v = old ^ 1<<r.intn(8)
			case 2:
				v = 0
			default:
				v = 0xff
			}
			img[off] = v
			changes = append(changes, Change{Kind: k, Block: blk, Off: off, Old: old, New: v})
		}
	}
	return changes
}
