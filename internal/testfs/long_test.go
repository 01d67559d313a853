package testfs

import (
	"fmt"
	"testing"
)

// TestInSampleTiers checks the sample's shape in the tier compiled in: the
// default tier takes about one case in k, the same ones on every call and
// whatever GOFSCK_TEST_SAMPLE_DONE says; the long tier takes every case,
// or with GOFSCK_TEST_SAMPLE_DONE=1 about k-1 in k.
func TestInSampleTiers(t *testing.T) {
	const n, k = 1200, 6
	count := func() (in int, picked map[string]bool) {
		picked = map[string]bool{}
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("feature-set-%d/case-%d", i%7, i)
			if InSample(name, k) {
				in++
				picked[name] = true
			}
			if !InSample(name, 1) {
				t.Fatalf("InSample(%q, 1) = false; k <= 1 takes every case", name)
			}
		}
		return in, picked
	}
	t.Setenv("GOFSCK_TEST_SAMPLE_DONE", "")
	plain, plainSet := count()
	t.Setenv("GOFSCK_TEST_SAMPLE_DONE", "1")
	done, doneSet := count()
	lo, hi := n/k/2, n/k*2 // about n/k: FNV spreads the names
	if !Long() {
		if plain < lo || plain > hi {
			t.Fatalf("default tier took %d of %d cases, want about %d", plain, n, n/k)
		}
		if done != plain || fmt.Sprint(doneSet) != fmt.Sprint(plainSet) {
			t.Fatalf("GOFSCK_TEST_SAMPLE_DONE changed the default tier's sample (%d vs %d cases)", done, plain)
		}
		return
	}
	if plain != n {
		t.Fatalf("long tier took %d of %d cases, want all", plain, n)
	}
	if skipped := n - done; skipped < lo || skipped > hi {
		t.Fatalf("long tier after the sample left out %d of %d cases, want about %d (the default tier's sample)", skipped, n, n/k)
	}
}
