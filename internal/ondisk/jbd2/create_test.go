package jbd2

import "testing"

// TestInitSuperblockV2 reads a new journal's superblock back through the
// accessors and the validator.
func TestInitSuperblockV2(t *testing.T) {
	var s Superblock
	for i := range s {
		s[i] = 0xAA // everything else must come out zero
	}
	uuid := [UUIDSize]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	s.InitSuperblockV2(4096, 1040, 16, uuid)
	h := s.Header()
	if !h.Valid() || h.BlockType() != BlockSuperV2 {
		t.Errorf("header %#x %v", h.Magic(), h.BlockType())
	}
	if s.BlockSize() != 4096 || s.MaxLen() != 1040 || s.First() != 1 || s.Sequence() != 1 || s.Start() != 0 ||
		s.NrUsers() != 1 || s.NumFCBlocksRaw() != 16 || s.UUID() != uuid {
		t.Errorf("blocksize %d maxlen %d first %d seq %d start %d users %d fc %d uuid %x",
			s.BlockSize(), s.MaxLen(), s.First(), s.Sequence(), s.Start(), s.NrUsers(), s.NumFCBlocksRaw(), s.UUID())
	}
	if s.FeatureCompat() != 0 || s.FeatureIncompat() != 0 || s.FeatureRoCompat() != 0 || s.Checksum() != 0 {
		t.Error("features or checksum set")
	}
	if u, ok := s.User(0); !ok || u != ([UUIDSize]byte{}) {
		t.Errorf("s_users[0] = %x, %v", u, ok)
	}
	if err := s.Validate(4096, 1040); err != nil {
		t.Errorf("Validate: %v", err)
	}
}
