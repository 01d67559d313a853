package check

import (
	"fmt"
	"strings"
	"testing"
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
