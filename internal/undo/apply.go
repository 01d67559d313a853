package undo

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"gofsck/internal/csum"
)

// Options tune ApplyWith, mirroring e2undo's flags.
type Options struct {
	// Force is e2undo -f: apply although the header or key block
	// checksums, the feature words or the superblock do not match. Keys
	// whose data fails its checksum or lies outside the undo file or the
	// device are skipped (e2undo -f would write them anyway) and counted in
	// Result.Corrupt.
	Force bool
	// DryRun is e2undo -n: read and check everything, write nothing.
	DryRun bool
	// Offset, when HasOffset, is the file system's byte offset on the
	// device, overriding the header's fs_offset (e2undo -o).
	Offset    uint64
	HasOffset bool
	// Replayed, if set, is called for each key as it is replayed (or would
	// be, in a dry run), in replay order.
	Replayed func(Key)
	// BadKey, if set, is called with each key error that Force lets Apply
	// skip.
	BadKey func(*KeyError)
}

// Result says what ApplyWith did.
type Result struct {
	Header     Header
	Keys       int   // keys replayed
	Bytes      int64 // bytes replayed
	Incomplete bool  // the writer never closed the file (state not finished)
	// Mismatch is set when the device's superblock is not the one the undo
	// file recorded and the file was applied anyway: with Force, or, for an
	// unfinished file, because the UUIDs agree (a writer killed between
	// recording a superblock change and writing it leaves exactly that).
	Mismatch *MismatchError
	// Corrupt counts the keys Force skipped (bad data checksum, outside
	// the undo file or the device); Ignored the key blocks whose bad magic
	// or checksum Force overrode.
	Corrupt, Ignored int
}

// MismatchError says how the device's superblock differs from the undo
// file's copy, in e2undo's terms.
type MismatchError struct {
	UUID, MountTime, WriteTime, KBytesWritten bool
	// ChecksumOnly: the copy equals the device's superblock but not the
	// header's sb_crc.
	ChecksumOnly bool
}

func (e *MismatchError) Error() string {
	if e.ChecksumOnly {
		return ErrSuperblockChecksum.Error()
	}
	var why []string
	if e.UUID {
		why = append(why, "UUID")
	}
	if e.MountTime {
		why = append(why, "last mount time")
	}
	if e.WriteTime {
		why = append(why, "last write time")
	}
	if e.KBytesWritten {
		why = append(why, "lifetime write counter")
	}
	if len(why) == 0 {
		return ErrWrongFilesystem.Error()
	}
	return ErrWrongFilesystem.Error() + " (" + strings.Join(why, ", ") + " differ)"
}

// Unwrap returns ErrWrongFilesystem or ErrSuperblockChecksum.
func (e *MismatchError) Unwrap() error {
	if e.ChecksumOnly {
		return ErrSuperblockChecksum
	}
	return ErrWrongFilesystem
}

// KeyError is a problem with one key block or key. FileBlock is the undo
// block concerned; Key is set for errors about one key's data.
type KeyError struct {
	Err       error // ErrKeyMagic, ErrKeyChecksum, ErrBlockTooLong, ErrBlockChecksum, ErrCorrupt
	FileBlock uint64
	Key       *Key
	Detail    string
}

func (e *KeyError) Error() string {
	s := fmt.Sprintf("%v at undo block %d", e.Err, e.FileBlock)
	if e.Key != nil {
		s = fmt.Sprintf("%v (file system block %d, undo block %d)", e.Err, e.Key.FSBlock, e.Key.FileBlock)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the sentinel.
func (e *KeyError) Unwrap() error { return e.Err }

// ReadHeader reads the header of the undo file at path, checking only the
// magic (as e2undo does before -h).
func ReadHeader(path string) (*Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readHeader(f)
}

func readHeader(r io.ReaderAt) (*Header, error) {
	h := new(Header)
	if err := readFull(r, h[:], 0); err != nil {
		return nil, fmt.Errorf("undo: reading the header: %w", err)
	}
	if !h.MagicOK() {
		return nil, ErrNotUndoFile
	}
	return h, nil
}

// Apply restores dev from the undo file at path: every saved block goes
// back to where it was saved from. It checks everything (header, superblock,
// key blocks, each block's checksum, every offset) before writing anything,
// and refuses a file whose superblock copy does not match dev unless the
// file is unfinished and the UUIDs agree. Unlike e2undo it changes nothing
// else: after a finished or interrupted writer alike, dev is again byte for
// byte what it was before the writer's first write.
func Apply(path string, dev Target) error {
	_, err := ApplyWith(path, dev, Options{})
	return err
}

// ApplyWith is Apply with e2undo's options. The Result is valid (partly
// filled) even with an error.
func ApplyWith(path string, dev Target, opt Options) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return &Result{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return &Result{}, err
	}
	return apply(f, fi.Size(), dev, opt)
}

// applier holds one replay's geometry; every value in it has been checked.
type applier struct {
	r        io.ReaderAt
	fileSize uint64
	bs       uint64 // undo block size, 1 KiB..1 MiB
	fbs      uint64 // fsblk unit, 1 KiB..1 MiB
	fsOff    uint64 // file system offset on the device
	devSize  uint64
	buf      []byte
}

// entry is a key that passed every check, with its device range.
type entry struct {
	Key
	start uint64 // device byte offset
}

func apply(r io.ReaderAt, fileSize int64, dev Target, opt Options) (*Result, error) {
	res := &Result{}
	h, err := readHeader(r)
	if err != nil {
		return res, err
	}
	res.Header = *h
	if err := h.Validate(opt.Force); err != nil {
		return res, err
	}
	res.Incomplete = !h.Finished()
	a := &applier{r: r, fileSize: uint64(max(fileSize, 0)), bs: uint64(h.BlockSize()),
		fbs: uint64(h.FSBlockSize()), fsOff: h.FSOffset(), devSize: uint64(max(dev.Size(), 0))}
	if opt.HasOffset {
		a.fsOff = opt.Offset
	}
	if a.fsOff > a.devSize || a.devSize-a.fsOff < SuperblockOffset+SuperblockSize {
		return res, fmt.Errorf("%w: file system offset %d leaves no superblock on a device of %d bytes",
			ErrCorrupt, a.fsOff, a.devSize)
	}
	if err := a.checkSuper(h, dev, opt, res); err != nil {
		return res, err
	}
	keys, err := a.loadKeys(h, opt, res)
	if err != nil {
		return res, err
	}
	return res, a.replay(keys, dev, opt, res)
}

// checkSuper compares the device's superblock with the undo file's copy,
// as e2undo's check_filesystem does.
func (a *applier) checkSuper(h *Header, dev Target, opt Options, res *Result) error {
	var devSB, copySB [SuperblockSize]byte
	if err := readFull(dev, devSB[:], int64(a.fsOff+SuperblockOffset)); err != nil {
		return fmt.Errorf("undo: reading the file system superblock: %w", err)
	}
	so := h.SuperOffset()
	if a.fileSize < SuperblockSize || so > (a.fileSize-SuperblockSize)/a.bs {
		return fmt.Errorf("%w: superblock copy at undo block %d is beyond the end of the file", ErrCorrupt, so)
	}
	if err := readFull(a.r, copySB[:], int64(so*a.bs)); err != nil {
		return fmt.Errorf("undo: reading the superblock copy: %w", err)
	}
	m := binary.LittleEndian.Uint16(copySB[offSMagic:])
	binary.LittleEndian.PutUint16(copySB[offSMagic:], ^m)
	var mis *MismatchError
	if !bytes.Equal(devSB[:], copySB[:]) {
		mis = describeMismatch(devSB[:], copySB[:])
	} else if csum.Crc32c(^uint32(0), copySB[:]) != h.SuperCRC() {
		mis = &MismatchError{ChecksumOnly: true}
	}
	if mis == nil {
		return nil
	}
	sameUUID := bytes.Equal(devSB[offSUUID:offSUUID+16], copySB[offSUUID:offSUUID+16])
	if opt.Force || (res.Incomplete && sameUUID) {
		res.Mismatch = mis
		return nil
	}
	return mis
}

func describeMismatch(dev, undo []byte) *MismatchError {
	le32 := func(b []byte, off int) uint64 { return uint64(binary.LittleEndian.Uint32(b[off:])) }
	tstamp := func(b []byte, lo, hi int) uint64 { return le32(b, lo) | uint64(b[hi])<<32 }
	return &MismatchError{
		UUID:          !bytes.Equal(dev[offSUUID:offSUUID+16], undo[offSUUID:offSUUID+16]),
		MountTime:     tstamp(dev, offSMtime, offSMtimeHi) != tstamp(undo, offSMtime, offSMtimeHi),
		WriteTime:     tstamp(dev, offSWtime, offSWtimeHi) != tstamp(undo, offSWtime, offSWtimeHi),
		KBytesWritten: binary.LittleEndian.Uint64(dev[offSKbytesWritten:]) != binary.LittleEndian.Uint64(undo[offSKbytesWritten:]),
	}
}

// loadKeys reads every key block e2undo's way (a key block, then its keys'
// data, then the next key block) and checks each key's data. Nothing it
// allocates is sized by a field that was not checked against the file
// size: key blocks and keys are only appended once read from the file.
func (a *applier) loadKeys(h *Header, opt Options, res *Result) ([]entry, error) {
	kpb := uint64(keysPerBlock(int(a.bs)))
	kb := make(keyBlock, a.bs)
	fileBlocks := a.fileSize / a.bs // whole blocks, where a key block must lie
	lblk := h.KeyOffset()
	n := h.NumKeys()
	var keys []entry
	// bad returns e unless Force overrides it; a key it skips counts as
	// corrupt, a key block's bad magic or checksum as ignored.
	bad := func(e *KeyError) error {
		if !opt.Force {
			return e
		}
		if errors.Is(e, ErrKeyMagic) || errors.Is(e, ErrKeyChecksum) {
			res.Ignored++
		} else {
			res.Corrupt++
		}
		if opt.BadKey != nil {
			opt.BadKey(e)
		}
		return nil
	}
	for i := uint64(0); i < n; i += kpb {
		if lblk >= fileBlocks {
			e := &KeyError{Err: ErrCorrupt, FileBlock: lblk, Detail: "key block beyond the end of the undo file"}
			if err := bad(e); err != nil {
				return nil, err
			}
			break // with -f, replay the keys read so far, as e2undo does
		}
		if err := readFull(a.r, kb, int64(lblk*a.bs)); err != nil {
			return nil, fmt.Errorf("undo: reading key block %d: %w", lblk, err)
		}
		if kb.magic() != KeyBlockMagic {
			if err := bad(&KeyError{Err: ErrKeyMagic, FileBlock: lblk}); err != nil {
				return nil, err
			}
		} else if kb.crc() != kb.computeCRC() {
			if err := bad(&KeyError{Err: ErrKeyChecksum, FileBlock: lblk}); err != nil {
				return nil, err
			}
		}
		lblk++
		for j := range min(kpb, n-i) {
			fsblk, crc, size := decodeKey(kb.key(int(j)))
			k := Key{FSBlock: fsblk, CRC: crc, Size: size, FileBlock: lblk, Index: int(i + j)}
			if uint64(size) > MaxExtentBlocks*a.bs {
				// e2undo stops here even with -f: the file's layout
				// cannot be followed past this key.
				return nil, &KeyError{Err: ErrBlockTooLong, FileBlock: lblk, Key: &k}
			}
			lblk += (uint64(size) + a.bs - 1) / a.bs
			e, err := a.checkKey(k)
			if err != nil {
				return nil, err
			}
			if e != nil {
				if err := bad(e); err != nil {
					return nil, err
				}
				continue
			}
			keys = append(keys, entry{Key: k, start: a.fsOff + fsblk*a.fbs})
		}
	}
	return keys, nil
}

// checkKey bounds one key's data in the undo file and on the device and
// verifies its checksum. It returns a *KeyError for a bad key and an error
// for a failed read.
func (a *applier) checkKey(k Key) (*KeyError, error) {
	size := uint64(k.Size)
	if size > a.fileSize || k.FileBlock > (a.fileSize-size)/a.bs {
		return &KeyError{Err: ErrCorrupt, FileBlock: k.FileBlock, Key: &k, Detail: "data beyond the end of the undo file"}, nil
	}
	room := a.devSize - a.fsOff // checked positive by apply
	if k.FSBlock > room/a.fbs || size > room-k.FSBlock*a.fbs {
		return &KeyError{Err: ErrCorrupt, FileBlock: k.FileBlock, Key: &k, Detail: "block beyond the end of the device"}, nil
	}
	c := ^uint32(0)
	err := a.stream(k, func(p []byte, _ uint64) error {
		c = csum.Crc32c(c, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if c != k.CRC {
		return &KeyError{Err: ErrBlockChecksum, FileBlock: k.FileBlock, Key: &k}, nil
	}
	return nil, nil
}

// stream reads a key's data in pieces of at most maxChunk bytes and passes
// each with its offset in the key.
func (a *applier) stream(k Key, fn func(p []byte, off uint64) error) error {
	size := uint64(k.Size)
	if uint64(len(a.buf)) < min(size, maxChunk) {
		a.buf = make([]byte, min(size, maxChunk))
	}
	base := k.FileBlock * a.bs
	for off := uint64(0); off < size; {
		n := min(size-off, uint64(len(a.buf)))
		p := a.buf[:n]
		if err := readFull(a.r, p, int64(base+off)); err != nil {
			return fmt.Errorf("undo: reading undo block %d: %w", k.FileBlock, err)
		}
		if err := fn(p, off); err != nil {
			return err
		}
		off += n
	}
	return nil
}

// replay writes the keys back in device order. Keys never overlap in a
// file an undo writer made (each block is saved once); if a hostile or
// appended-to file has overlapping keys, they are replayed from the last
// saved to the first, so that the oldest contents win.
func (a *applier) replay(keys []entry, dev Target, opt Options, res *Result) error {
	slices.SortStableFunc(keys, func(x, y entry) int { return cmp.Compare(x.start, y.start) })
	for i := 1; i < len(keys); i++ {
		if keys[i-1].start+uint64(keys[i-1].Size) > keys[i].start {
			slices.SortFunc(keys, func(x, y entry) int { return cmp.Compare(y.Index, x.Index) })
			break
		}
	}
	var ioErr error
	for _, k := range keys {
		err := a.stream(k.Key, func(p []byte, off uint64) error {
			if opt.DryRun {
				return nil
			}
			_, err := dev.WriteAt(p, int64(k.start+off))
			return err
		})
		if err != nil {
			// Go on, as e2undo does: every other block restored is a
			// block less for e2fsck to fix.
			if ioErr == nil {
				ioErr = fmt.Errorf("%w: file system block %d: %w", ErrReplay, k.FSBlock, err)
			}
			continue
		}
		res.Keys++
		res.Bytes += int64(k.Size)
		if opt.Replayed != nil {
			opt.Replayed(k.Key)
		}
	}
	if !opt.DryRun {
		if s, ok := dev.(syncer); ok {
			if err := s.Sync(); err != nil && ioErr == nil {
				ioErr = fmt.Errorf("%w: syncing the device: %w", ErrReplay, err)
			}
		}
	}
	return ioErr
}
