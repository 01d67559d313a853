package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"gofsck/internal/csum"
	"gofsck/internal/ondisk/jbd2"
)

var be = binary.BigEndian

// memDev is an in-memory Device.
type memDev []byte

func (m memDev) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= int64(len(m)) {
		return 0, errors.New("memDev: out of range")
	}
	n := copy(p, m[off:])
	if n < len(p) {
		return n, errors.New("memDev: short")
	}
	return n, nil
}

const sbs = 1024 // block size of synthetic journals

// builder writes a synthetic journal log block by block.
type builder struct {
	dev    memDev
	f      jbd2.Format
	seed   uint32
	pos    uint64 // next log block
	first  uint64
	last   uint64
	crcV1  uint32
	nblock uint64
}

type logged struct {
	home  uint64
	data  []byte
	flags jbd2.TagFlag
	badCk bool // store a wrong per-block checksum
}

func newBuilder(nblocks uint64, compat jbd2.CompatFeature, incompat jbd2.IncompatFeature, seq, start uint32) *builder {
	b := &builder{dev: make(memDev, nblocks*sbs), nblock: nblocks, first: 1, last: nblocks, pos: uint64(start), crcV1: ^uint32(0)}
	sb := b.dev[:sbs]
	be.PutUint32(sb[0:], jbd2.Magic)
	be.PutUint32(sb[4:], uint32(jbd2.BlockSuperV2))
	be.PutUint32(sb[0xC:], sbs)
	be.PutUint32(sb[0x10:], uint32(nblocks))
	be.PutUint32(sb[0x14:], 1)
	be.PutUint32(sb[0x18:], seq)
	be.PutUint32(sb[0x1C:], start)
	be.PutUint32(sb[0x24:], uint32(compat))
	be.PutUint32(sb[0x28:], uint32(incompat))
	copy(sb[0x30:0x40], "0123456789abcdef")
	be.PutUint32(sb[0x40:], 1)
	if incompat&(jbd2.IncompatCsumV2|jbd2.IncompatCsumV3) != 0 {
		sb[0x50] = jbd2.ChecksumTypeCRC32C
	}
	s, _ := jbd2.SuperblockOf(sb)
	be.PutUint32(sb[0xFC:], s.ComputeChecksum())
	b.f = s.Format()
	b.seed = s.ChecksumSeed()
	return b
}

func (b *builder) block(p uint64) []byte { return b.dev[p*sbs : (p+1)*sbs] }

func (b *builder) next() []byte {
	blk := b.block(b.pos)
	clear(blk)
	b.pos++
	if b.pos >= b.last {
		b.pos = b.first
	}
	return blk
}

func header(p []byte, t jbd2.BlockType, tid uint32) {
	be.PutUint32(p[0:], jbd2.Magic)
	be.PutUint32(p[4:], uint32(t))
	be.PutUint32(p[8:], tid)
}

func (b *builder) descriptor(tid uint32, blocks []logged, badTail bool) {
	d := b.next()
	header(d, jbd2.BlockDescriptor, tid)
	off := jbd2.HeaderSize
	ts := b.f.TagSize()
	for i, l := range blocks {
		fl := l.flags
		if i > 0 {
			fl |= jbd2.FlagSameUUID
		}
		if i == len(blocks)-1 {
			fl |= jbd2.FlagLastTag
		}
		ck := jbd2.DataBlockChecksum(b.seed, tid, l.data)
		if l.badCk {
			ck ^= 0x5555
		}
		p := d[off:]
		be.PutUint32(p, uint32(l.home))
		if b.f.HasCsumV3() {
			be.PutUint32(p[4:], uint32(fl))
			be.PutUint32(p[8:], uint32(l.home>>32))
			be.PutUint32(p[12:], ck)
		} else {
			be.PutUint16(p[4:], uint16(ck))
			be.PutUint16(p[6:], uint16(fl))
			if b.f.Has64Bit() {
				be.PutUint32(p[8:], uint32(l.home>>32))
			}
		}
		off += ts
		if fl&jbd2.FlagSameUUID == 0 {
			off += 16
		}
	}
	if b.f.HasCsumV2or3() {
		ck := jbd2.ComputeTailChecksum(b.seed, d)
		if badTail {
			ck++
		}
		be.PutUint32(d[sbs-4:], ck)
	}
	b.crcV1 = csum.Crc32Be(b.crcV1, d)
	for _, l := range blocks {
		p := b.next()
		copy(p, l.data)
		b.crcV1 = csum.Crc32Be(b.crcV1, p)
	}
}

func (b *builder) revoke(tid uint32, blocks []uint64, badTail bool) {
	r := b.next()
	header(r, jbd2.BlockRevoke, tid)
	off := jbd2.RevokeHeaderSize
	for _, x := range blocks {
		if b.f.Has64Bit() {
			be.PutUint64(r[off:], x)
			off += 8
		} else {
			be.PutUint32(r[off:], uint32(x))
			off += 4
		}
	}
	be.PutUint32(r[12:], uint32(off))
	if b.f.HasCsumV2or3() {
		ck := jbd2.ComputeTailChecksum(b.seed, r)
		if badTail {
			ck++
		}
		be.PutUint32(r[sbs-4:], ck)
	}
}

func (b *builder) commit(tid uint32, sec uint64, bad bool) {
	c := b.next()
	header(c, jbd2.BlockCommit, tid)
	be.PutUint64(c[0x30:], sec)
	if b.f.HasChecksumV1() {
		c[0xC], c[0xD] = jbd2.ChecksumCRC32, jbd2.ChecksumCRC32Size
		v := b.crcV1
		if bad {
			v++
		}
		be.PutUint32(c[0x10:], v)
	}
	b.crcV1 = ^uint32(0)
	if b.f.HasCsumV2or3() {
		cm, _ := jbd2.CommitOf(c)
		v := cm.ComputeChecksum(b.seed)
		if bad {
			v++
		}
		be.PutUint32(c[0x10:], v)
	}
}

func (b *builder) open(t *testing.T) *Journal {
	t.Helper()
	j, err := Open(b.dev, sbs, b.nblock, nil)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func fill(v byte) []byte { return bytes.Repeat([]byte{v}, sbs) }

func replay(t *testing.T, j *Journal) (*ReplayResult, Overlay) {
	t.Helper()
	ov := Overlay{}
	res, err := j.Replay(ov)
	if err != nil {
		t.Fatal(err)
	}
	return res, ov
}

func TestRevokeByTid(t *testing.T) {
	for _, inc := range []jbd2.IncompatFeature{0, jbd2.Incompat64Bit, jbd2.IncompatCsumV2, jbd2.IncompatCsumV3 | jbd2.Incompat64Bit} {
		b := newBuilder(64, 0, inc|jbd2.IncompatRevoke, 10, 1)
		b.descriptor(10, []logged{{home: 100, data: fill(1)}, {home: 200, data: fill(2)}, {home: 300, data: fill(3)}}, false)
		b.revoke(10, []uint64{200}, false) // same transaction: revokes its own copy
		b.commit(10, 1, false)
		b.revoke(11, []uint64{100}, false) // later transaction revokes T10's copy
		b.commit(11, 2, false)
		b.descriptor(12, []logged{{home: 100, data: fill(4)}}, false) // rewritten after the revoke
		b.commit(12, 3, false)
		res, ov := replay(t, b.open(t))
		if res.Err != nil || len(res.Scan.Transactions) != 3 || res.Scan.EndTid != 13 || res.Sequence != 14 {
			t.Fatalf("%v: %+v", inc, res)
		}
		if len(ov) != 2 || !bytes.Equal(ov[100], fill(4)) || !bytes.Equal(ov[300], fill(3)) || res.RevokeHits != 2 {
			t.Errorf("%v: overlay has %d blocks, revoke hits %d", inc, len(ov), res.RevokeHits)
		}
	}
}

func TestEscape(t *testing.T) {
	b := newBuilder(64, 0, jbd2.IncompatCsumV3, 1, 1)
	data := fill(7)
	copy(data, []byte{0, 0, 0, 0}) // the kernel zeroes the magic in the log copy
	b.descriptor(1, []logged{{home: 5, data: data, flags: jbd2.FlagEscape}}, false)
	b.commit(1, 1, false)
	_, ov := replay(t, b.open(t))
	if got := be.Uint32(ov[5]); got != jbd2.Magic || !bytes.Equal(ov[5][4:], data[4:]) {
		t.Errorf("escaped block starts %#x", got)
	}
}

func TestV1Checksum(t *testing.T) {
	for _, c := range []struct {
		name      string
		async     bool
		bad       uint32 // tid whose commit is corrupt, 0 for none
		wantTx    int
		wantFail  uint32
		wantStop  StopReason
		wantFails bool
	}{
		{"good", false, 0, 3, 0, StopNoMagic, false},
		{"sync bad", false, 2, 1, 2, StopCommitChecksum, true},
		{"async bad", true, 2, 1, 2, StopAfterFailedCommit, true},
		{"async last bad", true, 3, 2, 0, StopNoMagic, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			inc := jbd2.IncompatRevoke
			if c.async {
				inc |= jbd2.IncompatAsyncCommit
			}
			b := newBuilder(64, jbd2.CompatChecksum, inc, 1, 1)
			for tid := uint32(1); tid <= 3; tid++ {
				b.descriptor(tid, []logged{{home: uint64(tid), data: fill(byte(tid))}}, false)
				b.commit(tid, uint64(tid), tid == c.bad)
			}
			res, _ := replay(t, b.open(t))
			s := res.Scan
			if len(s.Transactions) != c.wantTx || s.HasFailedCommit != c.wantFails || s.FailedCommit != c.wantFail || s.Stop != c.wantStop || res.Err != nil {
				t.Errorf("%d transactions, failed %v %d, stop %v, err %v", len(s.Transactions), s.HasFailedCommit, s.FailedCommit, s.Stop, res.Err)
			}
		})
	}
}

func TestCsumV3Rules(t *testing.T) {
	t.Run("stale descriptor", func(t *testing.T) {
		b := newBuilder(64, 0, jbd2.IncompatCsumV3, 1, 1)
		b.descriptor(1, []logged{{home: 9, data: fill(1)}}, false)
		b.commit(1, 100, false)
		b.descriptor(2, []logged{{home: 9, data: fill(2)}}, true)
		b.commit(2, 50, false) // older than its predecessor: left-over block
		res, ov := replay(t, b.open(t))
		if res.Err != nil || res.Scan.Stop != StopStale || len(res.Scan.Transactions) != 1 || !bytes.Equal(ov[9], fill(1)) {
			t.Errorf("stop %v, %d transactions, err %v", res.Scan.Stop, len(res.Scan.Transactions), res.Err)
		}
	})
	t.Run("bad descriptor", func(t *testing.T) {
		b := newBuilder(64, 0, jbd2.IncompatCsumV3, 1, 1)
		b.descriptor(1, []logged{{home: 9, data: fill(1)}}, false)
		b.commit(1, 100, false)
		b.revoke(2, []uint64{9}, true)
		b.commit(2, 100, false)
		res, ov := replay(t, b.open(t))
		if !errors.Is(res.Err, ErrChecksum) || res.Scan.Stop != StopChecksumError || len(ov) != 0 {
			t.Errorf("stop %v, err %v, %d blocks written", res.Scan.Stop, res.Err, len(ov))
		}
	})
	t.Run("async bad commit", func(t *testing.T) {
		b := newBuilder(64, 0, jbd2.IncompatCsumV3|jbd2.IncompatAsyncCommit, 1, 1)
		b.descriptor(1, []logged{{home: 9, data: fill(1)}}, false)
		b.commit(1, 100, false)
		b.descriptor(2, []logged{{home: 9, data: fill(2)}}, false)
		b.commit(2, 100, true)
		b.descriptor(3, []logged{{home: 9, data: fill(3)}}, false)
		b.commit(3, 100, false)
		res, ov := replay(t, b.open(t))
		if res.Err != nil || res.Scan.EndTid != 2 || res.Scan.HasFailedCommit || len(res.Scan.Transactions) != 1 || !bytes.Equal(ov[9], fill(1)) || res.Sequence != 3 {
			t.Errorf("end %d, failed %v, %d transactions, seq %d", res.Scan.EndTid, res.Scan.HasFailedCommit, len(res.Scan.Transactions), res.Sequence)
		}
	})
	t.Run("bad data block", func(t *testing.T) {
		b := newBuilder(64, 0, jbd2.IncompatCsumV2, 1, 1)
		b.descriptor(1, []logged{{home: 9, data: fill(1), badCk: true}, {home: 10, data: fill(2)}}, false)
		b.commit(1, 100, false)
		res, ov := replay(t, b.open(t))
		if !errors.Is(res.Err, ErrChecksum) || len(res.Bad) != 1 || res.Bad[0].Home != 9 || len(ov) != 1 || res.Sequence != 1 {
			t.Errorf("err %v, bad %+v, %d written, seq %d", res.Err, res.Bad, len(ov), res.Sequence)
		}
	})
}

func TestWrapAndTidWrap(t *testing.T) {
	// 16-block journal, log starting near the end so that it wraps, with
	// transaction IDs wrapping through zero.
	b := newBuilder(16, 0, jbd2.IncompatCsumV3, 0xFFFFFFFF, 13)
	b.descriptor(0xFFFFFFFF, []logged{{home: 40, data: fill(1)}, {home: 41, data: fill(2)}}, false)
	b.commit(0xFFFFFFFF, 1, false)
	b.revoke(0, []uint64{40}, false)
	b.descriptor(0, []logged{{home: 42, data: fill(3)}}, false)
	b.commit(0, 2, false)
	res, ov := replay(t, b.open(t))
	if res.Err != nil || len(res.Scan.Transactions) != 2 || res.Scan.EndTid != 1 || res.Sequence != 2 {
		t.Fatalf("%+v / %+v", res, res.Scan)
	}
	if _, ok := ov[40]; ok || len(ov) != 2 || res.Scan.Transactions[0].Tags[1].Log != 15 || res.Scan.Transactions[0].Commit != 1 {
		t.Errorf("overlay %d blocks; tags %+v", len(ov), res.Scan.Transactions[0].Tags)
	}
}

func TestBoundedWalk(t *testing.T) {
	// Every block is a descriptor of the same transaction with one tag: the
	// walk would go round forever.
	b := newBuilder(32, 0, 0, 5, 1)
	for i := 0; i < 40; i++ {
		b.descriptor(5, []logged{{home: 1, data: fill(0)}}, false)
		// The data block of each descriptor is skipped; make it a
		// descriptor too so that any phase works.
	}
	for p := uint64(1); p < 32; p++ {
		d := b.block(p)
		header(d, jbd2.BlockDescriptor, 5)
		be.PutUint32(d[12:], 1)
		be.PutUint16(d[18:], uint16(jbd2.FlagLastTag))
	}
	j := b.open(t)
	res, _ := replay(t, j)
	if res.Scan.Stop != StopLoop || !errors.Is(res.Err, jbd2.ErrCorrupt) || res.Replayed != 0 {
		t.Errorf("stop %v, err %v", res.Scan.Stop, res.Err)
	}
}

func TestStartOutsideJournal(t *testing.T) {
	b := newBuilder(32, 0, 0, 5, 1)
	sb := b.block(0)
	be.PutUint32(sb[0x1C:], 40)
	res, _ := replay(t, b.open(t))
	if res.Scan.Stop != StopCorrupt || !errors.Is(res.Err, jbd2.ErrCorrupt) {
		t.Errorf("stop %v, err %v", res.Scan.Stop, res.Err)
	}
	// An unmapped block is corrupt too.
	b = newBuilder(32, 0, 0, 5, 1)
	j, err := Open(b.dev, sbs, 32, func(l uint64) (uint64, bool) { return l, l == 0 })
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := j.Scan(); s.Stop != StopCorrupt {
		t.Errorf("unmapped: stop %v", s.Stop)
	}
}

func TestEmptyJournal(t *testing.T) {
	b := newBuilder(32, 0, 0, 5, 0)
	j := b.open(t)
	if j.NeedsRecovery() {
		t.Fatal("s_start 0 needs no recovery")
	}
	res, ov := replay(t, j)
	if res.Scan.Stop != StopEmpty || len(ov) != 0 || res.Sequence != 6 {
		t.Errorf("%+v", res)
	}
}

func TestOpenErrors(t *testing.T) {
	b := newBuilder(32, 0, jbd2.IncompatCsumV3, 5, 1)
	if _, err := Open(b.dev, sbs, 31, nil); !errors.Is(err, jbd2.ErrCorrupt) {
		t.Errorf("short journal: %v", err)
	}
	if _, err := Open(b.dev, 4096, 32, nil); err == nil {
		t.Errorf("block size mismatch accepted")
	}
	if _, err := Open(memDev(make([]byte, 100)), sbs, 32, nil); err == nil || errors.Is(err, jbd2.ErrCorrupt) {
		t.Errorf("I/O error must not look like corruption: %v", err)
	}
	b.block(0)[0x200]++
	var ve *jbd2.ValidationError
	if _, err := Open(b.dev, sbs, 32, nil); !errors.As(err, &ve) || ve.Rule != jbd2.RuleChecksum {
		t.Errorf("bad checksum: %v", err)
	}
}

// FuzzScan feeds arbitrary journals (block 0 is the superblock, 1 KiB
// blocks) to Scan and Replay: they must neither panic nor loop.
func FuzzScan(f *testing.F) {
	b := newBuilder(16, 0, jbd2.IncompatRevoke, 1, 1)
	b.descriptor(1, []logged{{home: 3, data: fill(1)}, {home: 4, data: fill(2)}}, false)
	b.revoke(2, []uint64{3}, false)
	b.commit(1, 1, false)
	f.Add([]byte(b.dev))
	b = newBuilder(16, jbd2.CompatChecksum, jbd2.Incompat64Bit|jbd2.IncompatAsyncCommit, 7, 14)
	b.descriptor(7, []logged{{home: 3, data: fill(1)}}, false)
	b.commit(7, 1, false)
	b.descriptor(8, []logged{{home: 5, data: fill(1)}}, false)
	b.commit(8, 1, true)
	f.Add([]byte(b.dev))
	f.Fuzz(func(t *testing.T, dev []byte) {
		if len(dev) > 64*sbs {
			return
		}
		n := uint64(len(dev) / sbs)
		j, err := Open(memDev(dev), sbs, n, nil)
		if err != nil {
			return
		}
		res, err := j.Replay(Overlay{})
		if err != nil {
			return
		}
		if res.Replayed > int(n)+1 {
			t.Fatalf("replayed %d blocks from a %d-block journal", res.Replayed, n)
		}
	})
}
