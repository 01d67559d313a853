package qsort

import (
	"slices"
	"testing"
)

// TestGlibcTotalOrder: with a total order the result is sorted and
// stable, as glibc's merge sort leaves it.
func TestGlibcTotalOrder(t *testing.T) {
	type kv struct{ k, v int }
	for _, n := range []int{0, 1, 2, 3, 7, 64, 1000} {
		s := make([]kv, n)
		for i := range s {
			s[i] = kv{(i * 7919) % 13, i}
		}
		want := slices.Clone(s)
		slices.SortStableFunc(want, func(a, b kv) int { return a.k - b.k })
		Glibc(s, func(a, b *kv) int { return a.k - b.k })
		if !slices.Equal(s, want) {
			t.Errorf("n=%d: got %v, want %v", n, s, want)
		}
	}
}

// TestGlibcNotTotal: the order under a comparator that is not an order
// follows the algorithm. One that always says "greater" makes every
// merge take the right run first, which reverses the slice.
func TestGlibcNotTotal(t *testing.T) {
	for _, n := range []int{2, 3, 4, 5, 9, 100} {
		s := make([]int, n)
		for i := range s {
			s[i] = i
		}
		Glibc(s, func(a, b *int) int { return 1 })
		for i, x := range s {
			if x != n-1-i {
				t.Fatalf("n=%d: got %v, want the slice reversed", n, s)
			}
		}
	}
}
