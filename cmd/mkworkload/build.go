package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// summary is what build reports about a finished image.
type summary struct {
	Workload    string
	Image       string
	ImageBytes  int64
	Count       int64 // the -n actually used
	InodeCount  int64 // from dumpe2fs
	InodesUsed  int64
	BlockCount  int64
	BlocksUsed  int64
	BlockSize   int64
	MaxExtents  int64  // extents of the most fragmented measured file
	MaxPath     string // that file, relative to the fs root
	Note        string // workload-specific detail
	Populate    time.Duration
	Wall        time.Duration
	HostBytesKB int64 // disk space the image takes on the host, KiB
}

// String renders the summary as one line of key=value pairs.
func (s *summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "workload=%s image=%s n=%d size=%s inodes_used=%d/%d blocks_used=%d/%d bs=%d",
		s.Workload, s.Image, s.Count, humanBytes(s.ImageBytes), s.InodesUsed, s.InodeCount, s.BlocksUsed, s.BlockCount, s.BlockSize)
	fmt.Fprintf(&b, " max_extents=%d", s.MaxExtents)
	if s.MaxPath != "" {
		fmt.Fprintf(&b, " max_extents_file=/%s", s.MaxPath)
	}
	if s.Note != "" {
		fmt.Fprintf(&b, " %s", s.Note)
	}
	fmt.Fprintf(&b, " host_disk=%s populate=%.1fs wall=%.1fs", humanBytes(s.HostBytesKB*1024), s.Populate.Seconds(), s.Wall.Seconds())
	return b.String()
}

// env is what a workload's populate function gets.
type env struct {
	cfg  *config
	root string // mount point
	bs   int64  // filesystem block size
	log  io.Writer
	// ops counts completed file operations, for progress lines.
	ops atomic.Int64
	// measure lists paths (relative to root) whose extents are counted
	// for the summary; nil means walk the whole tree.
	measure []string
	// note is added to the summary line.
	note string
	// crashed: populate shut the filesystem down (the crash workload);
	// nothing can be synced or read through the mount any more.
	crashed bool
}

// logf prints a progress line on the log unless -q was given.
func (e *env) logf(format string, args ...any) {
	if !e.cfg.quiet {
		fmt.Fprintf(e.log, "mkworkload: "+format+"\n", args...)
	}
}

// build makes the image described by cfg. It always unmounts and detaches
// what it mounted before returning.
func build(ctx context.Context, cfg *config, log io.Writer) (sum *summary, err error) {
	start := time.Now()
	w := lookupWorkload(cfg.workload)
	if w == nil {
		return nil, fmt.Errorf("unknown workload %q", cfg.workload)
	}
	if cfg.count == 0 {
		cfg.count = w.defCount
	}
	for _, tool := range []string{"mke2fs", "mount", "umount", "dumpe2fs", "losetup"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s not found in PATH (install e2fsprogs and util-linux): %w", tool, err)
		}
	}
	p, err := w.plan(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.size > 0 {
		p.bytes = cfg.size
	}
	p.bytes = roundUp(p.bytes, 1<<20)

	if err := makeImage(cfg, p, log); err != nil {
		return nil, err
	}

	mnt, err := os.MkdirTemp(cfg.mntDir, "mkworkload-mnt-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if rerr := os.Remove(mnt); rerr != nil && err == nil {
			err = rerr
		}
	}()
	loopDev, err := mountLoop(cfg, mnt, log)
	if err != nil {
		return nil, err
	}
	mounted := true
	defer func() {
		if !mounted {
			return
		}
		if cerr := unmount(mnt, loopDev, cfg.image, log); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()

	var st unix.Statfs_t
	if err := unix.Statfs(mnt, &st); err != nil {
		return nil, fmt.Errorf("statfs %s: %w", mnt, err)
	}
	e := &env{cfg: cfg, root: mnt, bs: st.Bsize, log: log}
	popStart := time.Now()
	done := make(chan struct{})
	go progress(e, done, popStart)
	perr := w.populate(ctx, e)
	close(done)
	if perr != nil {
		return nil, fmt.Errorf("%s: %w", w.name, perr)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	popTime := time.Since(popStart)
	var maxExt int64
	var maxPath string
	if !e.crashed {
		if err := syncMount(mnt); err != nil {
			return nil, err
		}
		popTime = time.Since(popStart)
		if maxExt, maxPath, err = measureExtents(ctx, e); err != nil {
			return nil, fmt.Errorf("measuring extents: %w", err)
		}
	}
	mounted = false
	if err := unmount(mnt, loopDev, cfg.image, log); err != nil {
		return nil, err
	}
	sum = &summary{
		Workload: w.name, Image: cfg.image, ImageBytes: p.bytes, Count: cfg.count,
		MaxExtents: maxExt, MaxPath: maxPath, Note: e.note, Populate: popTime,
	}
	if err := fillFromDumpe2fs(ctx, cfg.image, sum); err != nil {
		return nil, err
	}
	var fst unix.Stat_t
	if err := unix.Stat(cfg.image, &fst); err == nil {
		sum.HostBytesKB = fst.Blocks / 2
	}
	sum.Wall = time.Since(start)
	return sum, nil
}

// progress prints the operation count every 10 seconds until done closes.
func progress(e *env, done <-chan struct{}, start time.Time) {
	if e.cfg.quiet {
		return
	}
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			n := e.ops.Load()
			secs := time.Since(start).Seconds()
			e.logf("%s: %d ops in %.0fs (%.0f/s)", e.cfg.workload, n, secs, float64(n)/secs)
		}
	}
}

// plan is a workload's request for the filesystem it needs.
type plan struct {
	bytes    int64    // image size
	inodes   int64    // mke2fs -N
	features []string // mke2fs -O
}

// makeImage creates a sparse file of p.bytes and runs mke2fs on it.
func makeImage(cfg *config, p plan, log io.Writer) error {
	if st, err := os.Stat(cfg.image); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s exists and is not a regular file", cfg.image)
	}
	if err := os.MkdirAll(filepath.Dir(cfg.image), 0o755); err != nil {
		return err
	}
	// Start from an empty file so that no old blocks stay allocated.
	f, err := os.OpenFile(cfg.image, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if err := f.Truncate(p.bytes); err != nil {
		f.Close()
		return fmt.Errorf("truncate %s: %w", cfg.image, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	// ext4 unless -mkfs names the type (mke2fs takes -t once).
	args := []string{"-t", "ext4", "-F", "-q"}
	if slices.Contains(strings.Fields(cfg.mkfsArgs), "-t") {
		args = args[2:]
	}
	if cfg.blockSize != 0 {
		args = append(args, "-b", strconv.Itoa(cfg.blockSize))
	}
	if p.inodes > 0 {
		args = append(args, "-N", strconv.FormatInt(p.inodes, 10))
	}
	if len(p.features) > 0 {
		args = append(args, "-O", strings.Join(p.features, ","))
	}
	args = append(args, strings.Fields(cfg.mkfsArgs)...)
	args = append(args, cfg.image)
	return runCmd(cfg, log, "mke2fs", args...)
}

// runCmd runs a command, returning its combined output in the error. It
// takes no context: setup commands are short, and a cleanup command must not
// be killed by the interrupt that triggered it.
func runCmd(cfg *config, log io.Writer, name string, args ...string) error {
	if cfg.verbose {
		fmt.Fprintf(log, "+ %s %s\n", name, strings.Join(args, " "))
	}
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// mountLoop loop-mounts cfg.image on mnt and returns the loop device used.
func mountLoop(cfg *config, mnt string, log io.Writer) (string, error) {
	// barrier=0 only drops cache flushes, which a throw-away image does
	// not need; it does not change the on-disk format.
	opts := "loop,noatime,barrier=0"
	if cfg.mountOpts != "" {
		opts += "," + cfg.mountOpts
	}
	if err := runCmd(cfg, log, "mount", "-t", "ext4", "-o", opts, cfg.image, mnt); err != nil {
		return "", err
	}
	dev, err := mountSource(mnt)
	if err != nil {
		// Mounted but unknown device: still unmount.
		uerr := unmount(mnt, "", cfg.image, log)
		return "", errors.Join(err, uerr)
	}
	return dev, nil
}

// mountSource finds the device mounted on dir in /proc/self/mountinfo.
func mountSource(dir string) (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	dev := ""
	for sc.Scan() {
		// id parent maj:min root mountpoint opts... - fstype source superopts
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || unescapeMountinfo(fields[4]) != dir {
			continue
		}
		for i := 5; i+2 < len(fields); i++ {
			if fields[i] == "-" {
				dev = fields[i+2]
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if dev == "" {
		return "", fmt.Errorf("%s: not found in /proc/self/mountinfo after mount", dir)
	}
	return dev, nil
}

// unescapeMountinfo undoes the octal escapes (\040 etc.) of mountinfo.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unmount unmounts mnt (retrying while busy) and makes sure loopDev, if it
// still backs image, is detached.
func unmount(mnt, loopDev, image string, log io.Writer) error {
	var err error
	for try := 0; try < 10; try++ {
		if err = unix.Unmount(mnt, 0); err == nil || errors.Is(err, unix.EINVAL) {
			err = nil
			break
		}
		if !errors.Is(err, unix.EBUSY) {
			break
		}
		time.Sleep(time.Duration(try+1) * 200 * time.Millisecond)
	}
	if err != nil {
		fmt.Fprintf(log, "mkworkload: umount %s: %v; detaching lazily\n", mnt, err)
		if lerr := unix.Unmount(mnt, unix.MNT_DETACH); lerr != nil {
			return fmt.Errorf("umount %s: %w (lazy: %v)", mnt, err, lerr)
		}
	}
	if loopDev == "" || !strings.HasPrefix(loopDev, "/dev/loop") {
		return err
	}
	// mount -o loop sets autoclear, so the device is normally gone by now.
	backing, rerr := os.ReadFile(filepath.Join("/sys/block", filepath.Base(loopDev), "loop", "backing_file"))
	if rerr != nil {
		return err
	}
	abs, _ := filepath.Abs(image)
	if strings.TrimSpace(string(backing)) == abs || sameFile(strings.TrimSpace(string(backing)), image) {
		if out, derr := exec.Command("losetup", "-d", loopDev).CombinedOutput(); derr != nil {
			// A race with autoclear is not an error.
			if _, serr := os.Stat(filepath.Join("/sys/block", filepath.Base(loopDev), "loop", "backing_file")); serr == nil {
				return errors.Join(err, fmt.Errorf("losetup -d %s: %w: %s", loopDev, derr, bytes.TrimSpace(out)))
			}
		}
	}
	return err
}

// sameFile reports whether a and b name the same file.
func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// fillFromDumpe2fs reads the counts from dumpe2fs -h into s.
func fillFromDumpe2fs(ctx context.Context, image string, s *summary) error {
	out, err := exec.CommandContext(ctx, "dumpe2fs", "-h", image).Output()
	if err != nil {
		return fmt.Errorf("dumpe2fs -h %s: %w", image, err)
	}
	h := parseDumpe2fs(out)
	s.InodeCount = h["Inode count"]
	s.InodesUsed = h["Inode count"] - h["Free inodes"]
	s.BlockCount = h["Block count"]
	s.BlocksUsed = h["Block count"] - h["Free blocks"]
	s.BlockSize = h["Block size"]
	if s.InodeCount == 0 || s.BlockSize == 0 {
		return fmt.Errorf("dumpe2fs -h %s: no inode count or block size in output", image)
	}
	return nil
}

// parseDumpe2fs returns the numeric "Key: value" fields of dumpe2fs -h.
func parseDumpe2fs(out []byte) map[string]int64 {
	m := make(map[string]int64)
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err == nil {
			m[strings.TrimSpace(k)] = n
		}
	}
	return m
}

// humanBytes renders n as a short binary-prefixed size.
func humanBytes(n int64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return strconv.FormatInt(n, 10) + "B"
	}
	v := float64(n)
	i := -1
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d%ciB", int64(v), units[i])
	}
	return fmt.Sprintf("%.1f%ciB", v, units[i])
}

// roundUp rounds n up to a multiple of m.
func roundUp(n, m int64) int64 {
	return (n + m - 1) / m * m
}
