package main

import "math"

// e2fsck reads its numeric options with sscanf and atoi; these give the
// same values for the same strings, so that a number gofsck takes is the
// one e2fsck takes ("010" is ten, "12abc" is twelve, "0x2001" is zero).

// cSpace reports whether c is a space for C's isspace in the C locale.
func cSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

// cDigits reads what strtoull/strtol read in base 10 from s: leading
// spaces, a sign, then decimal digits up to the first other byte. It
// returns the magnitude (saturated at MaxUint64), whether it was negative
// and whether there was a digit at all.
func cDigits(s string) (mag uint64, neg, overflow, ok bool) {
	i := 0
	for i < len(s) && cSpace(s[i]) {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		ok = true
		d := uint64(s[i] - '0')
		if mag > (math.MaxUint64-d)/10 {
			overflow = true
			mag = math.MaxUint64
			continue
		}
		if !overflow {
			mag = mag*10 + d
		}
	}
	return mag, neg, overflow, ok
}

// scanUint64 is sscanf(s, "%llu", &v) == 1 with glibc: a negative number
// wraps, an overflow saturates.
func scanUint64(s string) (uint64, bool) {
	mag, neg, overflow, ok := cDigits(s)
	if overflow {
		return math.MaxUint64, ok
	}
	if neg {
		mag = -mag
	}
	return mag, ok
}

// cLong is strtol(s, NULL, 10) on a 64-bit long: it saturates.
func cLong(s string) (int64, bool) {
	mag, neg, overflow, ok := cDigits(s)
	switch {
	case neg && (overflow || mag > 1<<63):
		return math.MinInt64, ok
	case neg:
		return -int64(mag), ok
	case overflow || mag > math.MaxInt64:
		return math.MaxInt64, ok
	}
	return int64(mag), ok
}

// scanInt is sscanf(s, "%d", &v) == 1: the long read, truncated to int.
func scanInt(s string) (int32, bool) {
	v, ok := cLong(s)
	return int32(v), ok
}

// cAtoi is C's atoi: (int) strtol(s, NULL, 10), 0 when there is no number.
func cAtoi(s string) int32 {
	v, _ := cLong(s)
	return int32(v)
}
