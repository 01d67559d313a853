package main

import (
	"os"
	"time"
)

// clock is e2fsck's ctx->now: the one time a run compares the
// superblock's times with and stamps its repairs with, read once when
// the run starts.
type clock struct {
	now int64 // seconds since the epoch
	// fromEnv: the time came from E2FSCK_TIME, which e2fsck takes as
	// given; only the system clock is distrusted before 2010
	// (E2F_FLAG_TIME_INSANE).
	fromEnv bool
}

// readClock reads the clock as e2fsck_allocate_context does: the
// E2FSCK_TIME environment variable when it is set (even empty), parsed
// as strtoull(value, NULL, 0) parses it, else the system's time. Tests
// and scripts use the variable to make two runs stamp the same time.
func readClock() clock {
	if v, ok := os.LookupEnv("E2FSCK_TIME"); ok {
		return clock{now: int64(strtoull(v)), fromEnv: true}
	}
	return clock{now: time.Now().Unix()}
}

// insane says whether the system clock is too early to trust (before
// 2010), as e2fsck decides when E2FSCK_TIME is not set.
func (c clock) insane() bool { return !c.fromEnv && c.now < 1262322000 }

// strtoull is C's strtoull(s, NULL, 0): leading white space, an optional
// sign, a base from the prefix (0x hexadecimal, 0 octal, else decimal),
// digits up to the first that is not one; 0 when there are none; the
// largest value on overflow; a minus sign negates in unsigned arithmetic.
func strtoull(s string) uint64 {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] >= '\t' && s[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := uint64(10)
	switch {
	case i+2 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && digit(s[i+2], 16) >= 0:
		base, i = 16, i+2
	case i < len(s) && s[i] == '0':
		base = 8
	}
	var v uint64
	over := false
	for ; i < len(s); i++ {
		d := digit(s[i], base)
		if d < 0 {
			break
		}
		if v > (^uint64(0)-uint64(d))/base {
			over = true
		}
		v = v*base + uint64(d)
	}
	if over {
		return ^uint64(0)
	}
	if neg {
		return -v
	}
	return v
}

// digit is c's value as a digit in base, or -1.
func digit(c byte, base uint64) int {
	var d int
	switch {
	case c >= '0' && c <= '9':
		d = int(c - '0')
	case c >= 'a' && c <= 'z':
		d = int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		d = int(c-'A') + 10
	default:
		return -1
	}
	if d >= int(base) {
		return -1
	}
	return d
}
