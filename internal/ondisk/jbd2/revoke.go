package jbd2

// Offsets in jbd2_journal_revoke_header_t.
const (
	offRCount = 0x0C // r_count: bytes used in the block, header included
)

// Revoke is a view of a revoke block.
type Revoke struct {
	b []byte
	f Format
}

// RevokeOf wraps b, a whole revoke block of format f.
func RevokeOf(b []byte, f Format) (Revoke, error) {
	if len(b) < RevokeHeaderSize+f.TailSize() {
		return Revoke{}, &FormatError{Struct: "revoke", Msg: "block too short", Val: uint64(len(b))}
	}
	return Revoke{b: b, f: f}, nil
}

func (r Revoke) Header() *Header { return (*Header)(r.b[:HeaderSize]) }

// Count is r_count as stored.
func (r Revoke) Count() uint32 { return be.Uint32(r.b[offRCount:]) }

// CountValid applies the kernel's bound: r_count may not exceed the block
// size less the tail. A bad count makes recovery fail with EINVAL.
func (r Revoke) CountValid() bool {
	return uint64(r.Count()) <= uint64(len(r.b)-r.f.TailSize())
}

// TailChecksum returns the stored tail checksum (0 without v2/v3).
func (r Revoke) TailChecksum() uint32 { return tailChecksum(r.b, r.f) }

// ChecksumValid verifies the tail checksum with seed; without v2/v3 it is
// always true.
func (r Revoke) ChecksumValid(seed uint32) bool { return tailValid(r.b, r.f, seed) }

// Records iterates over the revoked block numbers, 4 or 8 bytes each
// (64bit), from the end of the header to r_count. With an invalid r_count
// the iterator yields nothing and Err reports the problem.
func (r Revoke) Records() RevokeIter {
	it := RevokeIter{b: r.b, rec: r.f.RevokeRecordSize(), off: RevokeHeaderSize}
	if !r.CountValid() {
		it.err = &FormatError{Struct: "revoke", Field: "r_count", Off: offRCount, Val: uint64(r.Count()), Msg: "count beyond block"}
		return it
	}
	it.end = int(r.Count())
	return it
}

// NumRecords is the number of records Records yields.
func (r Revoke) NumRecords() int {
	it := r.Records()
	if it.end < it.off {
		return 0
	}
	return (it.end - it.off) / it.rec
}

// RevokeIter walks revoke records without allocating.
type RevokeIter struct {
	b   []byte
	rec int
	off int
	end int
	err error
}

// Next returns the next revoked block number, or false at the end.
func (it *RevokeIter) Next() (uint64, bool) {
	if it.err != nil || it.off > it.end-it.rec || it.end > len(it.b) {
		return 0, false
	}
	p := it.b[it.off:]
	it.off += it.rec
	if it.rec == 8 {
		return be.Uint64(p), true
	}
	return uint64(be.Uint32(p)), true
}

// Err reports an r_count that does not fit the block.
func (it *RevokeIter) Err() error { return it.err }
