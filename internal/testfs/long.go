package testfs

import "testing"

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

// Sample returns every k-th element of items (k >= 1), starting at the
// first, unless the long tier is compiled in, in which case it returns
// items whole. The choice depends only on the order of items, so the
// default tier checks the same sample on every machine.
func Sample[T any](items []T, k int) []T {
	if longTier || k <= 1 {
		return items
	}
	out := make([]T, 0, (len(items)+k-1)/k)
	for i := 0; i < len(items); i += k {
		out = append(out, items[i])
	}
	return out
}
