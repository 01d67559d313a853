package main

import (
	"os"
	"runtime"
	"syscall"
	"testing"
)

// TestInterruptSync: a SIGINT the process has received has cancelled the
// run's context by the time sync returns, every time, however the
// goroutines that carry it are scheduled (before sync, a check that
// raced to its end could exit 0 after a Ctrl-C). A SIGWINCH from a
// terminal neither cancels nor disturbs it. The signals are sent to this
// thread (tgkill), so that each has been received, its handler run, when
// the call returns: what sync promises is about signals received.
func TestInterruptSync(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	self := func(sig syscall.Signal) {
		t.Helper()
		if err := syscall.Tgkill(os.Getpid(), syscall.Gettid(), sig); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 1000; i++ {
		in := newInterrupts()
		self(syscall.SIGWINCH)
		in.sync()
		if in.ctx.Err() != nil {
			in.stop()
			t.Fatalf("round %d: a SIGWINCH cancelled the run", i)
		}
		self(syscall.SIGINT)
		in.sync()
		err := in.ctx.Err()
		in.stop()
		if err == nil {
			t.Fatalf("round %d: SIGINT received, context not cancelled after sync", i)
		}
	}
}
