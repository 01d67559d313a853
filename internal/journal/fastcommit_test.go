package journal

import (
	"encoding/binary"
	"errors"
	"testing"

	"gofsck/internal/csum"
	"gofsck/internal/ondisk/jbd2"
)

// fcJournal builds a 1 KiB-block journal of 1030 blocks with a 5-block
// fast-commit area (log blocks 1026..1029, and e2fsck's loop also reads
// block 1030, past the end) and returns it opened.
func fcJournal(t testing.TB, fill func(b *builder)) *Journal {
	t.Helper()
	b := newBuilder(1030, 0, jbd2.IncompatFastCommit, 7, 0)
	sb := b.block(0)
	be.PutUint32(sb[0x54:], 5)
	if fill != nil {
		fill(b)
	}
	j, err := Open(b.dev, sbs, 1030, nil)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// fcRecord appends a tag-length-value record to blk at off and returns the
// offset after it.
func fcRecord(blk []byte, off int, tag jbd2.FCTag, val []byte) int {
	binary.LittleEndian.PutUint16(blk[off:], uint16(tag))
	binary.LittleEndian.PutUint16(blk[off+2:], uint16(len(val)))
	copy(blk[off+4:], val)
	return off + 4 + len(val)
}

// fcCommit writes one fast commit for tid filling blk: a head, an inode
// record, padding and a tail at the end of the block whose crc covers
// them all (badCrc spoils it), as the kernel lays a fast commit out.
func fcCommit(blk []byte, tid uint32, badCrc bool) {
	le := binary.LittleEndian
	head := make([]byte, 8)
	le.PutUint32(head[4:], tid)
	off := fcRecord(blk, 0, jbd2.FCHead, head)
	off = fcRecord(blk, off, jbd2.FCInode, make([]byte, 20))
	off = fcRecord(blk, off, jbd2.FCPad, make([]byte, len(blk)-12-off-4))
	le.PutUint16(blk[off:], uint16(jbd2.FCTail))
	le.PutUint16(blk[off+2:], 8)
	le.PutUint32(blk[off+4:], tid)
	crc := csum.Crc32c(0, blk[:off+8])
	if badCrc {
		crc++
	}
	le.PutUint32(blk[off+8:], crc)
}

func TestScanFastCommits(t *testing.T) {
	for _, c := range []struct {
		name     string
		fill     func(b *builder)
		tags     int
		checksum bool
		errno    int
	}{
		{"empty area", nil, 0, false, 0},
		{"one commit", func(b *builder) { fcCommit(b.block(1026), 9, false) }, 4, false, 0},
		{"two commits", func(b *builder) {
			fcCommit(b.block(1026), 9, false)
			fcCommit(b.block(1027), 9, false)
		}, 8, false, 0},
		{"bad crc first", func(b *builder) { fcCommit(b.block(1026), 9, true) }, 0, true, 0},
		{"bad crc after a good one", func(b *builder) {
			fcCommit(b.block(1026), 9, false)
			fcCommit(b.block(1027), 9, true)
		}, 4, false, 0},
		{"head of another transaction", func(b *builder) { fcCommit(b.block(1026), 8, false) }, 0, false, errnoEINVAL},
		{"unknown head features", func(b *builder) {
			fcCommit(b.block(1026), 9, false)
			b.block(1026)[4] = 1
		}, 0, false, errnoEOPNOTSUPP},
		{"unknown record", func(b *builder) {
			fcCommit(b.block(1026), 9, false)
			b.block(1026)[12] = 0x55
		}, 0, false, errnoECANCELED},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := fcJournal(t, c.fill)
			res, err := j.ScanFastCommits(9)
			if err != nil {
				t.Fatal(err)
			}
			if res.Tags != c.tags {
				t.Errorf("tags %d, want %d", res.Tags, c.tags)
			}
			var fe *FCErrno
			switch {
			case c.checksum:
				if !errors.Is(res.Err, ErrChecksum) {
					t.Errorf("err %v, want a checksum error", res.Err)
				}
			case c.errno != 0:
				if !errors.As(res.Err, &fe) || fe.Errno != c.errno {
					t.Errorf("err %v, want errno %d", res.Err, c.errno)
				}
			case res.Err != nil:
				t.Errorf("err %v", res.Err)
			}
		})
	}
}

// TestScanFastCommitsRunsOffTheEnd: fast commits in every block of the
// area make e2fsck read block s_maxlen, which fails (EFSCORRUPTED).
func TestScanFastCommitsRunsOffTheEnd(t *testing.T) {
	j := fcJournal(t, func(b *builder) {
		for blk := uint64(1026); blk < 1030; blk++ {
			fcCommit(b.block(blk), 9, false)
		}
	})
	res, err := j.ScanFastCommits(9)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res.Err, jbd2.ErrCorrupt) || res.Tags != 16 {
		t.Errorf("tags %d err %v, want 16 and a corrupt journal", res.Tags, res.Err)
	}
}

func FuzzScanFastCommits(f *testing.F) {
	seed := make([]byte, sbs)
	fcCommit(seed, 9, false)
	f.Add(seed)
	f.Add([]byte{9, 0, 8, 0, 0, 0, 0, 0, 9, 0, 0, 0, 8, 0, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		j := fcJournal(t, func(b *builder) {
			for blk := uint64(1026); blk < 1030 && len(data) > 0; blk++ {
				n := copy(b.block(blk), data)
				data = data[n:]
			}
		})
		res, err := j.ScanFastCommits(9)
		if err != nil || res.Tags < 0 || res.Blocks > 5 {
			t.Fatalf("res %+v err %v", res, err)
		}
	})
}
