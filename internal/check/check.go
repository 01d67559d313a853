// Package check runs e2fsck's passes over an opened filesystem and reports
// every inconsistency as a problem.Problem to a Sink. It decides nothing
// about printing or exit codes: the Sink answers each problem (no under -n)
// and the passes follow that answer exactly as e2fsck does.
//
// State that lives across passes is kept in the Checker; every pass reads
// the state of the passes before it and nothing global. Pass 1 works on
// inode ranges and the directory pass on batches of directory blocks, so
// that they can be spread over workers.
package check

import (
	"bytes"
	"context"
	"errors"
	"time"

	"gofsck/internal/bitmap"
	"gofsck/internal/casefold"
	"gofsck/internal/fs"
	"gofsck/internal/ondisk"
	"gofsck/internal/problem"
)

// Sink is where a check reports: e2fsck's fix_problem and the run status
// its context keeps. problem.Reporter implements it. Two optional
// capabilities, declared below and looked up in one place each, are what a
// command adds: Answerer (answers known without asking, which lets the
// passes run in parallel) and LibOutput (the lines e2fsprogs' libraries
// print on stderr).
type Sink interface {
	problem.Fixer
	// Header announces the start of a pass (PR_x_PASS_HEADER codes).
	Header(c problem.Code)
	// Aborted reports whether a fatal problem was raised.
	Aborted() bool
	// EndLatch closes a latch group (asks its final question if any
	// member was reported) and returns that answer.
	EndLatch(l problem.Latch) (fix, asked bool)
	// Status is the run's outcome so far (Status.Invalid is the
	// filesystem marked not valid).
	Status() problem.Status
	// MarkInvalid is ext2fs_unmark_valid: the run ends with errors left.
	MarkInvalid()
	// MarkValid is ext2fs_mark_valid ("valid 'til proven otherwise").
	MarkValid()
	// MarkFixed is a fix made without a question (E2F_FLAG_PROBLEMS_FIXED).
	MarkFixed()
	// Unsupported stops the run at a fix gofsck does not implement
	// although its problem asks no question.
	Unsupported(c problem.Code)
	// Log prints a line e2fsck prints outside the problem table.
	Log(line string)
	// AnsweredAll reports whether the last question was answered 'a'
	// (yes to all) interactively.
	AnsweredAll() bool
}

// LibOutput is an optional Sink capability: the lines e2fsprogs'
// libraries and e2fsck's fatal_error print on stderr, outside the problem
// table. A Sink without it drops them (a FatalError still stops the run);
// a Sink with only some of these methods is not a LibOutput, so a sink
// meant to print them asserts var _ check.LibOutput = (*T)(nil).
type LibOutput interface {
	// FatalError prints a library error that ends the run (a com_err
	// line ending in a newline) and marks the run aborted.
	FatalError(line string)
	// LibError prints a com_err line: "device: code what" when byDevice,
	// else "prog: code device: what".
	LibError(byDevice bool, code, what string)
	// Diagnostic prints a library diagnostic line as is ("[QUOTA
	// WARNING] ...", "[ERROR] ..."); line ends with a newline.
	Diagnostic(line string)
	// DeviceName is the device as named on the command line (the
	// library's fs->device_name).
	DeviceName() string
}

// Answerer is an optional Sink capability: it predicts the answer the
// sink will give to a problem without asking (non-interactive modes).
// problem.Reporter implements it.
type Answerer interface {
	Answer(p problem.Problem) bool
}

// The sinks of this package: a worker's recording and a speculation's
// stand-in take every call the run's sink takes.
var (
	_ Sink      = (*problem.Reporter)(nil)
	_ Answerer  = (*problem.Reporter)(nil)
	_ Sink      = (*recSink)(nil)
	_ LibOutput = (*recSink)(nil)
	_ Sink      = (*specSink)(nil)
	_ LibOutput = (*specSink)(nil)
	_ Answerer  = (*specSink)(nil)
)

// noLibOutput is the LibOutput of a Sink without one.
type noLibOutput struct{}

func (noLibOutput) FatalError(string)             {}
func (noLibOutput) LibError(bool, string, string) {}
func (noLibOutput) Diagnostic(string)             {}
func (noLibOutput) DeviceName() string            { return "" }

// libOutput is s's LibOutput, or one that drops everything.
func libOutput(s Sink) LibOutput {
	if o, ok := s.(LibOutput); ok {
		return o
	}
	return noLibOutput{}
}

// out is the Sink's LibOutput.
func (c *Checker) out() LibOutput { return libOutput(c.sink) }

// Options tune a check.
type Options struct {
	// Now is the time used for time-based checks (e2fsck's ctx->now).
	Now time.Time
	// SyncSignals, when set, is called before Run consults its context
	// between passes and after the last one: it returns once every
	// interrupt the process has received has cancelled that context, as
	// e2fsck's handler sets its cancel flag at once (a check that races
	// to its end must not finish past a Ctrl-C).
	SyncSignals func()
	// TimeInsane is e2fsck's E2F_FLAG_TIME_INSANE: Now is the system
	// clock and before 2010, so no superblock time is compared with it.
	// (e2fsck takes a time given by E2FSCK_TIME as it is, whatever it is.)
	TimeInsane bool
	// ReadOnly is true for -n: nothing is written. Otherwise the fixes
	// answered yes are written to the filesystem's device (see repair.go).
	ReadOnly bool
	// Force is -f: check even a clean filesystem (it also enables the
	// future-time superblock checks).
	Force bool
	// CheckEncoding is -E check_encoding: names of casefolded directories
	// are validated as in strict mode.
	CheckEncoding bool
	// Preen is -p/-a (e2fsck's E2F_OPT_PREEN), for the few messages only
	// a preening run prints.
	Preen bool
	// OptimizeDirs is -D: every directory is rebuilt in pass 3A.
	OptimizeDirs bool
	// Mounted: the filesystem is mounted (a read-only root, or a read-only
	// mount checked with -f). e2fsck then leaves a journal kept in a visible
	// file where it is and, with group descriptor checksums, a null UUID
	// as it is: the kernel holds both.
	Mounted bool
	// ExternalJournal is the -j path of an external journal device.
	ExternalJournal string
	// JournalDev, when set, is the external journal device already opened
	// (from -j or found by UUID); its fixes are written to it (see
	// journal_ext.go). Without it ExternalJournal is opened read-only.
	JournalDev JournalDevice
	// JournalHint is the block device found by the journal's UUID (for
	// the s_journal_dev hint check).
	JournalHint JournalHint
	// Workers is the number of goroutines the passes may use (0: two per
	// CPU).
	Workers int
	// PrefetchUnits is how many work units ahead of the workers the
	// engine hints their reads to the kernel (0: two per worker; negative:
	// no hints). It sets the depth of the read queue the device sees.
	PrefetchUnits int
	// compactAlways makes passes 1 and 2 compact their maps after every
	// unit (tests: the pause and the replay must keep the output).
	compactAlways bool
	// PrefetchBytes, when PrefetchUnits is 0, makes the engine hint
	// more units, until this many bytes are hinted ahead of the workers
	// (see hintWindow): a device's read-ahead sized for many reads in
	// flight needs that much ahead of it.
	PrefetchBytes int64
	// Passes, when set, is told when each pass starts and ends (for -t).
	Passes PassObserver
	// Progress, when set, is told how far each pass has come (for -C).
	Progress Progress
	// NoOptimizeExtents is -E no_optimize_extents: extent trees are not
	// offered for narrowing or shortening (too deep ones are still
	// rebuilt).
	NoOptimizeExtents bool
	// ConvertBmap is -E bmap2extent: the extents feature is turned on
	// and every file's mapping is rebuilt as an extent tree in pass 1E.
	ConvertBmap bool
	// FixesOnly is -E fixes_only: pass 1 keeps no extent-tree statistics,
	// so no tree is offered for narrowing or shortening.
	FixesOnly bool
	// NoSpeculation keeps a writable run from trying passes 1 and 2 in
	// parallel before running them serially (speculate.go).
	NoSpeculation bool
	// Ext4Available says the running kernel has the ext4 driver: a
	// writable run then clears the superblock's test_fs flag
	// (PR_0_CLEAR_TESTFS_FLAG), as e2fsck does.
	Ext4Available bool
	// BrokenSystemClock is e2fsck.conf's broken_system_clock: the
	// superblock's mount and write times are not checked against Now.
	BrokenSystemClock bool
	// NoTimeFudge is e2fsck.conf's accept_time_fudge = false: a
	// superblock time up to a day ahead of Now is reported as in the
	// future like any other (PR_0_FUTURE_SB_LAST_*), not as the fudged
	// kind.
	NoTimeFudge bool
	// DirSlack, when set, is e2fsck.conf's indexed_dir_slack_percentage:
	// the part of each leaf block pass 3A leaves free when it rebuilds an
	// htree directory (nil: e2fsck's 20).
	DirSlack *uint32
	// Rebuild are the inodes a run before a restart queued for pass 1E
	// (RebuildQueue): e2fsck's inodes_to_rebuild survives its restarts.
	Rebuild []uint32
}

// PassObserver is notified around each pass; names are e2fsck's timing
// labels ("Pass 1", "Pass 1b", ..., "Pass 5").
type PassObserver interface {
	PassStart(name string)
	PassEnd(name string)
}

// Stats are the counts behind the summary line and -v.
type Stats struct {
	UsedInodes, Inodes     uint32
	UsedBlocks, Blocks     uint64
	FragmentedFiles        uint32
	FragmentedDirs         uint32
	Dirs, Regular, Chr     uint32
	Blk, Fifo, Sock        uint32
	Symlinks, FastSymlinks uint32
	Links                  uint32
	LargeFiles             uint32
	LargeDirs              uint32 // htree directories needing large_dir
	Ind, Dind, Tind        uint32
	BadBlocks              uint32
	ExtentDepth            [5]uint32
	// Speculated has bit n set when pass n of a writable run was kept
	// from its parallel speculation (speculate.go).
	Speculated uint8
}

// dirBlock is one entry of the directory block list built in pass 1.
type dirBlock struct {
	ino  uint32
	lblk uint32
	blk  uint64 // 0 for a hole
}

// dirInfo records, per directory, the '..' found in pass 2 and the parent
// found by the tree walk.
type dirInfo struct {
	ino    uint32
	dotdot uint32
	parent uint32
	gen    uint32 // i_generation, for directory block checksums
	inline bool   // the directory keeps its entries in the inode
	// casefold: EXT4_CASEFOLD_FL with the casefold feature (e2fsck's
	// inode_casefold_map).
	casefold bool
	// hashInDirent: the entries after '..' carry their hashes (an
	// encrypted and casefolded directory, enccasefold.go).
	hashInDirent bool
}

// eaBlockRef tracks one EA block: references still expected from inodes
// (h_refcount minus those seen), and references beyond h_refcount.
type eaBlockRef struct {
	remaining uint32 // 32-bit like e2fsck's stored h_refcount-1
	extra     uint32
	orig      uint32
	quota     uint64 // blocks charged to each referring inode
}

// dxDir is an indexed directory seen in pass 1, with its root's hash
// version and depth (pass 2 hashes entries with them).
type dxDir struct {
	ino         uint32
	numBlocks   uint32
	hashVersion uint8
	levels      uint8
}

// Checker holds everything the passes share.
//
// A worker shard (Checker.shard) is a copy of the Checker that owns its
// workerOwned part and its sink; every other field it shares with the
// Checker and the other shards: the maps and pointers (updated under
// shared.mu, atomically, or only by the replay, as each field says) and
// the values, which the passes do not change while shards run.
type Checker struct {
	fs   *fs.FS
	sink Sink
	opt  Options
	sb   ondisk.Superblock
	prog progressState
	// ahead, while pass 1 or 2 runs its units, is where workers count the
	// work they have done for progress (progress.go), shared by the shards.
	ahead *unitProgress
	workerOwned

	// Inode maps, indexed by inode number.
	inodeUsed *bitmap.Bitmap
	inodeDir  *bitmap.Bitmap
	inodeReg  *bitmap.Bitmap
	inodeBad  *bitmap.Bitmap
	inodeBB   *bitmap.Bitmap // inodes in bad inode-table blocks (nil if none)
	badBlocks map[uint64]bool
	// Block maps, indexed by cluster number.
	blockFound *bitmap.Bitmap
	blockDup   *lazyMap // made on the first duplicate claim
	blockMeta  *bitmap.Bitmap

	// journalMoveFreed is 1 when moveVisibleJournal freed the old journal
	// inode: its group's count went up, but e2fsck's ctx->free_inodes,
	// which the clean skip writes to the superblock, was summed before.
	journalMoveFreed uint32
	// orphanFree is what the orphan release did to the free block
	// counts, for the clean skip: clusters is the net change of the
	// groups' free clusters (blocks freed, leaves and quota blocks
	// allocated); blocks is what e2fsck added to ctx->free_blocks, one
	// per released block or EA block, whatever the cluster size.
	orphanFree struct{ clusters, blocks int64 }

	linkInfo *counts // i_links_count of in-use inodes (pass 1)
	refCount *counts // references counted in pass 2

	// dblistCap bounds the directory block list (shared by pass 1's
	// shards; see addDirBlock).
	dblistCap *dblistCap
	// dirHinted is the bytes of directory blocks pass 1's replay hinted
	// for pass 2 (hintDirBlocks).
	dirHinted int64
	// dirHintsCut is set when hintDirBlocks ran out of budget.
	dirHintsCut bool
	// dblistTaken counts this shard's entries since it last reserved
	// room in dblistCap.
	dblistTaken int
	dirs        []dirInfo
	lpf         uint32 // lost+found inode, when found in pass 3
	badLPF      bool   // /lost+found could not be found or made (repair)
	// restartLater is set (shared by pass 2's shards) when a pass-2 fix
	// makes e2fsck check everything again once pass 2 is over.
	restartLater *bool

	// invalidSuper is set when a superblock check found the filesystem
	// not valid.
	invalidSuper bool
	// invalidBitmaps is set when some group metadata location is unusable.
	invalidBitmaps bool
	// journalDropped is e2fsck's E2F_FLAG_JOURNAL_INODE: pass 0 dropped
	// an unusable journal (dropJournal) and it is to be re-created. It
	// is set before the passes, so shards and speculation copies carry
	// it unchanged.
	journalDropped bool
	// skipUninit is true when uninit_bg/metadata_csum lets the scan skip
	// never-used inode table areas.
	skipUninit bool

	// rehash holds directories queued for rebuilding in pass 3A.
	rehash map[uint32]bool
	// rehashAsked, with -D (where rehash holds every directory), holds
	// those queued by a problem: e2fsck's dirs_to_hash, which pass 2's
	// duplicate-name check consults.
	rehashAsked map[uint32]bool
	// encPolicy maps encrypted inodes to their encryption policy
	// (written under shared.mu in pass 1, read-only afterwards).
	encPolicy map[uint32]string
	// shared is the state workers update under a mutex.
	shared *sharedState
	// internalErr is a panic caught in a worker.
	internalErr any
	// quota is the usage gathered for the quota comparison (nil without
	// the quota feature).
	quota *quotaState
	// dx is the htree state of pass 2, by directory.
	dx map[uint32]*dxDirState
	// endFatal is set when an end-of-run check ended the run with a
	// library error (Run returns ErrFatal).
	endFatal bool
	// pctxDir is check_dir_block's cd->pctx.dir, which only the end of
	// an htree directory's block sets (to that directory) and which
	// PR_2_HTREE_BAD_ROOT prints: the directory of the last htree block
	// checked before, or 0. Shared by pass 2's shards; only the serial
	// check and the replay touch it (workers record evPctxDir).
	pctxDir *uint32
	// eaSeen is the replay-side record of EA blocks already validated.
	eaSeen map[uint64]*eaBlockRef
	// eaInodeRefs counts xattr references to each EA-value inode.
	eaInodeRefs map[uint32]uint64
	// repair is the write-side state shared with worker shards.
	repair *repairState
	// p1 is a pass-1 unit's repair state (pass1_repair.go).
	p1 p1State

	// pools are the workers' buffers (shared with the shards).
	pools *bufferPools

	// fold folds casefolded names for the serial passes (casefold.go).
	fold *casefold.Folder

	// spec is the sink of a speculative pass (speculate.go), nil
	// otherwise: a write then fails the speculation instead.
	spec *specSink
}

// workerOwned is what a worker shard has of its own: its recording, its
// accumulators (merged by the replay) and its buffers. A shard starts it
// empty.
type workerOwned struct {
	// rec is the recording sink of a worker shard (nil on the main Checker).
	rec *recSink
	// unit is the index of the work unit a worker shard runs.
	unit int
	// abort is set when a declined answer leaves e2fsck unable to go on
	// (a directory block it may not salvage); the run then stops.
	abort bool
	stats Stats
	// dupCount counts the duplicate claims this Checker found.
	dupCount int
	// dblist is the directory block list (a pass-1 worker's part of it,
	// appended by the replay).
	dblist []dirBlock
	dxDirs []dxDir
	// newDirs holds a pass-1 worker's directories, merged into dirs.
	newDirs []dirInfo
	// deferred holds block-mapped inodes waiting for their batch (pass 1).
	deferred []deferredInode
	// p2blocks and p2refs are a pass-2 worker's per-block records and the
	// inode references its entries make (applied by the replay).
	p2blocks []p2Block
	p2refs   []uint32
	// iterFree holds iterateDir's spare buffers (see getIterBufs).
	iterFree []*iterBufs
	// names caches the directories pathname read last (see dirNames).
	names     [4]dirNames
	namesNext uint32
}

// ErrAborted is returned when a fatal problem stopped the check.
var ErrAborted = errors.New("check: aborted")

// ErrFatal is returned when a library error after the passes (the
// end-of-run checks, which e2fsck makes outside e2fsck_run) ended the
// check: its fatal_error exits at once, without a second "aborted".
var ErrFatal = errors.New("check: fatal error after the passes")

// New prepares a check of f that reports to sink.
func New(f *fs.FS, sink Sink, opt Options) *Checker {
	if opt.Now.IsZero() {
		opt.Now = time.Now()
		opt.TimeInsane = opt.Now.Unix() < timeInsane
	}
	rs := &repairState{}
	if !opt.ReadOnly {
		rs.origSB, rs.origGDT = bytes.Clone(f.SB), newGDTDigest(f.GDT())
	}
	return &Checker{fs: f, sink: sink, opt: opt, sb: f.SB, repair: rs, pools: &bufferPools{}}
}

// Stats returns the summary counts after Run.
func (c *Checker) Stats() Stats { return c.stats }

// Run executes the passes. It returns ErrAborted after a fatal problem.
// compactMaps gives back the dense pages pass 1's claims left with few
// runs (bitmap.Compact), once its workers have stopped: what the later
// passes allocate then reuses that memory instead of adding to it.
func (c *Checker) compactMaps() {
	for _, m := range c.compactable() {
		m.Compact(0, m.Len())
	}
}

// compactable returns the maps pass 1 fills: the inode and block maps and
// the link counts' single-count map.
func (c *Checker) compactable() []*bitmap.Bitmap {
	var ms []*bitmap.Bitmap
	for _, m := range []*bitmap.Bitmap{c.inodeUsed, c.inodeDir, c.inodeReg, c.inodeBad, c.blockFound, c.blockDup.made(), c.blockMeta} {
		if m != nil {
			ms = append(ms, m)
		}
	}
	if c.linkInfo != nil {
		ms = append(ms, c.linkInfo.one)
	}
	return ms
}

// densePages returns the dense pages of the maps pass 1 fills.
func (c *Checker) densePages() int64 {
	var n int64
	for _, m := range c.compactable() {
		n += m.DensePages()
	}
	return n
}

// compactRule decides when a pass compacts its maps as it goes: when the
// dense pages have doubled since the last compaction, and are at least
// min (512, or one in 256 of a huge volume's table), so that the scans
// cost O(dense pages) over the pass.
type compactRule struct {
	min, kept int64
	always    bool
}

func (c *Checker) newCompactRule() *compactRule {
	return &compactRule{min: max(512, int64(c.blockFound.Len()>>15)/256), always: c.opt.compactAlways}
}

// due reports whether maps holding dense dense pages are to be compacted.
func (r *compactRule) due(dense int64) bool { return r.always || dense >= max(2*r.kept, r.min) }

// done records the dense pages left after a compaction.
func (r *compactRule) done(dense int64) { r.kept = dense }

func (c *Checker) Run(ctx context.Context) error {
	steps := []struct {
		name   string
		header problem.Code
		run    func(context.Context) error
	}{
		{"Pass 1", problem.PR_1_PASS_HEADER, c.pass1},
		{"Pass 2", problem.PR_2_PASS_HEADER, c.pass2},
		{"Pass 3", problem.PR_3_PASS_HEADER, c.pass3},
		{"Pass 4", problem.PR_4_PASS_HEADER, c.pass4},
		{"Pass 5", problem.PR_5_PASS_HEADER, c.pass5},
	}
	for i, s := range steps {
		if err := c.interrupted(ctx); err != nil {
			return err
		}
		c.sink.Header(s.header)
		if c.opt.Passes != nil {
			c.opt.Passes.PassStart(s.name)
		}
		err := c.runSpeculative(ctx, i+1, s.run)
		if i == 0 {
			c.compactMaps()
		}
		if c.opt.Passes != nil {
			c.opt.Passes.PassEnd(s.name)
		}
		if err != nil {
			return err
		}
		if c.sink.Aborted() || c.abort {
			return ErrAborted
		}
		c.progressDone(i + 1)
	}
	// e2fsck_run reads the cancel flag after the last pass too.
	if err := c.interrupted(ctx); err != nil {
		return err
	}
	c.endOfRun()
	if c.endFatal {
		return ErrFatal
	}
	if c.sink.Aborted() || c.abort {
		return ErrAborted
	}
	c.summarise()
	return nil
}

// interrupted is ctx.Err() once the signals delivered so far have
// reached ctx (Options.SyncSignals).
func (c *Checker) interrupted(ctx context.Context) error {
	if c.opt.SyncSignals != nil {
		c.opt.SyncSignals()
	}
	return ctx.Err()
}

// fix reports p and returns the answer.
func (c *Checker) fix(p problem.Problem) bool { return c.sink.Fix(p) }

// inodeInfo fills the message fields of an inode.
func (c *Checker) inodeInfo(n ondisk.Inode) *problem.InodeInfo {
	blocks := uint64(n.BlocksLo())
	if c.sb.HasRoCompat(ondisk.RoCompatHugeFile) {
		blocks |= uint64(n.BlocksHi()) << 32
	}
	return &problem.InodeInfo{
		Mode: n.Mode(), Links: n.LinksCount(), UID: n.UID(), GID: n.GID(),
		Size: n.Size(), Blocks: blocks, Mtime: int64(n.Mtime()), Faddr: n.Faddr(),
		FileACL: n.FileACL(c.sb.Is64bit()), SizeHigh: n.SizeHigh(),
		ExtraIsize: n.ExtraIsize(), Flags: n.Flags(),
	}
}

// summarise computes the summary line counts from the superblock, as
// e2fsck does after the (possibly fixed) superblock is final.
func (c *Checker) summarise() {
	s := &c.stats
	s.Inodes = c.fs.InodesCount
	s.UsedInodes = c.fs.InodesCount - c.sb.FreeInodesCount()
	s.Blocks = c.fs.BlocksCount
	s.UsedBlocks = c.fs.BlocksCount - c.sb.FreeBlocksCount()
}

// findDir returns the dir_info record of ino, or nil.
func (c *Checker) findDir(ino uint32) *dirInfo {
	lo, hi := 0, len(c.dirs)
	for lo < hi {
		m := (lo + hi) / 2
		switch {
		case c.dirs[m].ino == ino:
			return &c.dirs[m]
		case c.dirs[m].ino < ino:
			lo = m + 1
		default:
			hi = m
		}
	}
	return nil
}

// add folds a worker's counts into s.
func (s *Stats) add(o *Stats) {
	s.FragmentedFiles += o.FragmentedFiles
	s.FragmentedDirs += o.FragmentedDirs
	s.Dirs += o.Dirs
	s.Regular += o.Regular
	s.Chr += o.Chr
	s.Blk += o.Blk
	s.Fifo += o.Fifo
	s.Sock += o.Sock
	s.Symlinks += o.Symlinks
	s.FastSymlinks += o.FastSymlinks
	s.Links += o.Links
	s.LargeFiles += o.LargeFiles
	s.LargeDirs += o.LargeDirs
	s.Ind += o.Ind
	s.Dind += o.Dind
	s.Tind += o.Tind
	s.BadBlocks += o.BadBlocks
	for i := range s.ExtentDepth {
		s.ExtentDepth[i] += o.ExtentDepth[i]
	}
}
