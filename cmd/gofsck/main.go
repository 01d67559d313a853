// Command gofsck checks ext2/ext3/ext4 filesystems. Its command line,
// output and exit codes follow e2fsck's so that it can stand in for
// fsck.ext4: `gofsck -fn /dev/sdb1`.
//
// With -y, -p or interactive answers it repairs: fixes are decided against
// an in-memory overlay of the device and written serially when the run is
// over (commit.go), optionally through an undo file (-z); `gofsck undo`
// restores one.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"gofsck/internal/blockdev"
	"gofsck/internal/check"
	"gofsck/internal/fs"
	"gofsck/internal/getopt"
	"gofsck/internal/iotrace"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// gcPercent is the collector's target, unless GOGC says otherwise.
const gcPercent = 50

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--sample" {
		os.Exit(runSample(filepath.Base(os.Args[0]), os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "undo" {
		os.Exit(runUndo(os.Args[2:], os.Stdout, os.Stderr))
	}
	if os.Getenv("GOGC") == "" {
		// The check's live heap is small next to what it reads, and the
		// collector's default (a heap twice the live one) would make peak
		// RSS a third larger for no measurable time: 50% keeps the
		// workloads' RSS near e2fsck's at the same speed (bench/RESULTS.md).
		debug.SetGCPercent(gcPercent)
	}
	stop := startProfile()
	code := run(os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options is the parsed command line.
type options struct {
	// memWatch ends the run when memory passes the budget (memlimit.go);
	// a repair disarms it before writing.
	memWatch *memoryWatch
	// syncSignals makes every SIGINT or SIGTERM delivered so far cancel
	// the run's context (interrupt.go); nil outside run.
	syncSignals func()
	prog        string
	device      string
	force       bool
	mode        problem.Mode
	modeCount   int
	preen       bool
	verbose     int
	timing      int
	superblk    uint64
	blockSize   int
	extended    []string
	journal     string
	name        string
	undoFile    string // -z: keep the old contents of every overwritten block here
	ext         extendedOptions
	report      *jsonReport // -E json=FILE; nil without it
	// progressFd is -C's descriptor (0: a bar on stdout); progressOn is
	// true when reporting starts on (-C given with fd >= 0).
	progressFd int
	progressOn bool
	// optimizeDirs is -D: rebuild every directory (pass 3A).
	optimizeDirs bool
	// extJournal is the external journal device found for the run.
	extJournal *extJournal
	// bb holds -c, -k, -l and -L (badblocks.go).
	bb badBlocksOpts
	// ra is the read-ahead openFS set up on the device (nil without
	// one, with io_depth=0).
	ra *readaheadRun
	// flush is -F: flush the device's buffers before the check.
	flush bool
	// mount is how the device is in use (check_mount, mounted.go).
	mount blockdev.MountFlags
	// tty reads interactive answers, for every question of the run.
	tty *bufio.Reader
	// answers is what the question of check_mount left for the problems'.
	answers problem.Answers
	// conf is what e2fsck.conf says (config.go).
	conf config
	// clock is the run's time (clock.go).
	clock clock
}

const optSpec = "panyrcdfktvDFVb:B:l:L:C:j:E:z:I:P:N:"

func usage(o *options, stderr io.Writer) int {
	fmt.Fprintf(stderr, `Usage: %s [-panyrcdfktvDFV] [-b superblock] [-B blocksize]
		[-l|-L bad_blocks_file] [-C fd] [-j external_journal]
		[-E extended-options] [-z undo_file] device

Emergency help:
 -p                   Automatic repair (no questions)
 -n                   Make no changes to the filesystem
 -y                   Assume "yes" to all questions
 -c                   Check for bad blocks and add them to the badblock list
 -f                   Force checking even if filesystem is marked clean
 -v                   Be verbose
 -b superblock        Use alternative superblock
 -B blocksize         Force blocksize when looking for superblock
 -j external_journal  Set location of the external journal
 -l bad_blocks_file   Add to badblocks list
 -L bad_blocks_file   Set badblocks list
 -z undo_file         Create an undo file
`, o.prog)
	return problem.ExitUsage
}

// nonNumeric reports a -b, -C, -I or -P argument sscanf finds no number in,
// as e2fsck's PRS does (no program name), and returns its exit code.
func nonNumeric(opt byte, arg string, stderr io.Writer) int {
	fmt.Fprintf(stderr, "\nInvalid non-numeric argument to -%c (\"%s\")\n\n", opt, arg)
	return problem.ExitNonDestruct
}

// parse reads the command line as e2fsck does.
func parse(args []string, stdout, stderr io.Writer) (*options, int, bool) {
	o := &options{prog: filepath.Base(args[0]), clock: readClock()}
	opts, operands, err := getopt.Parse(args[0], args[1:], optSpec)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return o, usage(o, stderr), false
	}
	for _, op := range opts {
		switch op.Name {
		case 'p', 'a':
			o.mode, o.preen = problem.ModePreen, true
			o.modeCount++
		case 'n':
			o.mode = problem.ModeNo
			o.modeCount++
		case 'y':
			o.mode = problem.ModeYes
			o.modeCount++
		case 'f':
			o.force = true
		case 'v':
			o.verbose++
		case 't':
			o.timing++
		case 'V':
			fmt.Fprintf(stderr, "gofsck %s\n", buildVersion())
			return o, 0, false
		case 'b':
			// sscanf "%llu", as e2fsck reads it.
			v, ok := scanUint64(op.Arg)
			if !ok {
				return o, nonNumeric(op.Name, op.Arg, stderr), false
			}
			o.superblk = v
		case 'B':
			// atoi: anything is a number, 0 when it is not one.
			o.blockSize = int(cAtoi(op.Arg))
		case 'I', 'P':
			// Read with sscanf "%d" and not used (e2fsck's inode
			// buffer and process sizes).
			if _, ok := scanInt(op.Arg); !ok {
				return o, nonNumeric(op.Name, op.Arg, stderr), false
			}
		case 'E':
			o.extended = append(o.extended, strings.Split(op.Arg, ",")...)
		case 'j':
			if !parseJournalArg(o, op.Arg, stderr) {
				return o, problem.ExitError, false
			}
		case 'N':
			o.name = op.Arg
		case 'z':
			o.undoFile = op.Arg
		case 'c', 'l', 'L', 'k':
			o.bb.option(op.Name, op.Arg)
		case 'D':
			o.optimizeDirs = true
		case 'C':
			if _, ok := scanInt(op.Arg); !ok {
				// "-C abc": e2fsck's sscanf finds no number.
				return o, nonNumeric('C', op.Arg, stderr), false
			}
			fd, on, ok := parseProgressFd(op.Arg, o, stderr)
			if !ok {
				return o, problem.ExitError, false
			}
			o.progressFd, o.progressOn = fd, on
		case 'F':
			o.flush = true
		case 'r', 'd':
			// Accepted for compatibility; no effect in this version.
		}
	}
	if len(operands) != 1 {
		return o, usage(o, stderr), false
	}
	o.device = operands[0]
	if i := strings.IndexByte(o.device, '?'); i >= 0 {
		o.device = o.device[:i]
	}
	x, code, ok := parseExtended(o.extended, stderr)
	if !ok {
		return o, code, false
	}
	o.ext = x
	if o.modeCount > 1 {
		fatalError(stderr, "Only one of the options -p/-a, -n or -y may be specified.")
		return o, problem.ExitError, false
	}
	if os.Getenv("E2FSCK_FIXES_ONLY") != "" {
		o.ext.fixesOnly = true
	}
	if o.ext.fixesOnly && o.ext.bmap2extent {
		fmt.Fprintf(stderr, "%s: The -E bmap2extent and fixes_only options are incompatible.\n", o.prog)
		return o, problem.ExitError, false
	}
	if o.optimizeDirs && o.mode == problem.ModeNo {
		fmt.Fprintf(stderr, "%s: The -n and -D options are incompatible.\n", o.prog)
		return o, problem.ExitError, false
	}
	if code, ok := o.bb.validate(o, stderr); !ok {
		return o, code, false
	}
	if o.optimizeDirs && (os.Getenv("E2FSCK_FIXES_ONLY") != "" || strings.Contains(","+strings.Join(o.extended, ",")+",", ",fixes_only,")) {
		fmt.Fprintf(stderr, "%s: The -D and -E fixes_only options are incompatible.\n", o.prog)
		return o, problem.ExitError, false
	}
	// e2fsck reads its profile at the end of PRS, before -F flushes.
	conf, ok := loadConfig(stderr)
	if !ok {
		return o, problem.ExitError, false
	}
	applyConfig(o, conf)
	if o.flush {
		// -F: before the banner, as at the end of e2fsck's PRS.
		if err := blockdev.FlushBuffers(o.device); err != nil {
			var oe *blockdev.OpenError
			if errors.As(err, &oe) {
				fmt.Fprintf(stderr, "open: %s while opening %s for flushing\n", errorText(oe.Err), o.device)
			} else {
				fmt.Fprintf(stderr, "ext2fs_sync_device: %s while trying to flush %s\n", errorText(err), o.device)
			}
			return o, problem.ExitError, false
		}
	}
	return o, 0, true
}

// run is main without os.Exit, for tests.
func run(args []string, stdout, stderr io.Writer) int {
	o, code, ok := parse(args, stdout, stderr)
	if !ok {
		return code
	}
	if !o.preen {
		fmt.Fprintf(stderr, "gofsck %s\n", buildVersion())
	}
	in := newInterrupts() // interrupt.go
	defer in.stop()
	ctx := in.ctx
	o.syncSignals = in.sync
	o.tty = bufio.NewReaderSize(ttyReader{ctx, os.Stdin}, 16) // tty.go
	switch verdict, answers := checkMount(o, stdout, stderr); verdict {
	case mountAbort:
		return problem.ExitError
	case mountNo:
		return problem.ExitOK
	default:
		o.answers = answers
	}
	if o.modeCount == 0 {
		// After the banner, as in e2fsck's main.
		if !isTerminal(os.Stdin) || !isTerminal(os.Stdout) {
			fatalError(stderr, "need terminal for interactive repairs")
			return problem.ExitError
		}
		o.mode = problem.ModeInteractive
	}
	if o.timing > 1 || o.ext.json != "" {
		// -t -t and the JSON report give each pass's serial CPU time.
		defer lockCheckThread()() // timing.go
	}
	if o.ext.json != "" {
		r, err := newJSONReport(o.ext.json, args, o.device)
		if err != nil {
			fatal(o, stderr, "cannot create JSON report: %v", err)
			return problem.ExitError
		}
		o.report = r
		// The report's "error" is what the run says on stderr.
		stderr = io.MultiWriter(stderr, &r.stderr)
	}
	return o.report.finish(checkDevice(ctx, o, stdout, stderr), o.prog, stderr)
}

// fatal prints "prog: msg" to stderr, as e2fsck's com_err calls do:
// prog is the name gofsck was run by (fsck.ext4: ...).
func fatal(o *options, stderr io.Writer, format string, a ...any) {
	fmt.Fprintf(stderr, "%s: %s\n", o.prog, fmt.Sprintf(format, a...))
}

// fatalError prints msg as e2fsck's fatal_error does: after the program's
// own name, whatever it was run as ("e2fsck: aborted" from fsck.ext4 too).
func fatalError(stderr io.Writer, format string, a ...any) {
	fmt.Fprintf(stderr, "gofsck: %s\n", fmt.Sprintf(format, a...))
}

const badSuperHint = `
The superblock could not be read or does not describe a valid ext2/ext3/ext4
filesystem.  If the device is valid and it really contains an ext2/ext3/ext4
filesystem (and not swap or ufs or something else), then the superblock
is corrupt, and you might try running %s with an alternate superblock:
    %s -b 8193 <device>
 or
    %s -b 32768 <device>

`

// openFS opens the device and the filesystem, trying backup superblocks
// when the primary is unusable, as e2fsck does.
func openFS(o *options, stdout, stderr io.Writer) (blockdev.Device, *fs.FS, int) {
	readOnly := o.mode == problem.ModeNo
	file, err := blockdev.Open(o.device, readOnly, !readOnly && exclusiveOpen(o))
	if err != nil {
		var oe *blockdev.OpenError
		errors.As(err, &oe)
		kind := ""
		if oe != nil {
			kind = oe.Kind
		}
		switch kind {
		case "missing":
			fatal(o, stderr, "No such file or directory while trying to open %s", o.device)
			fmt.Fprintln(stdout, "Possibly non-existent device?")
		case "directory":
			fatal(o, stderr, "Is a directory while trying to open %s", o.device)
			printSbCorrupt(o, stdout)
		case "permission":
			// EACCES or EPERM (an immutable file, a read-only
			// block device), named as e2fsck names them.
			why := "Permission denied"
			if errors.Is(err, syscall.EPERM) {
				why = "Operation not permitted"
			}
			fatal(o, stderr, "%s while trying to open %s", why, o.device)
			access := "r/o"
			if !readOnly {
				access = "r/w"
			}
			fmt.Fprintf(stdout, "You must have %s access to the filesystem or be root\n", access)
		case "type":
			fatal(o, stderr, "%s is not a regular file or block device", o.device)
		case "busy":
			// O_EXCL on a block device in use (mounted, or opened
			// exclusively by another program).
			fatal(o, stderr, "Device or resource busy while trying to open %s", o.device)
			fmt.Fprintln(stdout, "Filesystem mounted or opened exclusively by another program?")
		default:
			fatal(o, stderr, "%v while trying to open %s", err, o.device)
		}
		return nil, nil, problem.ExitError
	}
	o.ra = startReadahead(o, file)
	dev, err := faultyFromEnv(file)
	if err != nil {
		file.Close()
		fatal(o, stderr, "%v", err)
		return nil, nil, problem.ExitError
	}
	if o.ext.trace != "" {
		// Record every read of the check for iowatch.
		dev = iotrace.New(dev)
	}
	if !readOnly {
		// Every fix is kept in memory until the run is over (commit.go).
		dev = blockdev.NewOverlay(dev)
	}
	f, err := openWithFallback(o, dev, stdout, stderr)
	if err != nil {
		dev.Close()
		return nil, nil, problem.ExitError
	}
	return dev, f, 0
}

// openWithFallback follows e2fsck's open sequence: when the primary
// superblock or the group descriptors are bad it tries a backup, and when
// the superblock is corrupt it retries once tolerating the errors the
// superblock checks can report.
func openWithFallback(o *options, dev blockdev.Device, stdout, stderr io.Writer) (*fs.FS, error) {
	relaxed := false
	for {
		opt := fs.Options{Superblock: o.superblk, BlockSize: o.blockSize, Relaxed: relaxed}
		f, err := fs.Open(dev, opt)
		var descErr error
		if err == nil {
			descErr = f.CheckDesc()
		}
		origErr := err
		// A bad descriptor size is not among the open errors e2fsck
		// answers with the backups: it goes straight to the relaxed retry.
		backup := isCorrupt(err) && !errors.Is(err, fs.ErrBadDescSize) || errors.Is(err, fs.ErrSbCsum) || descErr != nil
		if o.superblk == 0 && !o.preen && backup {
			if err != nil {
				fmt.Fprintf(stdout, "ext2fs_open2: %s\n", describe(err))
			}
			if descErr != nil {
				fmt.Fprintf(stdout, "ext2fs_check_desc: %s\n", descErr)
			}
			if f == nil || f.Groups > 1 {
				what := "Superblock invalid,"
				if err == nil {
					what = "Group descriptors look bad..."
				}
				fmt.Fprintf(stdout, "%s: %s trying backup blocks...\n", o.prog, what)
				blk, bs := backupSuperblock(dev, f, o.blockSize)
				bf, berr := fs.Open(dev, fs.Options{Superblock: blk, BlockSize: bs, Relaxed: relaxed})
				switch {
				case berr == nil:
					f, err = bf, nil
				case origErr == nil:
					fmt.Fprintf(stdout, "%s: %s while using the backup blocks", o.prog, describe(berr))
					fmt.Fprintf(stdout, "%s: going back to original superblock\n", o.prog)
				default:
					err = berr
				}
			}
		}
		if err == nil {
			return f, nil
		}
		if origErr != nil {
			err = origErr
		}
		fatal(o, stderr, "%s while trying to open %s", describe(err), o.device)
		switch {
		case errors.Is(err, fs.ErrShortRead):
			fmt.Fprintln(stdout, "Could this be a zero-length partition?")
		case (errors.Is(err, fs.ErrCorruptSuper) || errors.Is(err, fs.ErrBadDescSize)) && !relaxed:
			fmt.Fprintf(stdout, "%s: Trying to load superblock despite errors...\n", o.prog)
			relaxed = true
			continue
		case errors.Is(err, fs.ErrRevTooHigh):
			fmt.Fprintf(stdout, "The filesystem revision is apparently too high for this version of %s.\n(Or the filesystem superblock is corrupt)\n\n", o.prog)
			printSbCorrupt(o, stdout)
		default:
			printSbCorrupt(o, stdout)
			if errors.Is(err, fs.ErrBadMagic) {
				reportForeign(stdout, o.device, dev)
			}
		}
		return nil, err
	}
}

// printSbCorrupt prints e2fsck's PR_0_SB_CORRUPT hint; like any problem
// message it starts with "device: " when preening (the name given with -N,
// else the path: no superblock was read).
func printSbCorrupt(o *options, stdout io.Writer) {
	name := o.name
	if name == "" {
		name = o.device
	}
	if _, ok := o.conf.settings[problem.PR_0_SB_CORRUPT]; ok {
		// e2fsck.conf says something about it: print it as the problem
		// table's (with e2fsck's own name in it, as e2fsck does).
		problem.NewReporter(stdout, problem.Options{Mode: o.mode, Device: name, Settings: o.conf.settings}).
			Fix(problem.Problem{Code: problem.PR_0_SB_CORRUPT})
		return
	}
	if o.preen {
		fmt.Fprintf(stdout, "%s: ", name)
	}
	fmt.Fprintf(stdout, badSuperHint, o.prog, o.prog, o.prog)
}

// backupSuperblock picks the backup superblock e2fsck would try: the
// start of group 1 of the geometry we have, else the first block size
// whose candidate holds the ext2 magic and that block size.
func backupSuperblock(dev blockdev.Device, f *fs.FS, blockSize int) (uint64, int) {
	if f != nil {
		return uint64(f.BlocksPerGroup) + f.FirstDataBlock, f.BlockSize
	}
	if blockSize != 0 {
		blk := uint64(blockSize * 8)
		if blockSize == 1024 {
			blk++
		}
		return blk, blockSize
	}
	buf := make([]byte, ondisk.SuperblockSize)
	for bs := 1024; bs <= 65536; bs *= 2 {
		blk := uint64(bs * 8)
		if bs == 1024 {
			blk++
		}
		if _, err := dev.ReadAt(buf, int64(blk)*int64(bs)); err != nil {
			continue
		}
		sb, _ := ondisk.NewSuperblock(buf)
		if sb.Magic() == ondisk.Magic && sb.BlockSize() == bs {
			return blk, bs
		}
	}
	return 8193, 1024
}

func isCorrupt(err error) bool { return errors.Is(err, ondisk.ErrCorrupt) }

// describe turns an open error into e2fsprogs' wording.
func describe(err error) string {
	switch {
	case errors.Is(err, fs.ErrBadMagic):
		return "Bad magic number in super-block"
	case errors.Is(err, fs.ErrSbCsum):
		return "Superblock checksum does not match superblock"
	case errors.Is(err, fs.ErrBadDescSize):
		return "Block group descriptor size incorrect"
	case errors.Is(err, fs.ErrShortRead):
		return "Attempt to read block from filesystem resulted in short read"
	case errors.Is(err, fs.ErrJournalDev):
		return "Filesystem has unsupported feature(s)"
	case errors.Is(err, fs.ErrRevTooHigh):
		return "Filesystem revision too high"
	case errors.Is(err, fs.ErrUnknownCsum):
		return "Unknown checksum algorithm"
	case errors.Is(err, fs.ErrCorruptSuper):
		return "The ext2 superblock is corrupt"
	}
	return err.Error()
}

// deviceName is the name used in messages: -N, else the volume label, else
// the path, with white space and ':' replaced by '_'.
func deviceName(o *options, f *fs.FS) string {
	name := o.name
	if name == "" {
		if l := f.SB.VolumeName(); len(l) > 0 {
			name = string(l)
		} else {
			name = o.device
		}
	}
	// Byte by byte, as e2fsck's isspace() loop: a label is any 16 bytes,
	// not UTF-8, and its other bytes are printed as they are.
	b := []byte(name)
	for i, c := range b {
		switch c {
		case ' ', '\t', '\n', '\v', '\f', '\r', ':':
			b[i] = '_'
		}
	}
	return string(b)
}

// checkDevice runs the whole check and returns the exit code.
// undoHint prints, with -z, what e2fsck_setup_tdb prints before each
// opening of the device (e2fsck's restart label: the first, after a
// journal recovery and after "Restarting e2fsck from the beginning"), in
// every mode, naming the device as given.
func undoHint(o *options, stdout io.Writer) {
	if o.undoFile != "" {
		fmt.Fprintf(stdout, "Overwriting existing filesystem; this can be undone using the command:\n    e2undo %s %s\n\n", o.undoFile, o.device)
	}
}

func checkDevice(ctx context.Context, o *options, stdout, stderr io.Writer) (exit int) {
	undoHint(o, stdout)
	dev, f, code := openFS(o, stdout, stderr)
	if f == nil {
		return code
	}
	defer dev.Close()
	ov, _ := dev.(*blockdev.Overlay)
	if rec, ok := traced(dev); ok {
		defer func() {
			if err := rec.Save(o.ext.trace); err != nil {
				fatal(o, stderr, "writing I/O trace: %v", err)
			}
		}()
	}
	jx, ok := openExtJournal(o, f, ov != nil, stderr)
	if !ok {
		return problem.ExitError
	}
	defer jx.close()
	o.extJournal = jx
	name := deviceName(o, f)
	o.report.attach(dev, name, f.SB.UUID())
	prog, stdout := startProgress(o, name, stdout)
	defer prog.stop()
	// restarted: the check restarted after a journal recovery (e2fsck's
	// E2F_FLAG_RESTARTED); e2fsck goes back to opening the filesystem.
	restarted := false
	// restarts counts pass 1's restarts (check.ErrRestart).
	restarts := 0
	// fixedEarlier: a run before a restart fixed a problem (e2fsck's
	// E2F_FLAG_PROBLEMS_FIXED survives its restarts).
	fixedEarlier := false
	// rebuild: the inodes a run before a restart queued for pass 1E.
	var rebuild []uint32
	// mmp is the multi-mount protection of the run (mmp.go).
	var mmp mmpRun
	// prevRep is the reporter of the run before a restart, whose problem
	// counts go on (e2fsck keeps them in its static problem table).
	var prevRep *problem.Reporter
	// undo is the run's undo file (-z), closed after the MMP block's last
	// write (undosession.go).
	undo := newUndoSession(o.undoFile, ov, f.BlockSize)
	defer func() {
		mmp.close()
		if err := undo.close(); err != nil {
			fatal(o, stderr, "%v while closing undo file %s", err, o.undoFile)
			exit = problem.ExitError
		}
	}()
restart:
	if err := f.CheckFeatures(); err != nil {
		var ue *fs.UnsupportedError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "%s has unsupported feature(s): %s\n", o.device, ondisk.FeatureString(ue.Compat, ue.Incompat, ue.RoCompat))
			fatalError(stderr, "Get a newer version of gofsck!")
			if ue.Incompat != 0 || ue.RoCompat != 0 && o.mode != problem.ModeNo {
				// Refused by the library's open (unknown ro_compat
				// features only when opening for writing): nothing else
				// is printed.
				return problem.ExitError
			}
			// Refused by e2fsck after opening: its fatal_error reports the
			// filesystem as not valid.
			fmt.Fprintf(stdout, "\n%s: ********** WARNING: Filesystem still has errors **********\n\n", name)
			return problem.ExitError | problem.ExitUncorrected
		}
		return problem.ExitError
	}
	if code, ok := unsupportedEncoding(o, f, name, stdout, stderr); !ok {
		return code
	}
	ropt := problem.Options{Mode: o.mode, Err: stderr, Device: name,
		BackupSuper: uint64(f.SB.BlocksPerGroup()) + f.FirstDataBlock,
		// e2fsck.conf: max_count_problems and the [problems] stanza.
		MaxCount: o.conf.maxCount,
		Settings: o.conf.settings,
		// %T is ctx->now.
		Now: func() time.Time { return time.Unix(o.clock.now, 0) },
	}
	if o.mode == problem.ModeInteractive {
		ropt.In, ropt.AnswerMode = o.tty, answerMode(os.Stdin)
	}
	ropt.Answers = o.answers
	if ov != nil {
		ropt.CanFix = check.CanFix
	}
	copt := check.Options{ReadOnly: ov == nil, Now: time.Unix(o.clock.now, 0), TimeInsane: o.clock.insane(), ExternalJournal: jx.pathOr(o.journal), JournalDev: jx.journalDevice(), JournalHint: jx.journalHint(), SyncSignals: o.syncSignals, Workers: o.ext.threads, PrefetchUnits: o.ext.prefetch, NoOptimizeExtents: o.ext.noOptimizeExtents, ConvertBmap: o.ext.bmap2extent, FixesOnly: o.ext.fixesOnly, NoSpeculation: o.ext.noSpeculation,
		// The test_fs flag is cleared only by a writable run, when
		// e2fsck.conf allows and the kernel has ext4.
		Ext4Available:     ov != nil && !o.conf.keepTestFS && kernelHasExt4(),
		BrokenSystemClock: o.conf.brokenClock, NoTimeFudge: o.conf.noTimeFudge, DirSlack: o.conf.dirSlack}
	if o.ra != nil {
		copt.PrefetchBytes = o.ra.window()
	}
	estimate := check.EstimateMemory(f, o.ext.threads)
	budget := memoryBudget(o)
	if overBudget(o, estimate, budget, name, stderr) {
		return problem.ExitError
	}
	o.memWatch = watchMemory(o, budget, name, stderr)
	defer o.memWatch.end()
	var tm *timer
	if o.timing > 0 {
		tm = newTimer(stdout, dev, o.timing > 1)
		tm.estimate = estimate
		tm.ra = o.ra
		copt.Passes = tm
	}
	copt.Force = o.force
	copt.Rebuild = rebuild
	copt.CheckEncoding = o.ext.checkEncoding
	copt.Preen = o.preen
	copt.OptimizeDirs = o.optimizeDirs
	copt.Mounted = o.mount&blockdev.Mounted != 0
	copt.Progress = prog
	// The reporter names inodes through the checker, which reports to the
	// reporter: build the checker first with a placeholder sink.
	chk := check.New(f, problem.NewReporter(io.Discard, ropt), copt)
	ropt.Namer = chk
	if o.report != nil {
		ropt.Observe = o.report.observe
		copt.Passes = o.report.observer(copt.Passes)
	}
	rep := problem.NewReporter(stdout, ropt)
	rep.ContinueCounts(prevRep)
	prevRep = rep
	if f.Backup {
		// Checking from a backup superblock, e2fsck does not suggest one
		// before relocating group metadata.
		rep.SetLatchState(problem.LatchReloc, problem.LatchStateLatched, 0)
	}
	snk := &sink{Reporter: rep, prog: o.prog, dev: name, stderr: stderr}
	copt.Passes = mmp.passes(f, copt.Passes, rep, stdout)
	chk = check.New(f, snk, copt)

	end := problem.RunEnd{ReadOnly: ov == nil, SuperWasValid: f.SB.State()&ondisk.StateValid != 0, MountedRoot: o.mount&blockdev.IsRoot != 0}
	rc := &repairRun{o: o, ov: ov, undo: undo, chk: chk, rep: rep, name: name, stdout: stdout, stderr: stderr}
	if code, ok := mmp.begin(ctx, o, f, ov, rc, rep, name, stdout, stderr); !ok {
		return code
	}
	recoverBefore := f.SB.HasIncompat(ondisk.IncompatRecover)
	jerr := ""
	if o.mount&(blockdev.Mounted|blockdev.Busy) == 0 {
		// e2fsck leaves the journal of a device in use to its owner.
		jerr = chk.CheckJournal()
	}
	if rc.unsupported() {
		return problem.ExitError
	}
	if rep.Halted() {
		return rc.halt()
	}
	if rep.Aborted() {
		// A fatal journal problem: e2fsck stops without "aborted". The
		// filesystem has not been marked valid yet at this point.
		rep.MarkInvalid()
		return fatalExit(rep, end, name, stdout)
	}
	if jerr != "" {
		fatal(o, stderr, "%s while checking journal for %s", jerr, name)
		rep.MarkInvalid() // not marked valid yet, as above
		return abortRun(o, rep, end, name, stdout, stderr, "Cannot proceed with file system check")
	}
	if f.SB.HasIncompat(ondisk.IncompatRecover) {
		if rc.active() {
			if !recoverBefore {
				// PR_0_JOURNAL_RUN answered yes: a forced check follows.
				o.force = true
			}
			newChecker := func(nf *fs.FS) *check.Checker { return check.New(nf, snk, copt) }
			nf, code, ok := recoverJournal(o, ov, f, chk, rep, newChecker, restarted, name, stdout, stderr, rc.flush)
			if !ok {
				return code
			}
			f, restarted = nf, true
			mmp.recovered(f)
			fixedEarlier = fixedEarlier || rep.Status().Fixed
			goto restart
		}
		fmt.Fprintln(stdout, "Warning: skipping journal recovery because doing a read-only filesystem check.")
	}
	chk.CheckSuper(uint64(dev.Size()) >> f.BlockBits)
	if rc.unsupported() {
		return problem.ExitError
	}
	if rep.Halted() {
		return rc.halt()
	}
	if rep.Aborted() || chk.SuperAborted() {
		return fatalExit(rep, end, name, stdout)
	}
	invalid := rep.Status().Invalid || chk.SuperInvalid()
	rep.MarkValid()
	// After fixes before the passes e2fsck checks fully without saying why
	// (check_if_skip returns at once when problems were fixed).
	if !o.force && !o.bb.active() && !rep.Status().Fixed && !fixedEarlier {
		if reason := skipReason(f, invalid, chk.BackupSuperDiffers, &o.conf, o.clock); reason == "" {
			if brokenClock(&o.conf, o.clock) && f.SB.CheckInterval() != 0 {
				fmt.Fprintf(stdout, "%s: ignoring check interval, broken_system_clock set\n", name)
			}
			if !skipFixes(o, rc, chk, stderr) {
				return problem.ExitError
			}
			sb := f.SB
			iu, bu := uint64(sb.InodesCount()-sb.FreeInodesCount()), f.BlocksCount-sb.FreeBlocksCount()
			line := fmt.Sprintf("%s: clean, %d/%d files, %d/%d blocks%s\n", name,
				iu, sb.InodesCount(), bu, f.BlocksCount, nextCheckHint(f, &o.conf, o.clock))
			io.WriteString(stdout, line)
			o.report.setClean(line, iu, uint64(sb.InodesCount()), bu, f.BlocksCount)
			return problem.ExitOK
		} else {
			fmt.Fprintf(stdout, "%s%s, check forced.\n", name, reason)
		}
	}
	chk.CheckResizeInode()
	if code, ok := rc.updateBadBlocks(f.BlockSize, f.BlocksCount-1); !ok {
		return code
	}
	if code, ok := rc.readBadBlocksInode(); !ok {
		return code
	}
	err := chk.Run(ctx)
	if rc.unsupported() {
		return problem.ExitError
	}
	if rep.Halted() {
		return rc.halt()
	}
	if rep.Status().Cancelled {
		return rc.cancelledAtPrompt(f.SB.State()) // tty.go
	}
	if errors.Is(err, check.ErrRestart) && ov != nil && restarts < 16 {
		// Pass 1 cleared an inode part way through its blocks: e2fsck
		// closes the filesystem and checks it again from the start, on
		// the master superblock.
		restarts++
		fmt.Fprintln(stdout, "Restarting e2fsck from the beginning...")
		if ferr := chk.FlushForRestart(); ferr != nil {
			fatal(o, stderr, "%v while writing to %s", ferr, o.device)
			return problem.ExitError
		}
		undoHint(o, stdout)
		nf, oerr := fs.Open(newRestartDev(ov), fs.Options{BlockSize: o.blockSize})
		if oerr != nil {
			fatal(o, stderr, "%s while trying to open %s", describe(oerr), o.device)
			return problem.ExitError
		}
		f = nf
		fixedEarlier = fixedEarlier || rep.Status().Fixed
		rebuild = chk.RebuildQueue()
		goto restart
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		// e2fsck's fixes made before an abort are on disk already.
		end.Modified = rc.modified()
		if !rc.flush() {
			return problem.ExitError
		}
		if end.Modified {
			rc.printModified()
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		// e2fsck's signal handler only sets E2F_FLAG_CANCEL: the run
		// ends with "canceled" and FSCK_CANCELED, and it warns (with
		// FSCK_UNCORRECTED) only when a problem was left unfixed so
		// far or the superblock has EXT2_ERROR_FS. A cancelled run
		// writes nothing (docs/repair.md).
		rc.discard()
		fmt.Fprintf(stdout, "%s: e2fsck canceled.\n", name)
		st := rep.Status()
		st.Cancelled = true
		end.SuperHadErrors = f.SB.State()&ondisk.StateError != 0
		// allow_cancellation looks at the superblock as it is now.
		end.SuperWasValid = f.SB.State()&ondisk.StateValid != 0
		end.AllowCancellation = o.conf.allowCancellation
		if st.Invalid || end.SuperHadErrors {
			fmt.Fprintf(stdout, "\n%s: ********** WARNING: Filesystem still has errors **********\n\n", name)
		}
		return st.ExitCode(end)
	case errors.Is(err, check.ErrFatal):
		return fatalExit(rep, end, name, stdout)
	case errors.Is(err, check.ErrAborted):
		return abortRun(o, rep, end, name, stdout, stderr, "aborted")
	case err != nil:
		fatal(o, stderr, "%v", err)
		return abortRun(o, rep, end, name, stdout, stderr, "aborted")
	}
	changed, ok := rc.finish(!rep.Status().Invalid)
	if !ok {
		return problem.ExitError
	}
	if changed {
		end.Modified = true
		rc.printModified()
		rc.printReboot()
	}
	if rep.Status().Invalid {
		fmt.Fprintf(stdout, "\n%s: ********** WARNING: Filesystem still has errors **********\n\n", name)
	}
	st := chk.Stats()
	frag := st.FragmentedFiles + st.FragmentedDirs
	pct := uint32(0)
	if st.UsedInodes > 0 {
		pct = uint32((uint64(frag)*10000/uint64(st.UsedInodes) + 5) / 10)
	}
	line := fmt.Sprintf("%s: %d/%d files (%d.%d%% non-contiguous), %d/%d blocks\n", name,
		st.UsedInodes, st.Inodes, pct/10, pct%10, st.UsedBlocks, st.Blocks)
	io.WriteString(stdout, line)
	o.report.setSummary(line, st)
	if tm != nil {
		tm.total()
	}
	return rep.Status().ExitCode(end)
}

// fatalExit ends the run after a fatal problem was reported (e2fsck's
// fatal_error(ctx, 0)): the "still has errors" line when the filesystem is
// invalid, and exit 8 (12 when invalid).
func fatalExit(rep *problem.Reporter, end problem.RunEnd, name string, stdout io.Writer) int {
	st := rep.Status()
	if st.Invalid {
		fmt.Fprintf(stdout, "\n%s: ********** WARNING: Filesystem still has errors **********\n\n", name)
	}
	st.Aborted = true
	return st.ExitCode(end)
}

// sink is the reporter plus the lines e2fsprogs' libraries print on stderr
// outside the problem table (check.LibOutput).
type sink struct {
	*problem.Reporter
	prog, dev string
	stderr    io.Writer
}

var _ check.LibOutput = (*sink)(nil)

// FatalError prints a library error that ends the run (check.LibOutput).
func (s *sink) FatalError(line string) {
	io.WriteString(s.stderr, line)
	s.Reporter.Abort()
}

// Aborted tells the passes to stop: after a fatal problem, and also after
// a preen halt or a cancelled prompt, where e2fsck exits at once.
func (s *sink) Aborted() bool { return s.Reporter.Stopped() }

// Diagnostic prints a library diagnostic line as is.
func (s *sink) Diagnostic(line string) { io.WriteString(s.stderr, line) }

// DeviceName is the device as named on the command line (the library's
// fs->device_name).
func (s *sink) DeviceName() string { return s.dev }

// LibError prints a com_err-style line followed by an empty line.
func (s *sink) LibError(byDevice bool, code, what string) {
	if byDevice {
		fmt.Fprintf(s.stderr, "%s: %s %s\n\n", s.dev, code, what)
		return
	}
	fmt.Fprintf(s.stderr, "%s: %s %s: %s\n\n", s.prog, code, s.dev, what)
}

// abortRun prints what e2fsck's fatal_error prints and returns the exit
// code of an aborted run.
//
// Like fatal_error, it warns that the filesystem still has errors only
// when a problem was left unfixed: a fatal problem met before any other
// (a read error at the first inode-table read) exits 8 without the
// warning.
func abortRun(o *options, rep *problem.Reporter, end problem.RunEnd, name string, stdout, stderr io.Writer, msg string) int {
	invalid := rep.Status().Invalid
	if rep.Aborted() && invalid {
		// A fatal problem already ran e2fsck's fatal_error once.
		fmt.Fprintf(stdout, "\n%s: ********** WARNING: Filesystem still has errors **********\n\n", name)
	}
	if msg == "" {
		msg = "aborted"
	}
	fatalError(stderr, "%s", msg)
	if rep.Aborted() && end.Modified && !o.preen {
		// The second fatal_error, main's "aborted", repeats the line
		// the fatal problem's printed for a changed filesystem.
		fmt.Fprintf(stdout, "\n%s: ***** FILE SYSTEM WAS MODIFIED *****\n", name)
	}
	if invalid {
		fmt.Fprintf(stdout, "\n%s: ********** WARNING: Filesystem still has errors **********\n\n", name)
	}
	st := rep.Status()
	st.Aborted = true
	return st.ExitCode(end)
}

// skipReason returns why a full check is needed (e2fsck's check_if_skip),
// or "" when the filesystem may be skipped as clean. backupDiffers is the
// comparison with the backup superblock, which e2fsck makes only when it
// can write (check.Checker.BackupSuperDiffers). orphan_present does not force a check in e2fsck 1.47.0 (the
// orphan file is validated only by a full check). conf gives
// broken_system_clock and accept_time_fudge.
func skipReason(f *fs.FS, invalid bool, backupDiffers func() bool, conf *config, clk clock) string {
	sb := f.SB
	now := clk.now
	broken := brokenClock(conf, clk)
	lastcheck := int64(sb.LastCheck())
	if lastcheck > now && !conf.noTimeFudge {
		lastcheck -= 86400 // accept_time_fudge
	}
	interval := int64(sb.CheckInterval())
	switch {
	case sb.State()&ondisk.StateError != 0 || invalid:
		return " contains a file system with errors"
	case sb.State()&ondisk.StateValid == 0:
		return " was not cleanly unmounted"
	case backupDiffers():
		return " primary superblock features different from backup"
	case sb.MaxMntCount() > 0 && uint32(sb.MntCount()) >= uint32(sb.MaxMntCount()):
		return fmt.Sprintf(" has been mounted %d times without being checked", sb.MntCount())
	case !broken && interval != 0 && now < lastcheck:
		return " has filesystem last checked time in the future"
	case !broken && interval != 0 && now-lastcheck >= interval:
		return fmt.Sprintf(" has gone %d days without being checked", uint32((now-int64(sb.LastCheck()))/(3600*24)))
	}
	return ""
}

// brokenClock says whether check_if_skip ignores the check interval: when
// e2fsck.conf says broken_system_clock, or the system clock is before
// 2010, which e2fsck does not trust.
func brokenClock(conf *config, clk clock) bool {
	return conf.brokenClock || clk.insane()
}

// nextCheckHint is the clean line's hint about the next forced check.
func nextCheckHint(f *fs.FS, conf *config, clk clock) string {
	sb := f.SB
	next := int64(100000)
	if sb.MaxMntCount() > 0 {
		next = int64(sb.MaxMntCount()) - int64(sb.MntCount())
		if next <= 0 {
			next = 1
		}
	}
	now := clk.now
	if !brokenClock(conf, clk) && sb.CheckInterval() != 0 && now-int64(sb.LastCheck()) >= int64(sb.CheckInterval()) {
		next = 1
	}
	switch {
	case next > 5:
		return ""
	case next == 1:
		return " (check after next mount)"
	default:
		return fmt.Sprintf(" (check in %d mounts)", next)
	}
}
