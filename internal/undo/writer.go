package undo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"gofsck/internal/csum"
)

// Target is the device an undo Writer writes through and Apply restores.
// blockdev.File and blockdev.Mem satisfy it. If it also has a Sync() error
// method, Writer.Close and Apply call it.
type Target interface {
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	Size() int64
}

// syncer is the optional Sync of a Target.
type syncer interface{ Sync() error }

// maxChunk bounds the old contents read from the device at once, and so the
// Writer's scratch buffer.
const maxChunk = 1 << 20

// Writer is a Target that saves the original contents of every undo block
// in the undo file before the first write to it reaches the device. Only
// one goroutine should write (WriteAt and Close serialise on a mutex);
// ReadAt passes straight through.
type Writer struct {
	dev  Target
	size int64 // device size at Create: writes must stay inside it
	bs   int64 // undo block size, also the unit of the keys' fsblk

	mu sync.Mutex
	// mu protects every field below.
	f       *os.File
	hdr     Header
	sb      [SuperblockSize]byte // the device superblock once the writes issued so far are done
	saved   blockSet             // undo blocks whose original contents are in the file
	keyb    keyBlock             // the current key block
	keyBlk  uint64               // where the current key block lives in the file
	inBlock int                  // keys in keyb
	numKeys uint64               // keys written to the file
	durable uint64               // keys below this index were fsynced: never rewritten
	next    uint64               // next free undo block of the file
	scratch []byte               // old contents read from the device
	err     error                // sticky: the undo file may no longer describe the device
	closed  bool
}

var _ Target = (*Writer)(nil)

// Create creates (or truncates) the undo file at path for dev, whose file
// system has block size fsBlockSize (a power of two, 1 KiB to 1 MiB). The
// undo block size is fsBlockSize, capped at the page size so that rewriting
// a key block is a single-page write, which a SIGKILL cannot tear.
// superblock, if not nil, must be the 1024 bytes at offset 1024 of dev; it
// is checked against the device, which is read in any case. When Create
// returns, the empty undo file is durable.
func Create(path string, dev Target, fsBlockSize int, superblock []byte) (*Writer, error) {
	if fsBlockSize < MinBlockSize || fsBlockSize > MaxBlockSize || fsBlockSize&(fsBlockSize-1) != 0 {
		return nil, fmt.Errorf("undo: file system block size %d is not a power of two from %d to %d",
			fsBlockSize, MinBlockSize, MaxBlockSize)
	}
	bs := fsBlockSize
	if ps := os.Getpagesize(); bs > ps && ps >= MinBlockSize {
		bs = ps
	}
	size := dev.Size()
	if size < SuperblockOffset+SuperblockSize {
		return nil, fmt.Errorf("undo: device of %d bytes has no superblock", size)
	}
	w := &Writer{dev: dev, size: size, bs: int64(bs), keyb: make(keyBlock, bs)}
	if err := readFull(dev, w.sb[:], SuperblockOffset); err != nil {
		return nil, fmt.Errorf("undo: reading the superblock: %w", err)
	}
	if superblock != nil && !bytes.Equal(superblock, w.sb[:]) {
		return nil, errors.New("undo: the superblock passed to Create is not the device's")
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	w.f = f
	copy(w.hdr[offMagic:], Magic)
	binary.LittleEndian.PutUint64(w.hdr[offSuperOffset:], 1)
	binary.LittleEndian.PutUint64(w.hdr[offKeyOffset:], 2)
	binary.LittleEndian.PutUint32(w.hdr[offBlockSize:], uint32(bs))
	binary.LittleEndian.PutUint32(w.hdr[offFSBlockSize:], uint32(bs))
	w.keyBlk, w.next = 2, 3

	// Blocks 0 to 2: header, superblock copy, first (still empty) key block.
	buf := make([]byte, 3*bs)
	sbCrc := superCopy(buf[bs:], w.sb[:])
	w.fillHeader(sbCrc)
	copy(buf, w.hdr[:])
	if _, err := f.WriteAt(buf, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("undo: writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("undo: syncing %s: %w", path, err)
	}
	syncDir(path)
	return w, nil
}

// syncDir makes the new file's directory entry durable. It is best effort:
// some file systems refuse fsync on directories, and the file's own fsync
// is what the kill tests rely on.
func syncDir(path string) {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}

// readFull reads len(p) bytes at off or fails.
func readFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// fillHeader sets num_keys, sb_crc and the header checksum.
func (w *Writer) fillHeader(sbCrc uint32) {
	binary.LittleEndian.PutUint64(w.hdr[offNumKeys:], w.numKeys)
	binary.LittleEndian.PutUint32(w.hdr[offSbCrc:], sbCrc)
	w.hdr.setCRC()
}

// ReadAt reads from the device.
func (w *Writer) ReadAt(p []byte, off int64) (int, error) { return w.dev.ReadAt(p, off) }

// Size is the device size.
func (w *Writer) Size() int64 { return w.dev.Size() }

// WriteAt writes p at off on the device after saving, in one batch made
// durable by one fsync, the original contents of every undo block of the
// range not saved before. If saving fails nothing is written, and every
// later WriteAt fails too: the undo file still restores what was written
// before.
func (w *Writer) WriteAt(p []byte, off int64) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, ErrClosed
	}
	if w.err != nil {
		return 0, w.err
	}
	if off < 0 || off > w.size || int64(len(p)) > w.size-off {
		return 0, fmt.Errorf("%w: %d bytes at %d, device size %d", ErrRange, len(p), off, w.size)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if err := w.save(p, off); err != nil {
		w.err = fmt.Errorf("undo: %w", err)
		return 0, w.err
	}
	return w.dev.WriteAt(p, off)
}

// save records the original contents of the blocks [off, off+len(p))
// touches for the first time, then the header, and syncs. Order matters for
// a kill at any point: data and keys first, then the superblock copy, then
// the header whose num_keys makes the new keys count.
func (w *Writer) save(p []byte, off int64) error {
	first, last := uint64(off/w.bs), uint64((off+int64(len(p))-1)/w.bs)
	run := uint64(max(1, maxChunk/w.bs))
	added := false
	for b := first; b <= last; {
		if w.saved.has(b) {
			b++
			continue
		}
		e := b + 1
		for e <= last && e-b < run && !w.saved.has(e) {
			e++
		}
		if err := w.saveRun(b, e); err != nil {
			return err
		}
		added = true
		b = e
	}
	if added {
		if err := w.writeKeyBlock(); err != nil {
			return err
		}
	}
	sbChanged := w.overlaySuper(p, off)
	if !added && !sbChanged {
		return nil
	}
	if err := w.writeHeader(sbChanged); err != nil {
		return err
	}
	if !added {
		// Only the superblock copy changed: it identifies the file
		// system, it restores nothing, so it needs no fsync of its own.
		return nil
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("syncing the undo file: %w", err)
	}
	w.durable = w.numKeys
	return nil
}

// saveRun saves undo blocks [b, e), none saved yet, read from the device in
// one piece.
func (w *Writer) saveRun(b, e uint64) error {
	start := int64(b) * w.bs
	end := min(int64(e)*w.bs, w.size)
	if w.scratch == nil {
		w.scratch = make([]byte, max(w.bs, maxChunk/w.bs*w.bs))
	}
	buf := w.scratch[:end-start]
	if err := readFull(w.dev, buf, start); err != nil {
		return fmt.Errorf("reading device block %d: %w", b, err)
	}
	kpb := keysPerBlock(int(w.bs))
	seg, segFile := 0, w.next // data not yet written: buf[seg:], at undo block segFile
	for i := 0; i < int(e-b); i++ {
		blk := b + uint64(i)
		lo := int64(i) * w.bs
		data := buf[lo:min(lo+w.bs, int64(len(buf)))]
		if w.inBlock == kpb {
			// The key block is full: its data so far goes out, then
			// the block itself, and the next key block takes the next
			// free undo block.
			if err := w.writeFile(buf[seg:lo], segFile); err != nil {
				return err
			}
			if err := w.writeKeyBlock(); err != nil {
				return err
			}
			w.keyBlk = w.next
			w.next++
			clear(w.keyb)
			w.inBlock = 0
			seg, segFile = int(lo), w.next
		}
		if !w.extendLast(blk, data) {
			encodeKey(w.keyb.key(w.inBlock), blk, csum.Crc32c(^uint32(0), data), uint32(len(data)))
			w.inBlock++
			w.numKeys++
		}
		w.next++
		w.saved.add(blk)
	}
	return w.writeFile(buf[seg:], segFile)
}

// extendLast appends data, the contents of undo block blk, to the last key
// when that key is not yet durable and ends right before blk, as undo_io
// does; the key then still lies on a run of whole undo blocks followed by
// this one. Durable keys are never changed, so that a key block rewrite can
// only add keys.
func (w *Writer) extendLast(blk uint64, data []byte) bool {
	if w.inBlock == 0 || w.numKeys <= w.durable {
		return false
	}
	k := w.keyb.key(w.inBlock - 1)
	fsblk, crc, size := decodeKey(k)
	if int64(size)%w.bs != 0 || fsblk+uint64(int64(size)/w.bs) != blk ||
		int64(size)+int64(len(data)) >= MaxExtentBlocks*w.bs {
		return false
	}
	encodeKey(k, fsblk, csum.Crc32c(crc, data), size+uint32(len(data)))
	return true
}

// writeFile writes p at undo block blk.
func (w *Writer) writeFile(p []byte, blk uint64) error {
	if len(p) == 0 {
		return nil
	}
	if _, err := w.f.WriteAt(p, int64(blk)*w.bs); err != nil {
		return fmt.Errorf("writing the undo file: %w", err)
	}
	return nil
}

// writeKeyBlock seals and writes the current key block.
func (w *Writer) writeKeyBlock() error {
	if w.inBlock == 0 {
		return nil
	}
	w.keyb.seal()
	return w.writeFile(w.keyb, w.keyBlk)
}

// overlaySuper applies the part of a write that falls on the primary
// superblock to w.sb and reports whether it changed.
func (w *Writer) overlaySuper(p []byte, off int64) bool {
	lo := max(off, SuperblockOffset)
	hi := min(off+int64(len(p)), SuperblockOffset+SuperblockSize)
	if lo >= hi {
		return false
	}
	dst := w.sb[lo-SuperblockOffset : hi-SuperblockOffset]
	src := p[lo-off : hi-off]
	if bytes.Equal(dst, src) {
		return false
	}
	copy(dst, src)
	return true
}

// writeHeader writes the superblock copy (when withSuper) and then the
// header. Each is one write inside one page.
func (w *Writer) writeHeader(withSuper bool) error {
	var sbc [SuperblockSize]byte
	sbCrc := superCopy(sbc[:], w.sb[:])
	if withSuper {
		if err := w.writeFile(sbc[:], w.hdr.SuperOffset()); err != nil {
			return err
		}
	}
	w.fillHeader(sbCrc)
	return w.writeFile(w.hdr[:], 0)
}

// Close syncs the device (if it can), records its superblock, marks the
// undo file finished, syncs and closes it. The device itself stays open.
// After a failed save the file is closed unfinished and the save's error
// returned: it still restores everything written before.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	if w.err != nil {
		w.f.Close()
		return w.err
	}
	err := w.finish()
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("undo: closing the undo file: %w", cerr)
	}
	return err
}

func (w *Writer) finish() error {
	if s, ok := w.dev.(syncer); ok {
		if err := s.Sync(); err != nil {
			return fmt.Errorf("undo: syncing the device: %w", err)
		}
	}
	// The device is the authority (a write may have failed half way).
	if err := readFull(w.dev, w.sb[:], SuperblockOffset); err != nil {
		return fmt.Errorf("undo: reading the superblock: %w", err)
	}
	binary.LittleEndian.PutUint32(w.hdr[offState:], w.hdr.State()|StateFinished)
	if err := w.writeHeader(true); err != nil {
		return fmt.Errorf("undo: %w", err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("undo: syncing the undo file: %w", err)
	}
	return nil
}
