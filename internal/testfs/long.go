package testfs

import (
	"hash/fnv"
	"os"
	"testing"
)

// The test suite has two tiers.
//
// The default tier is the README's command, `go test ./...`: every package
// and every kind of check (differential against e2fsck on a sample of each
// corpus, repair, undo, signals), sized to finish in minutes on a 2-CPU
// machine.
//
// The long tier adds what costs minutes each: the whole differential
// corpora, the big sparse volumes, the exhaustive mutation campaigns. It is
// compiled in by the build tag "long" (scripts/test-all.sh; .ci/run runs it
// after the default tier), so that a newcomer's first `go test ./...` stays
// fast and CI still runs every check.

// Long reports whether the long tier is compiled in (build tag "long").
func Long() bool { return longTier }

// RequireLong skips t unless the long tier is compiled in. Use it for a
// test that only makes sense whole and costs more than a few seconds; a
// test that can check a representative part quickly should do that part
// by default and the rest when Long() is true.
func RequireLong(t testing.TB) {
	t.Helper()
	if !longTier {
		t.Skip("long tier: run scripts/test-all.sh (go test -tags long)")
	}
}

// InSample reports whether the case called name is in the default tier's
// sample of one case in k: in the default tier when the FNV-1a hash of
// name is 0 mod k. The choice depends on the name alone, so every machine
// checks the same cases, and adding or removing a case does not change
// whether the others are in.
//
// The long tier takes every case, or, when the environment variable
// GOFSCK_TEST_SAMPLE_DONE is 1, every case but the sample: CI (.ci/run)
// sets it for scripts/test-all.sh because the default tier has just run
// the sample, so each case runs once. k <= 1 means every case in both
// tiers.
func InSample(name string, k int) bool {
	if k <= 1 {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	in := h.Sum32()%uint32(k) == 0
	if longTier {
		return !in || os.Getenv("GOFSCK_TEST_SAMPLE_DONE") != "1"
	}
	return in
}
