package main

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

func TestStrtoull(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{
		{"", 0}, {"1700000000", 1700000000}, {"  42x", 42}, {"+7", 7}, {"-1", ^uint64(0)},
		{"0x10", 16}, {"0X1f", 31}, {"0x", 0}, {"0xg", 0}, {"017", 15}, {"019", 1}, {"abc", 0},
		{"99999999999999999999999", ^uint64(0)}, {"\t\n 5", 5},
	} {
		if got := strtoull(c.in); got != c.want {
			t.Errorf("strtoull(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

// TestE2fsckTimeMatchesE2fsck: E2FSCK_TIME is the run's time for gofsck
// as for e2fsck. Ten days past the last check of a filesystem checked
// every day (and, with the variable before 2010, a time e2fsck trusts
// since it was given), both skip or force the check alike.
func TestE2fsckTimeMatchesE2fsck(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	img := testfs.MkImage(t, testfs.Spec{FSType: "ext4"})
	tune := exec.Command("tune2fs", "-i", "1d", img)
	tune.Env = testfs.Env(t)
	if out, err := tune.CombinedOutput(); err != nil {
		t.Fatalf("tune2fs: %v\n%s", err, out)
	}
	for _, now := range []string{
		fmt.Sprint(testfs.FakeTime + 10*86400 + 5), // 10 days on
		fmt.Sprint(testfs.FakeTime + 3600),         // within the interval
		fmt.Sprint(testfs.FakeTime - 3*86400),      // before the last check
		"100",                                      // 1970, but given
	} {
		t.Setenv("E2FSCK_TIME", now)
		eout, ecode := testfs.E2fsckInPlace(t, img, "-n")
		gout, gcode := runGofsck("-n", img)
		if norm(gout, img) != norm(eout, img) || gcode != ecode {
			t.Errorf("E2FSCK_TIME=%s: exit %d vs e2fsck %d\n--- e2fsck\n%s--- gofsck\n%s", now, gcode, ecode, eout, gout)
		}
		if now == fmt.Sprint(testfs.FakeTime+10*86400+5) && !strings.Contains(eout, "has gone 10 days without being checked") {
			t.Errorf("e2fsck does not force the check ten days on:\n%s", eout)
		}
	}
}
