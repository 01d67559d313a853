package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"gofsck/internal/testfs"
)

// TestVersion: -V prints one line shaped like e2fsck's "e2fsck 1.47.0
// (5-Feb-2023)", with the binary's stamped version, and exits 0.
func TestVersion(t *testing.T) {
	out, code := runGofsck("-V")
	if want := "gofsck " + buildVersion().String() + "\n"; code != 0 || out != want {
		t.Errorf("-V: exit %d, output %q, want %q", code, out, want)
	}
}

func TestVersionFrom(t *testing.T) {
	vcs := func(rev, when, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: when}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "a614d8d1234567890abcdef1234567890abcdef0"
	for _, c := range []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "0.1.0-dev (unknown date)"},
		{"devel, no vcs", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "0.1.0-dev (unknown date)"},
		{"devel, vcs", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs(rev, "2026-12-01T23:37:51Z", "false")}, "0.1.0-dev+a614d8d12345 (1-Dec-2026)"},
		{"devel, modified tree", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: vcs(rev, "2026-11-05T01:02:03+02:00", "true")}, "0.1.0-dev+a614d8d12345.dirty (4-Nov-2026)"},
		{"pseudo-version and vcs", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201233751-a614d8d12345+dirty"},
			Settings: vcs(rev, "2026-12-01T23:37:51Z", "true")}, "0.1.0-dev+a614d8d12345.dirty (1-Dec-2026)"},
		{"pseudo-version only", &debug.BuildInfo{Main: debug.Module{Version: "v0.1.1-0.20261201233751-a614d8d12345"}},
			"0.1.0-dev+a614d8d12345 (1-Dec-2026)"},
		{"tagged", &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}, "0.2.0 (unknown date)"},
		{"tagged, vcs", &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"},
			Settings: vcs(rev, "2027-02-05T10:00:00Z", "false")}, "0.2.0 (5-Feb-2027)"},
		{"bad pseudo suffix", &debug.BuildInfo{Main: debug.Module{Version: "v1.0.0-rc1"}}, "1.0.0-rc1 (unknown date)"},
	} {
		if got := versionFrom(c.info, c.info != nil).String(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestVersionStamped builds gofsck from a clone of this repository with
// VCS stamping on: -V names the commit and its date.
func TestVersionStamped(t *testing.T) {
	t.Parallel() // independent of the others; runs beside them on the second CPU
	root, err := testfs.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed to build a stamped binary")
	}
	dir := t.TempDir()
	clone := filepath.Join(dir, "src")
	git := func(args ...string) string {
		out, err := exec.Command("git", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("clone", "--quiet", "--no-hardlinks", root, clone)
	rev := git("-C", clone, "rev-parse", "HEAD")
	when, err := time.Parse(time.RFC3339, git("-C", clone, "log", "-1", "--format=%cI"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "gofsck")
	build := exec.Command(goTool(t), "build", "-buildvcs=true", "-o", bin, "./cmd/gofsck")
	build.Dir = clone
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-V").CombinedOutput()
	want := "gofsck 0.1.0-dev+" + rev[:12] + " (" + when.UTC().Format("2-Jan-2006") + ")\n"
	if err != nil || string(out) != want {
		t.Errorf("-V: %v, %q, want %q", err, out, want)
	}
}

// TestVersionLdflags: a build without git (a release tarball) names its
// version and date with -ldflags -X, as scripts/build.sh does from
// VERSION and DATE; without them it says 0.1.0-dev (unknown date).
func TestVersionLdflags(t *testing.T) {
	t.Parallel()
	root, err := testfs.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct{ ldflags, want string }{
		{"-X main.stampedVersion=0.1.0 -X main.stampedDate=5-Dec-2026", "gofsck 0.1.0 (5-Dec-2026)\n"},
		{"", "gofsck 0.1.0-dev (unknown date)\n"},
	} {
		bin := filepath.Join(dir, "gofsck")
		build := exec.Command(goTool(t), "build", "-buildvcs=false", "-ldflags", c.ldflags, "-o", bin, "./cmd/gofsck")
		build.Dir = root
		build.Env = append(os.Environ(), "GOFLAGS=")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		if out, err := exec.Command(bin, "-V").CombinedOutput(); err != nil || string(out) != c.want {
			t.Errorf("-ldflags %q: -V: %v, %q, want %q", c.ldflags, err, out, c.want)
		}
	}
}

// goTool is the go command that runs the tests.
func goTool(t *testing.T) string {
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is needed to build a stamped binary")
	}
	return p
}
