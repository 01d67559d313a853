// Package blockdev gives the checker its view of a device: an image file, a
// block device, or memory (for tests). It is the only package that makes
// system calls on the device. Reads are positional (pread) so any number of
// goroutines may read at once; nothing here holds a lock across I/O.
package blockdev

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Device is what the filesystem layer reads from and the repair layer writes
// to.
type Device interface {
	io.ReaderAt
	io.WriterAt
	// Size is the device size in bytes.
	Size() int64
	// Stats returns the I/O counters since the device was opened.
	Stats() Stats
	Close() error
}

// Stats counts device I/O for -t output and benchmarks.
type Stats struct {
	ReadBytes, ReadOps   uint64
	WriteBytes, WriteOps uint64
}

// counters are updated atomically by concurrent readers.
type counters struct {
	readBytes, readOps, writeBytes, writeOps atomic.Uint64
}

func (c *counters) stats() Stats {
	return Stats{
		ReadBytes: c.readBytes.Load(), ReadOps: c.readOps.Load(),
		WriteBytes: c.writeBytes.Load(), WriteOps: c.writeOps.Load(),
	}
}

// ErrReadOnly is returned by WriteAt on a device opened read-only.
var ErrReadOnly = errors.New("blockdev: device opened read-only")

// File is a Device over an image file or a block device.
type File struct {
	f        *os.File
	size     int64
	readOnly bool
	counters
	// ra, when set (SetReadahead), serves Prefetch with reads of its
	// own instead of kernel hints.
	ra *readahead
}

// OpenError says why a device could not be opened; Kind lets the command
// choose its message.
type OpenError struct {
	Path string
	Kind string // "missing", "permission", "directory", "type", "busy", "io"
	Err  error
}

func (e *OpenError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *OpenError) Unwrap() error { return e.Err }

// ComErr is com_err's wording for the failures the e2fsprogs tools name
// themselves ("No such file or directory", "Is a directory", "Operation
// not permitted" for EPERM, "Permission denied"); ok is false for the
// other kinds.
func (e *OpenError) ComErr() (text string, ok bool) {
	switch e.Kind {
	case "missing":
		return "No such file or directory", true
	case "directory":
		return "Is a directory", true
	case "permission":
		if errors.Is(e.Err, syscall.EPERM) {
			return "Operation not permitted", true
		}
		return "Permission denied", true
	}
	return "", false
}

// Open opens path for reading (and writing unless readOnly). exclusive adds
// O_EXCL, which for a block device fails while it is mounted.
func Open(path string, readOnly, exclusive bool) (*File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		kind := "io"
		switch {
		case errors.Is(err, os.ErrNotExist):
			kind = "missing"
		case errors.Is(err, os.ErrPermission):
			kind = "permission"
		}
		return nil, &OpenError{Path: path, Kind: kind, Err: err}
	}
	mode := fi.Mode()
	switch {
	case mode.IsDir():
		return nil, &OpenError{Path: path, Kind: "directory", Err: errors.New("is a directory")}
	case mode.IsRegular(), mode&os.ModeDevice != 0:
		// Regular files and block devices; character devices too, read
		// as files are, as libext2fs's unix_io reads them (/dev/null
		// then ends in a short read, /dev/zero in a bad magic number).
	default:
		return nil, &OpenError{Path: path, Kind: "type", Err: errors.New("not a regular file or block device")}
	}
	flag := os.O_RDWR
	if readOnly {
		flag = os.O_RDONLY
	}
	isBlock := mode&os.ModeDevice != 0 && mode&os.ModeCharDevice == 0
	if exclusive && isBlock {
		flag |= os.O_EXCL
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		kind := "io"
		switch {
		case errors.Is(err, os.ErrPermission):
			kind = "permission"
		case errors.Is(err, syscall.EBUSY):
			kind = "busy"
		}
		return nil, &OpenError{Path: path, Kind: kind, Err: err}
	}
	if !readOnly && isBlock && deviceReadOnly(f) {
		// A read-only block device (losetup -r, a write-protected
		// disk) opens for writing and fails only at the first write:
		// refuse it now, with the EPERM libext2fs's unix_open returns
		// after its BLKROGET check, so that no fix is announced that
		// cannot be made.
		f.Close()
		return nil, &OpenError{Path: path, Kind: "permission", Err: &os.PathError{Op: "open", Path: path, Err: syscall.EPERM}}
	}
	d := &File{f: f, readOnly: readOnly}
	if mode.IsRegular() {
		d.size = fi.Size()
	} else if mode&os.ModeCharDevice != 0 {
		// No size to ask for: reads say where it ends.
		d.size = 0
	} else if d.size, err = blockDeviceSize(f); err != nil {
		f.Close()
		return nil, &OpenError{Path: path, Kind: "io", Err: fmt.Errorf("size query: %w", err)}
	}
	return d, nil
}

// blkROGet is the BLKROGET ioctl request number.
const blkROGet = 0x125e

// deviceReadOnly reports whether the kernel says the block device f is
// read-only (an ioctl that fails says it is not).
func deviceReadOnly(f *os.File) bool {
	var ro int32
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), blkROGet, uintptr(unsafe.Pointer(&ro)))
	return e == 0 && ro != 0
}

// blkGetSize64 is the BLKGETSIZE64 ioctl request number.
const blkGetSize64 = 0x80081272

func blockDeviceSize(f *os.File) (int64, error) {
	var size uint64
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), blkGetSize64, uintptr(unsafe.Pointer(&size)))
	if e != 0 {
		return 0, e
	}
	return int64(size), nil
}

// ReadAt reads len(p) bytes at off. Reading past the end of the device
// returns io.ErrUnexpectedEOF (or io.EOF when nothing was read).
func (d *File) ReadAt(p []byte, off int64) (int, error) {
	n, err := d.f.ReadAt(p, off)
	d.readOps.Add(1)
	d.readBytes.Add(uint64(n))
	if err == io.EOF && n > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// WriteAt writes p at off unless the device is read-only.
func (d *File) WriteAt(p []byte, off int64) (int, error) {
	if d.readOnly {
		return 0, ErrReadOnly
	}
	n, err := d.f.WriteAt(p, off)
	d.writeOps.Add(1)
	d.writeBytes.Add(uint64(n))
	return n, err
}

// Size returns the device size in bytes.
func (d *File) Size() int64 { return d.size }

// Stats returns the I/O counters.
func (d *File) Stats() Stats { return d.counters.stats() }

// Close stops the read-ahead and closes the device.
func (d *File) Close() error {
	if d.ra != nil {
		d.ra.close()
	}
	return d.f.Close()
}

// Sync makes the writes so far durable (fsync; for a block device it also
// flushes the device's write cache).
func (d *File) Sync() error {
	if d.readOnly {
		return nil
	}
	return d.f.Sync()
}

// Mem is an in-memory Device for tests.
type Mem struct {
	Data     []byte
	ReadOnly bool
	counters
}

// ReadAt reads from the buffer.
func (m *Mem) ReadAt(p []byte, off int64) (int, error) {
	m.readOps.Add(1)
	if off < 0 || off >= int64(len(m.Data)) {
		return 0, io.EOF
	}
	n := copy(p, m.Data[off:])
	m.readBytes.Add(uint64(n))
	if n < len(p) {
		return n, io.ErrUnexpectedEOF
	}
	return n, nil
}

// WriteAt writes into the buffer (never growing it).
func (m *Mem) WriteAt(p []byte, off int64) (int, error) {
	if m.ReadOnly {
		return 0, ErrReadOnly
	}
	if off < 0 || off+int64(len(p)) > int64(len(m.Data)) {
		return 0, io.ErrShortWrite
	}
	m.writeOps.Add(1)
	m.writeBytes.Add(uint64(len(p)))
	return copy(m.Data[off:], p), nil
}

// Size returns the buffer length.
func (m *Mem) Size() int64 { return int64(len(m.Data)) }

// Stats returns the I/O counters.
func (m *Mem) Stats() Stats { return m.counters.stats() }

// Close does nothing.
func (m *Mem) Close() error { return nil }

var (
	_ Device = (*File)(nil)
	_ Device = (*Mem)(nil)
)

// Prefetcher is implemented by devices that can start reading a range in
// the background (so that later reads find it cached).
type Prefetcher interface {
	Prefetch(off, n int64)
}

// Prefetch starts reading [off, off+n) in the background: with the
// read-ahead SetReadahead configures, or else by asking the kernel to read
// it ahead (POSIX_FADV_WILLNEED). It returns at once; errors are ignored
// since it is only a hint.
func (d *File) Prefetch(off, n int64) {
	if n <= 0 || off < 0 || off >= d.size {
		return
	}
	n = min(n, d.size-off)
	if d.ra != nil {
		d.ra.add(off, n)
		return
	}
	const fadvWillNeed = 3 // POSIX_FADV_WILLNEED
	syscall.Syscall6(syscall.SYS_FADVISE64, d.f.Fd(), uintptr(off), uintptr(n), fadvWillNeed, 0, 0)
}

// LaterPrefetcher is implemented by devices that can read ranges for a
// later pass in the background, behind the ranges Prefetch asked for.
// PromoteLater says the later pass has come: what is still queued for it
// is read first.
type LaterPrefetcher interface {
	PrefetchLater(off, n int64)
	PromoteLater()
}

// PrefetchLater is Prefetch for what a later pass will read: with a
// read-ahead on a parallel device, it is read only when nothing Prefetch
// asked for is waiting; on a serial device, or without a read-ahead, it
// does nothing (a serial device has no spare capacity, and kernel hints
// have no priority).
func (d *File) PrefetchLater(off, n int64) {
	if d.ra == nil || n <= 0 || off < 0 || off >= d.size {
		return
	}
	d.ra.addLater(off, min(n, d.size-off))
}

// PromoteLater moves what PrefetchLater queued and is not read yet ahead
// of everything else.
func (d *File) PromoteLater() {
	if d.ra != nil {
		d.ra.promote()
	}
}

var (
	_ Prefetcher      = (*File)(nil)
	_ LaterPrefetcher = (*File)(nil)
)

// Buffer-cache ioctls: BLKFLSBUF for block devices, FDFLUSH for floppies.
const (
	blkFlsBuf = 0x1261
	fdFlush   = 0x024B
)

// FlushBuffers is e2fsck's -F (the library's ext2fs_sync_device with
// flushb): path is opened read-only and fsynced, then the kernel is asked
// to drop its buffers for it, with BLKFLSBUF or, for a floppy, FDFLUSH.
// An image file takes neither ioctl, which is an error too. A failed open
// is an *OpenError.
func FlushBuffers(path string) error {
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return &OpenError{Path: path, Kind: "io", Err: err}
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return err
	}
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), blkFlsBuf, 0)
	if e == 0 {
		return nil
	}
	if _, _, e2 := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fdFlush, 0); e2 == 0 {
		return nil
	}
	return e
}
