package undo

// blockSet is a sparse bitmap of undo block numbers: chunks of 4096 bits
// allocated on first use, so that a repair touching a few scattered
// metadata blocks of a large device costs a few hundred bytes per region.
type blockSet struct {
	chunks map[uint64]*[chunkWords]uint64
}

const (
	chunkBits  = 4096
	chunkWords = chunkBits / 64
)

func (s *blockSet) has(b uint64) bool {
	c := s.chunks[b/chunkBits]
	if c == nil {
		return false
	}
	i := b % chunkBits
	return c[i/64]&(1<<(i%64)) != 0
}

func (s *blockSet) add(b uint64) {
	if s.chunks == nil {
		s.chunks = make(map[uint64]*[chunkWords]uint64)
	}
	c := s.chunks[b/chunkBits]
	if c == nil {
		c = new([chunkWords]uint64)
		s.chunks[b/chunkBits] = c
	}
	i := b % chunkBits
	c[i/64] |= 1 << (i % 64)
}
