package check

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gofsck/internal/blockdev"
	"gofsck/internal/fs"
	"gofsck/internal/problem"
	"gofsck/internal/testfs"
)

// progressLog records Updates as e2fsck's -C fd lines without the device.
type progressLog struct{ lines []string }

func (l *progressLog) Update(pass int, cur, max uint64) {
	l.lines = append(l.lines, fmt.Sprintf("%d %d %d", pass, cur, max))
}

var _ Progress = (*progressLog)(nil)

// TestProgressEveryUnit: the passes report at the end of batches, and
// Progress sees every unit, as e2fsck reports them: each cur from 0 to max
// once, a new pass starting at 0, a rewound pass 5 counting its groups
// again, and a pass run again after a failed speculation reporting only
// the units the speculation had not reached.
func TestProgressEveryUnit(t *testing.T) {
	for _, tt := range []struct {
		name  string
		steps func(c *Checker)
		want  string
	}{
		{"batches", func(c *Checker) {
			c.progress(1, 0, 4)
			c.progress(1, 3, 4)
			c.progressDone(1)
		}, "1 0 4, 1 1 4, 1 2 4, 1 3 4, 1 4 4"},
		{"past max and a new pass", func(c *Checker) {
			c.progress(1, 0, 2)
			c.progress(1, 2, 2)
			c.progress(2, 0, 3)
			c.progress(2, 256, 3)
			c.progressDone(2)
		}, "1 0 2, 1 1 2, 1 2 2, 2 0 3, 2 1 3, 2 2 3, 2 3 3"},
		{"same or earlier cur", func(c *Checker) {
			c.progress(3, 0, 3)
			c.progress(3, 2, 3)
			c.progress(3, 2, 3)
			c.progress(3, 1, 3)
			c.progressDone(3)
		}, "3 0 3, 3 1 3, 3 2 3, 3 3 3"},
		{"pass 5 counts again", func(c *Checker) {
			c.progress(5, 0, 4)
			c.progress(5, 2, 4)
			c.progressRewind(5, 0)
			c.progress(5, 1, 4)
			c.progress(5, 2, 4)
			c.progress(5, 4, 4)
			c.progressRewind(5, 2)
			c.progress(5, 4, 4)
		}, "5 0 4, 5 1 4, 5 2 4, 5 1 4, 5 2 4, 5 3 4, 5 4 4, 5 3 4, 5 4 4"},
		{"replay after a speculation", func(c *Checker) {
			c.progress(1, 0, 2)
			c.progressDone(1)
			c.progress(2, 0, 6)
			c.progress(2, 3, 6)
			c.prog.replay = true // runSpeculative, after the failure
			c.progress(2, 0, 6)
			c.progress(2, 2, 6)
			c.progressRewind(2, 0)
			c.progress(2, 5, 6)
			c.progressDone(2)
			c.progress(3, 0, 1) // the next pass reports afresh
			c.progressDone(3)
		}, "1 0 2, 1 1 2, 1 2 2, 2 0 6, 2 1 6, 2 2 6, 2 3 6, 2 4 6, 2 5 6, 2 6 6, 3 0 1, 3 1 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			log := &progressLog{}
			c := &Checker{opt: Options{Progress: log}}
			tt.steps(c)
			if got := strings.Join(log.lines, ", "); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	// Without a Progress nothing is called.
	c := &Checker{}
	c.progress(1, 0, 4)
	c.progressRewind(1, 0)
	c.progressDone(1)
}

// heldLog is a Progress and WorkProgress that a held read waits on: it
// keeps the Updates as e2fsck's lines and the latest numbers of each
// pass for the reader.
type heldLog struct {
	mu sync.Mutex
	// mu protects lines, cur and work.
	lines []string
	began [6]bool   // the pass was Updated
	cur   [6]uint64 // the last cur Updated per pass
	work  [6]uint64 // the last work done reported per pass
	total [6]uint64
}

func (l *heldLog) Update(pass int, cur, max uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf("%d %d %d", pass, cur, max))
	if pass > 0 && pass < len(l.cur) {
		l.began[pass], l.cur[pass] = true, cur
	}
}

func (l *heldLog) Work(pass int, done, total uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if pass > 0 && pass < len(l.work) {
		l.work[pass], l.total[pass] = done, total
	}
}

// state says whether pass began and returns its last cur and work.
func (l *heldLog) state(pass int) (began bool, cur, work uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.began[pass], l.cur[pass], l.work[pass]
}

var (
	_ Progress     = (*heldLog)(nil)
	_ WorkProgress = (*heldLog)(nil)
)

// holdDev holds the first read for which hold says so until release
// says so.
type holdDev struct {
	blockdev.Device
	once    sync.Once
	hold    func(off int64, n int) bool
	release func() bool
	held    atomic.Bool // the read was held
	// stuck is set when release never said so and the backstop let the
	// read go: what progress had been reported then.
	stuck atomic.Pointer[string]
	at    func() string
}

func (d *holdDev) ReadAt(p []byte, off int64) (int, error) {
	if d.hold(off, len(p)) {
		d.once.Do(func() {
			d.held.Store(true)
			// The backstop only catches progress that never comes: the
			// verdict does not depend on how long anything takes.
			deadline := time.Now().Add(testfs.WallBackstop(0))
			for !d.release() {
				if time.Now().After(deadline) {
					s := d.at()
					d.stuck.Store(&s)
					return
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	return d.Device.ReadAt(p, off)
}

// progressRun checks img read-only with dev wrapped by wrap and returns
// the Checker after the run and its Updates.
func progressRun(t *testing.T, img string, workers int, log *heldLog, wrap func(blockdev.Device) blockdev.Device) *Checker {
	t.Helper()
	file, err := blockdev.Open(img, true, false)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	dev := blockdev.Device(file)
	if wrap != nil {
		dev = wrap(file)
	}
	f, err := fs.Open(dev, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := problem.NewReporter(&bytes.Buffer{}, problem.Options{Mode: problem.ModeNo, Device: "test"})
	c := New(f, rep, Options{ReadOnly: true, Workers: workers, Progress: log})
	c.CheckSuper(uint64(dev.Size()) >> f.BlockBits)
	rep.MarkValid()
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestProgressWhileReadHeld: progress follows the work as the workers do
// it, not as the replay reaches it. A read is held until the progress
// reported says the work before it (or beside it) is done: with progress
// reported at replay only, it never would (the read's unit holds the
// replay), and the check would wait for the backstop.
//
//   - pass 2: the read of the last run of directory blocks, in the last
//     of three work units; every block before the run must be reported
//     (-C fd's "2 cur max"), serially and with workers.
//   - pass 1: the read of the first group's inode table; the workers
//     check the other groups meanwhile, and the work reported for the bar
//     must cover them, while the groups reported stay e2fsck's (none
//     before the first is done).
//
// Either way the Updates of the run are those of a run whose reads are
// not held: e2fsck's lines, whatever the timing. The passes' work (721
// directory blocks, 192 inode-table blocks) is under aheadSteps, so every
// block of it is reported, not every 0.1%.
func TestProgressWhileReadHeld(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	// 3 groups of 256 inodes, 700 directories of one block each: about
	// 710 directory blocks, three pass-2 units.
	img := testfs.MkImage(t, testfs.Spec{Size: 24 << 20, FSType: "ext4", BlockSize: 1024, Inodes: 768,
		Populate: func(tr *testfs.Tree) {
			for i := 0; i < 700; i++ {
				tr.Dir(fmt.Sprintf("d%03d", i))
			}
		}})
	plain := &heldLog{}
	c := progressRun(t, img, 4, plain, nil)
	bs := int64(c.fs.BlockSize)

	// The last run of directory blocks in pass 2's order, as pass2Unit
	// reads it.
	list := c.dblist
	n := len(list)
	const unitBlocks = 256
	runStart := n - 1
	for runStart > 0 && n-runStart < maxDirRun && list[runStart-1].blk+1 == list[runStart].blk &&
		(runStart-1)/unitBlocks == (n-1)/unitBlocks && list[runStart-1].blk != 0 {
		runStart--
	}
	if runStart%unitBlocks == 0 || n <= 2*unitBlocks {
		t.Fatalf("%d directory blocks, last run from %d: the run must not start its unit", n, runStart)
	}
	t.Logf("%d directory blocks, the last run is %d to %d", n, runStart, n-1)
	runOff := int64(list[runStart].blk) * bs

	// The first group's inode table chunk, as scanGroup reads it.
	var tableOff int64
	var tableLen, others uint64
	for g := uint32(0); g < c.fs.Groups; g++ {
		table, blocks := c.usedInodeTable(g)
		if g == 0 {
			tableOff, tableLen = int64(table)*bs, min(blocks, 64)
		} else {
			others += blocks
		}
	}
	if tableLen == 0 || others == 0 {
		t.Fatalf("inode tables: group 0 %d blocks, the others %d", tableLen, others)
	}

	for _, tc := range []struct {
		name    string
		workers int
		pass    int
		hold    func(log *heldLog, off int64, n int) bool
		release func(log *heldLog) bool
	}{
		{"pass2/serial", 1, 2, func(log *heldLog, off int64, n int) bool {
			began, cur, _ := log.state(2)
			return off == runOff && began && cur < uint64(n)
		}, func(log *heldLog) bool {
			_, cur, _ := log.state(2)
			return cur >= uint64(runStart)
		}},
		{"pass2/workers", 4, 2, func(log *heldLog, off int64, n int) bool {
			began, cur, _ := log.state(2)
			return off == runOff && began && cur < uint64(n)
		}, func(log *heldLog) bool {
			_, cur, _ := log.state(2)
			return cur >= uint64(runStart)
		}},
		{"pass1/workers", 4, 1, func(log *heldLog, off int64, n int) bool {
			began, _, _ := log.state(1)
			return off == tableOff && uint64(n) == tableLen*uint64(bs) && began
		}, func(log *heldLog) bool {
			_, cur, work := log.state(1)
			if cur > 0 {
				t.Errorf("group %d reported done before group 0's inode table is read", cur)
			}
			return work >= others
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &heldLog{}
			d := &holdDev{hold: func(off int64, n int) bool { return tc.hold(log, off, n) },
				release: func() bool { return tc.release(log) },
				at: func() string {
					_, cur, work := log.state(tc.pass)
					return fmt.Sprintf("pass %d: progress stopped at %d, work at %d", tc.pass, cur, work)
				}}
			progressRun(t, img, tc.workers, log, func(dev blockdev.Device) blockdev.Device {
				d.Device = dev
				return d
			})
			if !d.held.Load() {
				t.Errorf("the read was never held")
			}
			if s := d.stuck.Load(); s != nil {
				t.Errorf("%s while the read was held", *s)
			}
			if got, want := strings.Join(log.lines, ", "), strings.Join(plain.lines, ", "); got != want {
				t.Errorf("Updates differ from the run without a held read:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}
