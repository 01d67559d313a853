package check

import (
	"bytes"
	"testing"

	"gofsck/internal/problem"
)

// TestRecordedUnsupportedStopsReplay: a worker that meets a fix gofsck
// cannot make records it (and stops, as after a fatal problem); the
// replay hands it to the real sink at the same point, which stops the run
// as unsupported instead of leaving it merely aborted, and the events
// after it are not replayed. In direct mode the call is forwarded.
func TestRecordedUnsupportedStopsReplay(t *testing.T) {
	var out bytes.Buffer
	rep := problem.NewReporter(&out, problem.Options{Mode: problem.ModeYes})
	rec := &recSink{}
	rec.Header(problem.PR_2_BAD_INLINE_DIR_SIZE)
	rec.Unsupported(problem.PR_2_BAD_INLINE_DIR_SIZE)
	if !rec.Aborted() {
		t.Fatal("the worker's sink does not stop after Unsupported")
	}
	rec.Header(problem.PR_2_BAD_INLINE_DIR_SIZE)
	c := &Checker{sink: rep}
	c.replayEvents(rec.events)
	if got := rep.Status().Unsupported; got != problem.PR_2_BAD_INLINE_DIR_SIZE {
		t.Errorf("replay: Status.Unsupported = %v", got)
	}
	if !c.abort || !rep.Aborted() {
		t.Errorf("replay: abort %v, reporter aborted %v", c.abort, rep.Aborted())
	}

	direct := problem.NewReporter(&bytes.Buffer{}, problem.Options{Mode: problem.ModeYes})
	(&recSink{direct: direct}).Unsupported(problem.PR_6_RECREATE_JOURNAL)
	if got := direct.Status().Unsupported; got != problem.PR_6_RECREATE_JOURNAL {
		t.Errorf("direct: Status.Unsupported = %v", got)
	}
}
