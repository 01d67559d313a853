package undo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// memDev is an in-memory Target that never grows.
type memDev struct{ data []byte }

func (m *memDev) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(m.data)) {
		return 0, errors.New("read outside the device")
	}
	n := copy(p, m.data[off:])
	if n < len(p) {
		return n, errors.New("short read")
	}
	return n, nil
}

func (m *memDev) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(m.data)) || int64(len(p)) > int64(len(m.data))-off {
		return 0, errors.New("write outside the device")
	}
	return copy(m.data[off:], p), nil
}

func (m *memDev) Size() int64 { return int64(len(m.data)) }

// fuzzDevice is the device every fuzz input is applied to.
func fuzzDevice() []byte {
	d := make([]byte, 16<<10)
	for i := range d {
		d[i] = byte(i*31 + i>>8)
	}
	return d
}

// fuzzSeed writes an undo file for fuzzDevice with block size bs and
// returns it and the device as the writes left it.
func fuzzSeed(f testing.TB, bs int, finish bool) (file, dev []byte) {
	dir := f.TempDir()
	m := &memDev{fuzzDevice()}
	p := filepath.Join(dir, "u")
	w, err := Create(p, m, bs, nil)
	if err != nil {
		f.Fatal(err)
	}
	for _, x := range []struct {
		off int64
		n   int
	}{{1024, 1024}, {5000, 300}, {9000, 2000}, {15 << 10, 1 << 10}, {5000, 10}} {
		if _, err := w.WriteAt(bytes.Repeat([]byte{0xEE}, x.n), x.off); err != nil {
			f.Fatal(err)
		}
	}
	if finish {
		if err := w.Close(); err != nil {
			f.Fatal(err)
		}
	}
	b, err := os.ReadFile(p)
	if err != nil {
		f.Fatal(err)
	}
	return b, m.data
}

// fuzzBases are the undo files FuzzApply mutates: real files from the
// Writer, finished and not, for 1 KiB and 4 KiB blocks, with the device
// they were written for.
type fuzzBase struct{ file, dev []byte }

func fuzzBases(tb testing.TB) []fuzzBase {
	var bases []fuzzBase
	for _, bs := range []int{1024, 4096} {
		for _, finish := range []bool{true, false} {
			file, dev := fuzzSeed(tb, bs, finish)
			bases = append(bases, fuzzBase{file, dev})
		}
	}
	return bases
}

// reseal recomputes the header checksum and the first key block's, so that
// mutations reach the code behind them.
func reseal(b []byte) {
	if len(b) < HeaderSize {
		return
	}
	h := (*Header)(b[:HeaderSize])
	h.setCRC()
	bs, ko := uint64(h.BlockSize()), h.KeyOffset()
	if bs < MinBlockSize || bs > MaxBlockSize || ko > uint64(len(b))/bs || (ko+1)*bs > uint64(len(b)) {
		return
	}
	kb := keyBlock(b[ko*bs : (ko+1)*bs])
	binary.LittleEndian.PutUint32(kb[offKbCrc:], kb.computeCRC())
}

// FuzzApply mutates real undo files (a patch of bytes at an offset, an
// optional cut of the tail, checksums optionally recomputed so that the
// mutation gets past them) and applies them to the device they were made
// for, so that the superblock check passes. Apply must never panic or
// allocate from an unchecked field, and, whatever it returns, it must not
// have written the device unless it got as far as replaying: every check
// comes before the first write. The input is a small patch rather than a
// whole file so that the fuzzer's minimisation stays fast.
func FuzzApply(f *testing.F) {
	bases := fuzzBases(f)
	for i := range bases {
		f.Add(uint8(i), uint32(0), []byte{}, uint16(0), false, false)
	}
	f.Add(uint8(0), uint32(8), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f}, uint16(0), true, true) // num_keys
	f.Add(uint8(1), uint32(2048+16), []byte{0, 0, 0, 0, 0, 0, 0, 0x40}, uint16(0), false, true)               // a key's fsblk
	f.Add(uint8(2), uint32(32), []byte{0, 0, 0x10, 0}, uint16(0), false, true)                                // block size 1 MiB
	f.Add(uint8(3), uint32(0), []byte{}, uint16(5000), true, false)                                           // truncated
	f.Fuzz(func(t *testing.T, base uint8, off uint32, patch []byte, cut uint16, force, resealIt bool) {
		b := bases[int(base)%len(bases)]
		file := bytes.Clone(b.file)
		if n := int(cut) % (len(file) + 1); n > 0 {
			file = file[:len(file)-n]
		}
		if len(patch) > 0 {
			o := int(off % uint32(len(file)+1))
			if o+len(patch) > len(file) {
				file = append(file, make([]byte, o+len(patch)-len(file))...)
			}
			copy(file[o:], patch)
		}
		if resealIt {
			reseal(file)
		}
		m := &memDev{bytes.Clone(b.dev)}
		res, err := apply(bytes.NewReader(file), int64(len(file)), m, Options{Force: force})
		if res == nil {
			t.Fatal("nil result")
		}
		if err != nil && !errors.Is(err, ErrReplay) && !bytes.Equal(m.data, b.dev) {
			t.Fatalf("Apply wrote to the device and then failed: %v", err)
		}
		if err == nil && !force && res.Corrupt+res.Ignored != 0 {
			t.Fatalf("without Force, %d keys were skipped", res.Corrupt)
		}
		if err == nil && len(patch) == 0 && cut == 0 && !bytes.Equal(m.data, fuzzDevice()) {
			t.Fatal("the unchanged file did not restore the device")
		}
	})
}

// TestFuzzSeedsRestore makes sure the fuzz seeds are meaningful: each one
// restores the original device.
func TestFuzzSeedsRestore(t *testing.T) {
	for _, bs := range []int{1024, 4096} {
		for _, finish := range []bool{true, false} {
			file, dev := fuzzSeed(t, bs, finish)
			m := &memDev{dev}
			res, err := apply(bytes.NewReader(file), int64(len(file)), m, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(m.data, fuzzDevice()) || res.Keys == 0 || res.Incomplete == finish {
				t.Errorf("bs %d finished %v: not restored (%+v)", bs, finish, res)
			}
		}
	}
}
