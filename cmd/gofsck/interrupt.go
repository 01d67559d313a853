package main

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// Cancellation by SIGINT or SIGTERM, as e2fsck's signal handler cancels.
//
// e2fsck's handler sets E2F_FLAG_CANCEL in the signal handler itself, and
// the flag is read between passes and after the last one: a signal that
// arrives at any time during the check cancels it. Go delivers a signal
// to the program through goroutines (the runtime's receiver, os/signal's
// loop, ours), so a check that races to its end could finish before the
// cancellation reaches it, and exit 0 after a Ctrl-C. sync closes that
// gap: it sends the process barrierSignal and waits until that has come
// through the same path. Signals reach os/signal in the order the kernel
// delivered them (the lower number first when both are pending), so by
// then every SIGINT or SIGTERM delivered before the barrier has cancelled
// the context. Barriers of the same number coalesce, and one sent before
// (another run's, a terminal's SIGWINCH) may be what comes through first:
// sync waits for a barrier to come through after it sent one, twice; the
// second is then at the latest its own first one.

// barrierSignal is the signal sync sends itself: SIGWINCH, which is
// ignored by default and harmless when a terminal sends it too.
const barrierSignal = syscall.SIGWINCH

// barrierWait bounds sync's wait for its own signal, which comes back in
// microseconds; it only keeps a lost one from hanging the check.
const barrierWait = 2 * time.Second

// interrupts is one run's cancellation by signal.
type interrupts struct {
	ctx    context.Context
	cancel context.CancelFunc
	ch     chan os.Signal
	// barriers counts the barrier signals that came through; probe
	// wakes sync when it changes.
	barriers atomic.Uint64
	probe    chan struct{}
	done     chan struct{} // loop has returned
}

// newInterrupts starts listening for SIGINT, SIGTERM and the barrier.
func newInterrupts() *interrupts {
	ctx, cancel := context.WithCancel(context.Background())
	in := &interrupts{ctx: ctx, cancel: cancel, ch: make(chan os.Signal, 8),
		probe: make(chan struct{}, 1), done: make(chan struct{})}
	signal.Notify(in.ch, os.Interrupt, syscall.SIGTERM, barrierSignal)
	go in.loop()
	return in
}

// loop cancels the context at SIGINT or SIGTERM and acknowledges barriers,
// in the order the signals arrive.
func (in *interrupts) loop() {
	defer close(in.done)
	for s := range in.ch {
		if s == barrierSignal {
			in.barriers.Add(1)
			select {
			case in.probe <- struct{}{}:
			default:
			}
			continue
		}
		in.cancel()
	}
}

// sync returns once every SIGINT or SIGTERM the process received before
// the call has cancelled the context (see above).
func (in *interrupts) sync() {
	t := time.NewTimer(barrierWait)
	defer t.Stop()
	for round := 0; round < 2; round++ {
		seen := in.barriers.Load()
		if syscall.Kill(os.Getpid(), barrierSignal) != nil {
			return
		}
		for in.barriers.Load() == seen {
			select {
			case <-in.probe:
			case <-t.C:
				return
			}
		}
	}
}

// stop stops listening and releases the context.
func (in *interrupts) stop() {
	signal.Stop(in.ch)
	close(in.ch)
	<-in.done
	in.cancel()
}
