package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"gofsck/internal/blockdev"
	"gofsck/internal/check"
	"gofsck/internal/ext2fs"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Multi-mount protection (incompat mmp), as e2fsck 1.47.0 runs it:
//
//   - before the journal check the MMP block is read and judged
//     (e2fsck_check_mmp): an s_mmp_block out of range is
//     PR_0_MMP_INVALID_BLK, a bad magic or checksum PR_0_MMP_INVALID_MAGIC
//     or PR_0_MMP_CSUM_INVALID (yes: the block is reset), the sequence of
//     a running fsck or an unknown one stops the run with tune2fs's hint;
//   - a writable run then takes the filesystem as the library's
//     ext2fs_mmp_start does: a node's sequence is waited out
//     (min(2·interval+1, interval+60) seconds) and must not change, a new
//     random sequence with this host's and device's names is written and
//     waited on again, then the "fsck running" sequence is written;
//   - between the passes, at most once a minute, the block is checked to
//     be as written and its time refreshed (ext2fs_mmp_update);
//   - when the run ends the clean sequence is written (ext2fs_mmp_stop);
//   - a journal recovery stops and starts the protocol twice, as e2fsck's
//     reopen after the replay and its restart do.
//
// MMP writes reach the device at once, not through the Overlay, so that
// other nodes see them: they are the protocol, not fixes, and do not make
// the run "modified" (e2fsck's do not either). With -z they go through the
// run's undo file, as e2fsck's go through its undo I/O manager, so that
// the undo puts back the block as found. A run that writes nothing else
// (a fix gofsck does not implement, a cancelled run) puts the block back
// as it was found instead of writing the clean sequence, so that the
// device is left untouched.
// A read-only run (-n) only reads the block.
//
// GOFSCK_TEST_MMP_NO_SLEEP=1 skips the waits (and only them): the
// differential tests set it, and run e2fsck with a sleep(3) that returns
// at once, so that each MMP case does not cost 11 seconds per writable run.
// GOFSCK_TEST_MMP_NO_SLEEP=forbid makes a wait panic instead: a test that
// a run waits for nothing says so without timing it.

// mmpNoSleepEnv names the test switch that skips the protocol's waits.
const mmpNoSleepEnv = "GOFSCK_TEST_MMP_NO_SLEEP"

// mmpUpdateEvery is EXT2_MIN_MMP_UPDATE_INTERVAL: the least time between
// two refreshes of the block during the run.
const mmpUpdateEvery = 60 * time.Second

// mmpRun is the MMP state of one run. The zero value is a run without MMP.
type mmpRun struct {
	o       *options
	ctx     context.Context
	f       *fs.FS
	rfd     *os.File   // reads: O_DIRECT on a block device
	wfd     *os.File   // writes (nil with -n)
	raw     []byte     // aligned read buffer (one block)
	off     int64      // byte offset of the MMP block
	checked bool       // e2fsck_check_mmp has run
	started bool       // the start protocol succeeded; stop is due
	buf     ondisk.MMP // what was written last (mmp_buf)
	orig    []byte     // the structure as found at the first read
	last    time.Time  // time of the last write
	host    []byte
	undo    *undoSession // -z: writes go through the run's undo file
	// discarded reports whether the run ends writing nothing (a fix
	// gofsck does not implement, a cancelled run).
	discarded func() bool
}

// begin runs at each (re)open of the filesystem: the first time it checks
// the block (e2fsck_check_mmp) and, in a writable run, starts the
// protocol; after a restart it stops and starts again, as e2fsck's close
// and reopen do. It returns false with the exit code when the run must end.
func (m *mmpRun) begin(ctx context.Context, o *options, f *fs.FS, ov *blockdev.Overlay,
	rc *repairRun, rep *problem.Reporter, name string, stdout, stderr io.Writer) (int, bool) {
	if !f.SB.HasIncompat(ondisk.IncompatMMP) {
		return 0, true
	}
	m.o, m.ctx, m.f, m.undo = o, ctx, f, rc.undo
	m.discarded = func() bool { return rep.Status().Unsupported != 0 || ctx.Err() != nil }
	if m.rfd == nil {
		if err := m.open(ov != nil); err != nil {
			fatal(o, stderr, "%s while reading MMP block", err)
			return fatalMMP(rep, name, stdout)
		}
		if m.wfd != nil {
			// The undo file exists before the block's first write.
			if _, err := m.undo.writer(ov.Base); err != nil {
				fatal(o, stderr, "%v while trying to create undo file %s", err, o.undoFile)
				return problem.ExitError, false
			}
		}
	}
	if !m.checked {
		m.checked = true
		if code, ok := m.check(ov, rc, rep, name, stdout, stderr); !ok {
			return code, false
		}
	} else if m.started {
		m.stop(false)
	}
	if m.wfd == nil {
		return 0, true
	}
	if err := m.start(); err != nil {
		// The library's open fails: e2fsck reports it as it reports any
		// failed open and exits.
		fatal(o, stderr, "%s while trying to open %s", err, o.device)
		rep.Fix(problem.Problem{Code: problem.PR_0_SB_CORRUPT})
		return problem.ExitError, false
	}
	return 0, true
}

// recovered is the reopen inside e2fsck's journal recovery: the protocol
// is stopped and started again on the recovered filesystem (and once more
// by the restart that follows, in begin). A failure here shows in begin.
func (m *mmpRun) recovered(f *fs.FS) {
	if !m.started {
		return
	}
	m.f = f
	m.stop(false)
	m.start()
}

// fatalMMP ends the run as e2fsck's fatal_error does before the
// filesystem was marked valid.
func fatalMMP(rep *problem.Reporter, name string, stdout io.Writer) (int, bool) {
	rep.MarkInvalid()
	return fatalExit(rep, problem.RunEnd{}, name, stdout), false
}

// open opens the device again for the MMP block alone, so that its reads
// and writes stay out of the run's device (and its counts of what the
// check changed): reads that no cache answers, O_DIRECT on a block device
// (a regular file is read plainly, as the library does), and, when
// writable, writes that are synced at once.
func (m *mmpRun) open(writable bool) error {
	flags := os.O_RDONLY
	if st, err := os.Stat(m.o.device); err == nil && !st.Mode().IsRegular() {
		flags |= unix.O_DIRECT
	}
	fd, err := os.OpenFile(m.o.device, flags, 0)
	if err != nil {
		return err
	}
	// Anonymous memory is page aligned, as O_DIRECT wants.
	raw, err := unix.Mmap(-1, 0, m.f.BlockSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		fd.Close()
		return err
	}
	m.rfd, m.raw = fd, raw
	if writable {
		if m.wfd, err = os.OpenFile(m.o.device, os.O_WRONLY, 0); err != nil {
			return err
		}
	}
	m.host, _ = hostName()
	return nil
}

// read reads the block as ext2fs_mmp_read does and returns its structure
// (valid until the next read) and the library's verdict.
func (m *mmpRun) read() (ondisk.MMP, error) {
	if !ext2fs.MMPBlockInRange(m.f) {
		return nil, ext2fs.MMPBadBlock
	}
	m.off = int64(m.f.SB.MMPBlock()) << m.f.BlockBits
	if n, err := m.rfd.ReadAt(m.raw, m.off); n != len(m.raw) {
		if err == nil || err == io.EOF {
			return nil, errShortRead
		}
		return nil, err
	}
	mm, _ := ondisk.NewMMP(m.raw)
	if m.orig == nil {
		m.orig = bytes.Clone(mm)
	}
	if e := ext2fs.VerifyMMP(m.f, mm); e != 0 {
		return mm, e
	}
	return mm, nil
}

// errShortRead is the library's EXT2_ET_SHORT_READ.
var errShortRead = fmt.Errorf("Attempt to read block from filesystem resulted in short read")

// write stamps the time and checksum into b and writes it to the device
// at once (ext2fs_mmp_write).
func (m *mmpRun) write(b ondisk.MMP) error {
	now := time.Now()
	b.SetTime(uint64(now.Unix()))
	m.last = now
	if m.f.MetadataCsum {
		b.SetChecksum(m.f.CsumSeed)
	}
	return m.put(b)
}

// put writes b at the MMP block and syncs it: through the undo file with
// -z (which saves the block as found first), else through the MMP
// descriptor.
func (m *mmpRun) put(b []byte) error {
	if m.undo.active() {
		w, err := m.undo.writer(nil)
		if err != nil {
			return err
		}
		if _, err := w.WriteAt(b, m.off); err != nil {
			return err
		}
		return syncDevice(m.undo.dev)
	}
	if _, err := m.wfd.WriteAt(b, m.off); err != nil {
		return err
	}
	return m.wfd.Sync()
}

// check is e2fsck_check_mmp.
func (m *mmpRun) check(ov *blockdev.Overlay, rc *repairRun, rep *problem.Reporter,
	name string, stdout, stderr io.Writer) (int, bool) {
	o := m.o
	mm, err := m.read()
	switch err {
	case nil:
	case ext2fs.MMPBadBlock:
		if !rep.Fix(problem.Problem{Code: problem.PR_0_MMP_INVALID_BLK}) || m.wfd == nil {
			return fatalMMP(rep, name, stdout)
		}
		// s_mmp_block = 0, written with the primary superblock when
		// e2fsck closes the filesystem to reopen it.
		sb := bytes.Clone(m.f.SB)
		s := ondisk.Superblock(sb)
		s.SetMMPBlock(0)
		s.SetWtime(uint32(time.Now().Unix()))
		s.SetBlockGroupNr(0)
		s.SetChecksum()
		if _, werr := ov.WriteAt(sb, ondisk.SuperblockOffset); werr != nil || !rc.flush() {
			return problem.ExitError, false
		}
		m.f.SB.SetMMPBlock(0)
		return 0, true
	case ext2fs.MMPMagicInvalid, ext2fs.MMPCsumInvalid:
		code := problem.PR_0_MMP_INVALID_MAGIC
		if err == ext2fs.MMPCsumInvalid {
			code = problem.PR_0_MMP_CSUM_INVALID
		}
		if !rep.Fix(problem.Problem{Code: code}) || m.wfd == nil {
			return fatalMMP(rep, name, stdout)
		}
		// ext2fs_mmp_clear: a fresh block, clean sequence.
		b := ondisk.MMP(make([]byte, ondisk.MMPSize))
		ext2fs.ResetMMP(m.f.SB, b, m.host, []byte(o.device))
		if werr := m.write(b); werr != nil {
			fatal(o, stderr, "%v while writing the MMP block", werr)
			return problem.ExitError, false
		}
		return 0, true
	default:
		fatal(o, stderr, "%s while reading MMP block", err)
		return fatalMMP(rep, name, stdout)
	}
	iv := ext2fs.MMPInterval(m.f.SB, mm, true)
	if e := ext2fs.MMPSeqState(mm); e != 0 {
		fatal(o, stderr, "%s while checking MMP block", e)
		fmt.Fprintf(stdout, "MMP check failed: If you are sure the filesystem is not in use on any node, run:\n'tune2fs -f -E clear_mmp %s'\n", name)
		dumpMMP(stdout, mm)
		return fatalMMP(rep, name, stdout)
	}
	wait := 2*iv + 1
	if o.verbose > 0 || wait > 4*ondisk.MMPMinCheckInterval {
		fmt.Fprintf(stdout, "MMP interval is %d seconds and total wait time is %d seconds. Please wait...\n", iv, wait*2)
	}
	return 0, true
}

// dumpMMP prints the block as e2fsck's dump_mmp_msg does.
func dumpMMP(w io.Writer, mm ondisk.MMP) {
	fmt.Fprintf(w, "MMP_block:\n    mmp_magic: 0x%x\n    mmp_check_interval: %d\n    mmp_sequence: %08x\n",
		mm.Magic(), mm.CheckInterval(), mm.Seq())
	fmt.Fprintf(w, "    mmp_update_date: %s    mmp_update_time: %d\n", ctime(int64(mm.Time())), int64(mm.Time()))
	fmt.Fprintf(w, "    mmp_node_name: %s\n    mmp_device_name: %s\n", mm.NodeName(), mm.BdevName())
}

// ctime formats t as ctime(3) does in the local time zone, with its
// newline; "(null)" when the C library could not (a year beyond int).
func ctime(t int64) string {
	tm := time.Unix(t, 0)
	if y := tm.Year(); y-1900 > 1<<31-1 || y-1900 < -(1<<31) || t > 1<<55 || t < -(1<<55) {
		return "(null)"
	}
	return tm.Format("Mon Jan _2 15:04:05 2006") + "\n"
}

// sleep waits s seconds of the protocol; a cancelled run stops waiting,
// as e2fsck's sleep(3) returns at its SIGINT.
func (m *mmpRun) sleep(s uint32) {
	switch os.Getenv(mmpNoSleepEnv) {
	case "1":
		return
	case "forbid":
		panic(fmt.Sprintf("MMP: a wait of %d s in a run that must not wait (%s=forbid)", s, mmpNoSleepEnv))
	}
	t := time.NewTimer(time.Duration(s) * time.Second)
	defer t.Stop()
	select {
	case <-t.C:
	case <-m.ctx.Done():
	}
}

// start is ext2fs_mmp_start on a writable run.
func (m *mmpRun) start() error {
	mm, err := m.read()
	if err != nil {
		return err
	}
	iv := ext2fs.MMPInterval(m.f.SB, mm, false)
	seq := mm.Seq()
	switch {
	case seq == ondisk.MMPSeqClean:
	case seq == ondisk.MMPSeqFsck:
		return ext2fs.MMPFsckOn
	case seq > ondisk.MMPSeqFsck:
		return ext2fs.MMPUnknownSeq
	default:
		// A node's sequence: it must not move for a while.
		iv = ext2fs.MMPInterval(m.f.SB, mm, true)
		m.sleep(ext2fs.MMPSleep(iv))
		if mm, err = m.read(); err != nil {
			return err
		}
		if mm.Seq() != seq {
			return ext2fs.MMPFailed
		}
	}
	b := ondisk.MMP(bytes.Clone(mm))
	seq = newMMPSeq()
	b.SetSeq(seq)
	b.PutNodeName(m.host)
	b.PutBdevName([]byte(m.o.device))
	if err := m.write(b); err != nil {
		return err
	}
	m.sleep(ext2fs.MMPSleep(iv))
	if mm, err = m.read(); err != nil {
		return err
	}
	if mm.Seq() != seq {
		return ext2fs.MMPFailed
	}
	b = ondisk.MMP(bytes.Clone(mm))
	b.SetSeq(ondisk.MMPSeqFsck)
	if err := m.write(b); err != nil {
		return err
	}
	m.buf = b
	m.started = true
	return nil
}

// newMMPSeq is a random sequence a node may use (at most MMPSeqMax).
func newMMPSeq() uint32 {
	for {
		if s := rand.Uint32(); s <= ondisk.MMPSeqMax {
			return s
		}
	}
}

// update refreshes the block between passes when a minute has gone by
// since the last write (ext2fs_mmp_update). It returns MMPChangeAbort,
// after printing e2fsck's message, when another node changed the block.
func (m *mmpRun) update(stdout io.Writer) error {
	if !m.started || time.Since(m.last) < mmpUpdateEvery {
		return nil
	}
	mm, err := m.read()
	if err != nil {
		return err
	}
	if !bytes.Equal(mm, m.buf) {
		fmt.Fprintf(stdout, "MMP check failed: UNEXPECTED INCONSISTENCY: the filesystem is being modified while fsck is running.\n")
		dumpMMP(stdout, mm)
		return ext2fs.MMPChangeAbort
	}
	m.buf.SetSeq(ondisk.MMPSeqFsck)
	return m.write(m.buf)
}

// stop ends the protocol (ext2fs_mmp_stop): when the block is still as
// this run wrote it, the clean sequence is written; when the run writes
// nothing else (restore), the block found at the start goes back instead.
func (m *mmpRun) stop(restore bool) {
	if !m.started {
		return
	}
	m.started = false
	mm, err := m.read()
	if err != nil || !bytes.Equal(mm, m.buf) {
		return
	}
	if restore && m.orig != nil {
		m.put(m.orig)
		return
	}
	b := ondisk.MMP(bytes.Clone(mm))
	b.SetSeq(ondisk.MMPSeqClean)
	m.write(b)
}

// close ends the protocol at the end of checkDevice and releases the
// read descriptor.
func (m *mmpRun) close() {
	m.stop(m.discarded != nil && m.discarded())
	if m.rfd != nil {
		m.rfd.Close()
		unix.Munmap(m.raw)
		m.rfd, m.raw = nil, nil
	}
	if m.wfd != nil {
		m.wfd.Close()
		m.wfd = nil
	}
}

// passes wraps the pass observer so that the block is refreshed before
// each pass, as e2fsck_run does; a block changed by another node aborts
// the run.
func (m *mmpRun) passes(f *fs.FS, next check.PassObserver, rep *problem.Reporter, stdout io.Writer) check.PassObserver {
	if !f.SB.HasIncompat(ondisk.IncompatMMP) {
		return next
	}
	return &mmpPasses{m: m, next: next, rep: rep, out: stdout}
}

type mmpPasses struct {
	m    *mmpRun
	next check.PassObserver
	rep  *problem.Reporter
	out  io.Writer
}

func (p *mmpPasses) PassStart(name string) {
	if err := p.m.update(p.out); err != nil {
		p.rep.Abort()
	}
	if p.next != nil {
		p.next.PassStart(name)
	}
}

func (p *mmpPasses) PassEnd(name string) {
	if p.next != nil {
		p.next.PassEnd(name)
	}
}

// hostName is gethostname(2): the kernel's node name.
func hostName() ([]byte, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return nil, err
	}
	n := bytes.IndexByte(u.Nodename[:], 0)
	if n < 0 {
		n = len(u.Nodename)
	}
	return bytes.Clone(u.Nodename[:n]), nil
}
