// Package qsort sorts as glibc's qsort does, for code that must leave
// slices in the order e2fsck's qsort calls leave them.
//
// It is a leaf package: standard library only.
package qsort

// Glibc sorts s in the order glibc's qsort (and qsort_r) leaves it:
// a top-down merge sort that splits n into n/2 and n-n/2 and, merging,
// takes from the left run while cmp(left, right) <= 0 (msort_with_tmp).
// e2fsck sorts with comparators that are not total orders on hostile
// data — differences of 32-bit block numbers cast to int, casefold
// comparisons of names that do not fold — so the order of its messages
// and of what it writes depends on the algorithm, not only on cmp; Go's
// sorts would give another. (glibc 2.36's qsort falls back to quicksort
// only when the array is larger than a quarter of physical memory.)
func Glibc[T any](s []T, cmp func(a, b *T) int) {
	if len(s) < 2 {
		return
	}
	tmp := make([]T, 0, len(s))
	var sortRange func(b []T)
	sortRange = func(b []T) {
		n := len(b)
		if n <= 1 {
			return
		}
		b1, b2 := b[:n/2], b[n/2:]
		sortRange(b1)
		sortRange(b2)
		t := tmp[:0]
		i, j := 0, 0
		for i < len(b1) && j < len(b2) {
			if cmp(&b1[i], &b2[j]) <= 0 {
				t = append(t, b1[i])
				i++
			} else {
				t = append(t, b2[j])
				j++
			}
		}
		t = append(t, b1[i:]...)
		copy(b, t) // what is left of b2 is in place
	}
	sortRange(s)
}
