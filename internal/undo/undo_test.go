package undo_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gofsck/internal/blockdev"
	"gofsck/internal/csum"
	"gofsck/internal/testfs"
	"gofsck/internal/undo"
)

func TestMain(m *testing.M) { testfs.Main(m) }

// tool returns the path of an e2fsprogs program (PATH or /usr/sbin, /sbin).
func tool(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range []string{"/usr/sbin", "/sbin"} {
		if _, err := os.Stat(filepath.Join(d, name)); err == nil {
			return filepath.Join(d, name)
		}
	}
	t.Fatalf("%s is required (install e2fsprogs)", name)
	return ""
}

// runTool runs an e2fsprogs program in testfs's reproducible environment
// (plus extra variables) and returns its output and exit status.
func runTool(t testing.TB, extraEnv []string, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(tool(t, name), args...)
	cmd.Env = append(testfs.Env(t), extraEnv...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	return "", -1
}

// image builds an ext4 image with some files (mke2fs -d).
func image(t testing.TB, blockSize int, size int64) string {
	t.Helper()
	for _, n := range []string{"mke2fs", "debugfs", "e2fsck", "e2undo"} {
		tool(t, n)
	}
	return testfs.MkImage(t, testfs.Spec{
		FSType: "ext4", BlockSize: blockSize, Size: size,
		Populate: func(tr *testfs.Tree) {
			tr.Dir("d")
			for i := range 12 {
				tr.File(fmt.Sprintf("d/f%d", i), int64(1+i*7000))
			}
			tr.File("big", 600<<10)
		},
	})
}

func readFile(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameBytes fails the test at the first byte where got differs from want.
func sameBytes(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			n := 0
			for j := i; j < len(got); j++ {
				if got[j] != want[j] {
					n++
				}
			}
			t.Fatalf("%s: first difference at byte %d (block %d of 1K): %#02x, want %#02x; %d bytes differ",
				what, i, i/1024, got[i], want[i], n)
		}
	}
}

func openDev(t testing.TB, p string) *blockdev.File {
	t.Helper()
	d, err := blockdev.Open(p, false, false)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// write is one WriteAt of the random workloads.
type write struct {
	off  int64
	data []byte
}

// workload makes n random writes over a device of size bytes with block
// size bs: block-aligned and unaligned, small and large, overlapping, some
// repeated exactly; a tenth rewrite the superblock as a repair would
// (counters changed, UUID kept). Writes never change the superblock's UUID,
// which a repair never does and Apply's check for interrupted files relies
// on.
func workload(rng *rand.Rand, size, bs int64, n int, sb []byte) []write {
	var ws []write
	cur := bytes.Clone(sb)
	uuid := bytes.Clone(sb[0x68:0x78])
	for len(ws) < n {
		var w write
		switch k := rng.IntN(10); {
		case k == 0 && len(ws) > 0: // the same range again, new data
			prev := ws[rng.IntN(len(ws))]
			w = write{prev.off, make([]byte, len(prev.data))}
		case k == 1: // superblock update
			binary.LittleEndian.PutUint32(cur[0x0C:], rng.Uint32())  // s_free_blocks_count_lo
			binary.LittleEndian.PutUint32(cur[0x30:], rng.Uint32())  // s_wtime
			binary.LittleEndian.PutUint64(cur[0x178:], rng.Uint64()) // s_kbytes_written
			w = write{1024, bytes.Clone(cur)}
		case k < 5: // aligned blocks
			nb := 1 + rng.Int64N(4)
			if rng.IntN(8) == 0 {
				nb = 16 + rng.Int64N(300) // large: extents of many blocks
			}
			blk := rng.Int64N(size / bs)
			nb = min(nb, size/bs-blk)
			w = write{blk * bs, make([]byte, nb*bs)}
		default: // unaligned
			l := 1 + rng.Int64N(3*bs)
			off := rng.Int64N(size - l + 1)
			w = write{off, make([]byte, l)}
		}
		if w.off != 1024 || len(w.data) != 1024 {
			for i := range w.data {
				w.data[i] = byte(rng.Uint32())
			}
			// Keep the UUID bytes of any write that covers them.
			for i := int64(0); i < 16; i++ {
				if p := 1024 + 0x68 + i - w.off; p >= 0 && p < int64(len(w.data)) {
					w.data[p] = uuid[i]
				}
			}
		}
		// Writes that cover the superblock change the tracked copy.
		lo, hi := max(w.off, 1024), min(w.off+int64(len(w.data)), 2048)
		if lo < hi {
			copy(cur[lo-1024:hi-1024], w.data[lo-w.off:hi-w.off])
		}
		ws = append(ws, w)
	}
	// A write to the last bytes of the device (a partial undo block when
	// the size is not a multiple of the block size).
	ws = append(ws, write{size - 700, bytes.Repeat([]byte{0xA5}, 700)})
	return ws
}

func superblock(t testing.TB, dev undo.Target) []byte {
	t.Helper()
	sb := make([]byte, 1024)
	if _, err := dev.ReadAt(sb, 1024); err != nil {
		t.Fatal(err)
	}
	return sb
}

// writeThrough creates an undo file for img and applies ws through it.
func writeThrough(t testing.TB, img, undoPath string, bs int, ws []write, closeIt bool) {
	t.Helper()
	dev := openDev(t, img)
	defer dev.Close()
	w, err := undo.Create(undoPath, dev, bs, superblock(t, dev))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ws {
		if n, err := w.WriteAt(x.data, x.off); err != nil || n != len(x.data) {
			t.Fatalf("WriteAt(%d bytes at %d) = %d, %v", len(x.data), x.off, n, err)
		}
	}
	if closeIt {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHeaderLayout pins the struct sizes and field offsets of undo_io.c.
func TestHeaderLayout(t *testing.T) {
	var h undo.Header
	if len(h) != 512 || undo.HeaderSize != 512 || undo.KeySize != 16 {
		t.Fatalf("header %d bytes, key %d: want 512 and 16", len(h), undo.KeySize)
	}
	copy(h[:], undo.Magic)
	put64 := func(off int, v uint64) { binary.LittleEndian.PutUint64(h[off:], v) }
	put32 := func(off int, v uint32) { binary.LittleEndian.PutUint32(h[off:], v) }
	put64(8, 11)
	put64(16, 12)
	put64(24, 13)
	put32(32, 4096)
	put32(36, 1024)
	put32(40, 0xabc)
	put32(44, 1)
	put32(48, 1)
	put32(52, 2)
	put32(56, 3)
	put64(64, 1<<20)
	put32(508, 0xfeed)
	got := []uint64{h.NumKeys(), h.SuperOffset(), h.KeyOffset(), uint64(h.BlockSize()), uint64(h.FSBlockSize()),
		uint64(h.SuperCRC()), uint64(h.State()), uint64(h.Compat()), uint64(h.Incompat()), uint64(h.ROCompat()),
		h.FSOffset(), uint64(h.HeaderCRC())}
	want := []uint64{11, 12, 13, 4096, 1024, 0xabc, 1, 1, 2, 3, 1 << 20, 0xfeed}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("field %d = %#x, want %#x", i, got[i], want[i])
		}
	}
	if !h.MagicOK() || !h.Finished() {
		t.Error("magic or finished state not decoded")
	}
	if h.ComputeCRC() != csum.Crc32c(^uint32(0), h[:508]) {
		t.Error("header checksum is not crc32c(~0) over the first 508 bytes")
	}
}

// e2fsckUndo corrupts img with debugfs and repairs it with e2fsck -fy -z,
// returning the image bytes e2fsck started from and the undo file.
func e2fsckUndo(t *testing.T, img string, env []string) (before []byte, undoPath string) {
	t.Helper()
	ino := testfs.Ino(t, img, "d/f3")
	testfs.Debugfs(t, img, fmt.Sprintf("clri <%d>", ino), "freeb 300 40", "freei <20>")
	before = readFile(t, img)
	undoPath = filepath.Join(t.TempDir(), "e2fsck.e2undo")
	out, code := runTool(t, env, "e2fsck", "-fy", "-z", undoPath, img)
	if code != 1 {
		t.Fatalf("e2fsck -fy -z: exit %d, want 1 (fixed)\n%s", code, out)
	}
	if bytes.Equal(readFile(t, img), before) {
		t.Fatal("e2fsck changed nothing")
	}
	return before, undoPath
}

// TestE2fsckUndoFile decodes an undo file e2fsck wrote (the golden test of
// the header and key block views) and restores the image with Apply.
func TestE2fsckUndoFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		bs   int
		env  []string
	}{
		{"4k", 4096, nil},
		{"1k", 1024, nil},
		// undo_io's switch for leaving the state unfinished, as if e2fsck
		// had been killed before closing the file.
		{"4k-unfinished", 4096, []string{"UNDO_IO_SIMULATE_UNFINISHED=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := image(t, tc.bs, 8<<20)
			before, up := e2fsckUndo(t, img, tc.env)
			h, err := undo.ReadHeader(up)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Validate(false); err != nil {
				t.Fatal(err)
			}
			if h.SuperOffset() != 1 || h.KeyOffset() != 2 || h.BlockSize() != uint32(tc.bs) ||
				h.FSBlockSize() != uint32(tc.bs) || h.NumKeys() == 0 || h.Compat() != 0 {
				t.Errorf("header: super %d key %d block size %d fs block size %d keys %d compat %#x",
					h.SuperOffset(), h.KeyOffset(), h.BlockSize(), h.FSBlockSize(), h.NumKeys(), h.Compat())
			}
			if h.Finished() != (tc.env == nil) {
				t.Errorf("finished = %v", h.Finished())
			}
			dev := openDev(t, img)
			defer dev.Close()
			var replayed []undo.Key
			res, err := undo.ApplyWith(up, dev, undo.Options{Replayed: func(k undo.Key) { replayed = append(replayed, k) }})
			if err != nil {
				t.Fatal(err)
			}
			if res.Incomplete != (tc.env != nil) || res.Mismatch != nil || res.Corrupt != 0 ||
				res.Keys != int(h.NumKeys()) || len(replayed) != res.Keys {
				t.Errorf("result %+v, %d replayed", res, len(replayed))
			}
			// The superblock (block 0 of a 4K file system, 1 of a 1K one)
			// is among the blocks e2fsck saved.
			sbBlk := uint64(1024 / tc.bs)
			found := false
			for _, k := range replayed {
				if k.FSBlock <= sbBlk && sbBlk < k.FSBlock+uint64((int(k.Size)+tc.bs-1)/tc.bs) {
					found = true
				}
			}
			if !found {
				t.Errorf("no key covers the superblock: %+v", replayed)
			}
			sameBytes(t, "image after Apply", readFile(t, img), before)
		})
	}
}

// TestWriterE2undo: an undo file our Writer made is replayed by e2undo
// itself, and the image is the original byte for byte.
func TestWriterE2undo(t *testing.T) {
	for _, tc := range []struct {
		name string
		bs   int
		size int64
	}{
		{"4k", 4096, 8 << 20},
		{"1k", 1024, 8 << 20},
		{"4k-partial-tail", 4096, 8<<20 + 3000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := image(t, tc.bs, tc.size)
			orig := readFile(t, img)
			rng := rand.New(rand.NewPCG(uint64(tc.bs), uint64(tc.size)))
			ws := workload(rng, int64(len(orig)), int64(tc.bs), 150, orig[1024:2048])
			up := filepath.Join(t.TempDir(), "gofsck.e2undo")
			writeThrough(t, img, up, tc.bs, ws, true)
			if bytes.Equal(readFile(t, img), orig) {
				t.Fatal("the writes changed nothing")
			}
			out, code := runTool(t, nil, "e2undo", up, img)
			if code != 0 {
				t.Fatalf("e2undo: exit %d\n%s", code, out)
			}
			sameBytes(t, "image after e2undo", readFile(t, img), orig)
			if strings.Contains(out, "Incomplete") {
				t.Errorf("e2undo calls a closed file incomplete:\n%s", out)
			}
		})
	}
}

// TestWriterApply: our Writer and our Apply, finished and unfinished (the
// Writer abandoned without Close leaves what a kill leaves, since nothing
// is buffered in memory), and a dry run that must not write.
func TestWriterApply(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bs     int
		size   int64
		closed bool
	}{
		{"4k", 4096, 8 << 20, true},
		{"1k-unclosed", 1024, 8 << 20, false},
		{"4k-partial-tail-unclosed", 4096, 8<<20 + 3000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := image(t, tc.bs, tc.size)
			orig := readFile(t, img)
			rng := rand.New(rand.NewPCG(7, uint64(tc.bs)))
			ws := workload(rng, int64(len(orig)), int64(tc.bs), 150, orig[1024:2048])
			up := filepath.Join(t.TempDir(), "u")
			writeThrough(t, img, up, tc.bs, ws, tc.closed)
			changed := readFile(t, img)
			if bytes.Equal(changed, orig) {
				t.Fatal("the writes changed nothing")
			}

			dev := openDev(t, img)
			defer dev.Close()
			n := 0
			res, err := undo.ApplyWith(up, dev, undo.Options{DryRun: true, Replayed: func(undo.Key) { n++ }})
			if err != nil {
				t.Fatal(err)
			}
			sameBytes(t, "image after a dry run", readFile(t, img), changed)
			if n == 0 || res.Keys != n || res.Incomplete == tc.closed {
				t.Errorf("dry run: %d keys reported, result %+v", n, res)
			}

			if err := undo.Apply(up, dev); err != nil {
				t.Fatal(err)
			}
			sameBytes(t, "image after Apply", readFile(t, img), orig)
		})
	}
}

// TestWriterKeys checks the key layout the Writer produces: one key per run
// of new blocks in a WriteAt (not one per block), no block saved twice, and
// a rewrite of saved blocks adds nothing.
func TestWriterKeys(t *testing.T) {
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	dev := &blockdev.Mem{Data: bytes.Clone(data)}
	up := filepath.Join(t.TempDir(), "u")
	w, err := undo.Create(up, dev, 1024, nil)
	if err != nil {
		t.Fatal(err)
	}
	writes := []write{
		{5000, make([]byte, 300*1024)},       // blocks 4..304: one key
		{6000, make([]byte, 100)},            // already saved
		{2047, []byte{1, 2}},                 // blocks 1 and 2: one key
		{400 * 1024, make([]byte, 600*1024)}, // blocks 400..999: 511 blocks at most per key
	}
	for _, x := range writes {
		if _, err := w.WriteAt(x.data, x.off); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.WriteAt(make([]byte, 10), int64(len(data))-5); !errors.Is(err, undo.ErrRange) {
		t.Errorf("write past the end: %v, want ErrRange", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt([]byte{1}, 0); !errors.Is(err, undo.ErrClosed) {
		t.Errorf("write after Close: %v", err)
	}
	var keys []undo.Key
	dev2 := &blockdev.Mem{Data: bytes.Clone(dev.Data)}
	if _, err := undo.ApplyWith(up, dev2, undo.Options{Replayed: func(k undo.Key) { keys = append(keys, k) }}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dev2.Data, data) {
		t.Error("Apply did not restore the original")
	}
	type span struct{ blk, size uint64 }
	var got []span
	for _, k := range keys {
		got = append(got, span{k.FSBlock, uint64(k.Size)})
	}
	want := []span{{1, 2048}, {4, 301 * 1024}, {400, 511 * 1024}, {911, 89 * 1024}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("keys (block, size) = %v, want %v", got, want)
	}
}

// TestApplyRefuses: every check Apply makes before writing, on a real
// image and a real undo file, each time with the device left untouched.
func TestApplyRefuses(t *testing.T) {
	img := image(t, 1024, 4<<20)
	orig := readFile(t, img)
	rng := rand.New(rand.NewPCG(3, 3))
	ws := workload(rng, int64(len(orig)), 1024, 60, orig[1024:2048])
	good := filepath.Join(t.TempDir(), "good")
	writeThrough(t, img, good, 1024, ws, true)
	changed := readFile(t, img)
	goodBytes := readFile(t, good)
	h, err := undo.ReadHeader(good)
	if err != nil {
		t.Fatal(err)
	}
	bs := int(h.BlockSize())

	reseal := func(b []byte) { // fix the header checksum after editing it
		binary.LittleEndian.PutUint32(b[508:], csum.Crc32c(^uint32(0), b[:508]))
	}
	resealKeys := func(kb []byte) {
		binary.LittleEndian.PutUint32(kb[4:], 0)
		binary.LittleEndian.PutUint32(kb[4:], csum.Crc32c(^uint32(0), kb))
	}
	// Another file system: the modified image with another UUID.
	otherFS := bytes.Clone(changed)
	copy(otherFS[1024+0x68:], bytes.Repeat([]byte{0x42}, 16))

	// force: what Force does with the case: "restores" (the image comes
	// back whole), "skips" (Apply succeeds, skipping bad keys), "" (Force
	// does not help).
	for _, tc := range []struct {
		name  string
		edit  func(b []byte) []byte
		dev   []byte
		want  error
		force string
	}{
		{"not-an-undo-file", func(b []byte) []byte { b[0] = 'X'; return b }, nil, undo.ErrNotUndoFile, ""},
		{"short", func(b []byte) []byte { return b[:100] }, nil, io.ErrUnexpectedEOF, ""},
		{"header-checksum", func(b []byte) []byte { b[100]++; return b }, nil, undo.ErrHeaderChecksum, "restores"},
		{"zero-block-size", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[36:], 0)
			reseal(b)
			return b
		}, nil, undo.ErrCorruptHeader, ""},
		{"block-size-small", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[32:], 512)
			reseal(b)
			return b
		}, nil, undo.ErrBlockSizeTooSmall, ""},
		{"block-size-large", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[32:], 2<<20)
			reseal(b)
			return b
		}, nil, undo.ErrBlockSizeTooLarge, ""},
		{"incompat-feature", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[52:], 1)
			reseal(b)
			return b
		}, nil, undo.ErrUnknownFeature, "restores"},
		{"wrong-filesystem", nil, otherFS, undo.ErrWrongFilesystem, "restores"},
		{"superblock-checksum", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[40:], 12345)
			reseal(b)
			return b
		}, nil, undo.ErrSuperblockChecksum, "restores"},
		{"superblock-copy-beyond-file", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[16:], 1<<50)
			reseal(b)
			return b
		}, nil, undo.ErrCorrupt, ""},
		{"key-magic", func(b []byte) []byte { b[2*bs]++; return b }, nil, undo.ErrKeyMagic, "restores"},
		{"key-block-checksum", func(b []byte) []byte { b[2*bs+8]++; return b }, nil, undo.ErrKeyChecksum, "restores"}, // reserved word
		{"key-checksum", func(b []byte) []byte { b[2*bs+16+8]++; return b }, nil, undo.ErrKeyChecksum, "skips"},       // first key's blk_crc
		{"data-checksum", func(b []byte) []byte { b[3*bs+5]++; return b }, nil, undo.ErrBlockChecksum, "skips"},
		{"too-many-keys", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[8:], 1<<62)
			reseal(b)
			return b
		}, nil, nil, "skips"},
		{"data-beyond-file", func(b []byte) []byte { return b[:len(b)-1] }, nil, undo.ErrCorrupt, "skips"},
		{"key-offset-huge", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[24:], ^uint64(0)-3)
			reseal(b)
			return b
		}, nil, undo.ErrCorrupt, "skips"},
		{"block-too-long", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[2*bs+16+12:], 513*uint32(bs))
			resealKeys(b[2*bs : 3*bs])
			return b
		}, nil, undo.ErrBlockTooLong, ""},
		{"key-beyond-device", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[2*bs+16:], 1<<40)
			resealKeys(b[2*bs : 3*bs])
			return b
		}, nil, undo.ErrCorrupt, "skips"},
		{"fs-offset-beyond-device", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[48:], undo.CompatFSOffset)
			binary.LittleEndian.PutUint64(b[64:], 1<<40)
			reseal(b)
			return b
		}, nil, undo.ErrCorrupt, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			up := filepath.Join(dir, "u")
			b := bytes.Clone(goodBytes)
			if tc.edit != nil {
				b = tc.edit(b)
			}
			if err := os.WriteFile(up, b, 0o600); err != nil {
				t.Fatal(err)
			}
			devPath := filepath.Join(dir, "img")
			want := changed
			if tc.dev != nil {
				want = tc.dev
			}
			if err := os.WriteFile(devPath, want, 0o600); err != nil {
				t.Fatal(err)
			}
			dev := openDev(t, devPath)
			defer dev.Close()
			err := undo.Apply(up, dev)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("Apply: %v, want %v", err, tc.want)
			}
			sameBytes(t, "device after a refused Apply", readFile(t, devPath), want)

			res, ferr := undo.ApplyWith(up, dev, undo.Options{Force: true})
			switch tc.force {
			case "":
				if ferr == nil {
					t.Fatalf("Force applied a file it cannot follow (%+v)", res)
				}
				sameBytes(t, "device after a refused forced Apply", readFile(t, devPath), want)
			case "restores":
				if ferr != nil || res.Corrupt != 0 {
					t.Fatalf("forced Apply: %v, %d keys skipped", ferr, res.Corrupt)
				}
				sameBytes(t, "device after a forced Apply", readFile(t, devPath), orig)
			case "skips":
				if ferr != nil || res.Corrupt == 0 {
					t.Fatalf("forced Apply: %v, %d keys skipped", ferr, res.Corrupt)
				}
			}
			if tc.name == "wrong-filesystem" && (res.Mismatch == nil || !res.Mismatch.UUID) {
				t.Errorf("forced apply to another file system: mismatch %+v", res.Mismatch)
			}
		})
	}
}

// TestApplyInterruptedSuperblock: a writer killed after recording a
// superblock change but before the device got it leaves a copy that differs
// from the device. Apply accepts that for an unfinished file when the UUID
// agrees, and restores the original; with another UUID it refuses.
func TestApplyInterruptedSuperblock(t *testing.T) {
	data := make([]byte, 256<<10)
	for i := range data {
		data[i] = byte(i * 13)
	}
	for _, sameUUID := range []bool{true, false} {
		t.Run(fmt.Sprint("same-uuid=", sameUUID), func(t *testing.T) {
			dev := &blockdev.Mem{Data: bytes.Clone(data)}
			up := filepath.Join(t.TempDir(), "u")
			w, err := undo.Create(up, dev, 1024, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.WriteAt([]byte("new data"), 9000); err != nil {
				t.Fatal(err)
			}
			before := bytes.Clone(dev.Data)
			if _, err := w.WriteAt([]byte{1, 2, 3, 4}, 1024+0x0C); err != nil { // free blocks count
				t.Fatal(err)
			}
			// The kill: the device never got the superblock write.
			copy(dev.Data, before)
			if !sameUUID {
				dev.Data[1024+0x68] ^= 0xff
			}
			res, err := undo.ApplyWith(up, dev, undo.Options{})
			if !sameUUID {
				if !errors.Is(err, undo.ErrWrongFilesystem) {
					t.Fatalf("Apply with another UUID: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !res.Incomplete || res.Mismatch == nil || res.Mismatch.UUID {
				t.Errorf("result %+v, mismatch %+v", res, res.Mismatch)
			}
			sameBytes(t, "device", dev.Data, data)
		})
	}
}

// TestKilledWriterE2undo documents what e2undo does with the file of an
// interrupted Writer: it restores every saved block, says "Incomplete undo
// record; run e2fsck.", and then marks the file system not clean, so the
// only bytes that differ from the original are in the primary superblock
// (s_state, s_wtime, checksum) and what ext2fs_close rewrites with it.
func TestKilledWriterE2undo(t *testing.T) {
	img := image(t, 4096, 8<<20)
	orig := readFile(t, img)
	rng := rand.New(rand.NewPCG(11, 11))
	var ws []write
	for _, x := range workload(rng, int64(len(orig)), 4096, 80, orig[1024:2048]) {
		if x.off >= 4096 { // leave block 0 alone: e2undo rewrites it anyway
			ws = append(ws, x)
		}
	}
	up := filepath.Join(t.TempDir(), "u")
	writeThrough(t, img, up, 4096, ws, false)
	out, code := runTool(t, nil, "e2undo", up, img)
	if code != 0 || !strings.Contains(out, "Incomplete undo record; run e2fsck.") {
		t.Fatalf("e2undo: exit %d\n%s", code, out)
	}
	got := readFile(t, img)
	sameBytes(t, "image after e2undo, outside block 0", got[4096:], orig[4096:])
	if state := binary.LittleEndian.Uint16(got[1024+0x3A:]); state&1 != 0 {
		t.Errorf("e2undo left s_state %#x: valid bit still set", state)
	}
}

// TestApplyFSOffset: an undo file tune2fs wrote for a file system at an
// offset inside the image (fs_offset, E2UNDO_FEATURE_COMPAT_FS_OFFSET) is
// replayed at that offset exactly as e2undo replays it; a wrong -o offset
// finds no matching superblock. (undo_io's write_byte adds the offset
// twice, so the superblock, which the library writes through it, is saved
// from the wrong place and neither e2undo nor Apply can put it back; the
// test wants Apply to equal e2undo, and everything past the superblock's
// block restored.)
func TestApplyFSOffset(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "img")
	data := make([]byte, 9<<20)
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	if err := os.WriteFile(img, data, 0o600); err != nil {
		t.Fatal(err)
	}
	const off = 65536
	if out, code := runTool(t, nil, "mke2fs", "-q", "-F", "-t", "ext4", "-E", fmt.Sprintf("offset=%d", off), img, "8M"); code != 0 {
		t.Fatalf("mke2fs: exit %d\n%s", code, out)
	}
	orig := readFile(t, img)
	up := filepath.Join(dir, "u")
	if out, code := runTool(t, nil, "tune2fs", "-z", up, "-O", "^has_journal", fmt.Sprintf("%s?offset=%d", img, off)); code != 0 {
		t.Fatalf("tune2fs: exit %d\n%s", code, out)
	}
	changed := readFile(t, img)
	if bytes.Equal(changed, orig) {
		t.Fatal("tune2fs changed nothing")
	}
	h, err := undo.ReadHeader(up)
	if err != nil {
		t.Fatal(err)
	}
	if h.Compat()&undo.CompatFSOffset == 0 || h.FSOffset() != off {
		t.Fatalf("compat %#x, fs offset %d: want the fs_offset feature and %d", h.Compat(), h.FSOffset(), off)
	}

	e2u := filepath.Join(dir, "e2undo.img")
	if err := os.WriteFile(e2u, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := runTool(t, nil, "e2undo", up, e2u); code != 0 {
		t.Fatalf("e2undo: exit %d\n%s", code, out)
	}
	want := readFile(t, e2u)

	dev := openDev(t, img)
	defer dev.Close()
	if _, err := undo.ApplyWith(up, dev, undo.Options{Offset: 0, HasOffset: true}); !errors.Is(err, undo.ErrWrongFilesystem) {
		t.Fatalf("Apply at offset 0: %v, want ErrWrongFilesystem", err)
	}
	sameBytes(t, "image after a refused Apply", readFile(t, img), changed)
	if err := undo.Apply(up, dev); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, img)
	sameBytes(t, "image after Apply (against e2undo's)", got, want)
	sameBytes(t, "image past the superblock", got[off+4096:], orig[off+4096:])
}
