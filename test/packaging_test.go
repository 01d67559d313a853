package test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gofsck/internal/testfs"
)

// moduleRoot is the repository's top directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := testfs.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// runBin runs prog with argv[0] set to name and returns stdout and stderr
// together and the exit status.
func runBin(t *testing.T, prog, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Args[0] = name
	cmd.Env = checkerEnv(t)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	}
	t.Fatalf("%s: %v", prog, err)
	return "", 0
}

// gofsckOptions returns gofsck's option letters, from its usage text, and
// its -E keys, from the list an unknown key prints.
func gofsckOptions(t *testing.T) (letters []string, keys []string) {
	t.Helper()
	bin := testfs.GofsckPath(t)
	usage, _ := runBin(t, bin, "gofsck")
	m := regexp.MustCompile(`\[-([a-zA-Z]+)\]`).FindStringSubmatch(usage)
	if m == nil {
		t.Fatalf("no option cluster in the usage:\n%s", usage)
	}
	for _, c := range m[1] {
		letters = append(letters, "-"+string(c))
	}
	for _, o := range regexp.MustCompile(`\[-([a-zA-Z])[ |]`).FindAllStringSubmatch(usage, -1) {
		letters = append(letters, "-"+o[1])
	}
	letters = append(letters, "-L", "-N")
	help, _ := runBin(t, bin, "gofsck", "-fn", "-E", "no-such-key", "x")
	for _, l := range strings.Split(help, "\n") {
		if strings.HasPrefix(l, "\t") {
			k := strings.Fields(l)[0]
			if i := strings.IndexByte(k, '='); i >= 0 {
				k = k[:i+1]
			}
			keys = append(keys, k)
		}
	}
	if len(keys) < 15 {
		t.Fatalf("-E keys %v from\n%s", keys, help)
	}
	return letters, keys
}

// TestManPages: the pages in docs/man render with groff without a
// warning (-ww), and gofsck.8 documents every option and -E key gofsck
// accepts.
func TestManPages(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Fatal("groff is needed to check the man pages: apt-get install groff-base (.ci/run installs it)")
	}
	root := moduleRoot(t)
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "man", "*.[18]"))
	var names []string
	for _, p := range pages {
		names = append(names, filepath.Base(p))
	}
	if want := []string{"gofsck-freefrag.8", "gofsck-fsinfo.8", "gofsck-iowatch.1", "gofsck.8"}; !slices.Equal(names, want) {
		t.Fatalf("man pages %v, want %v", names, want)
	}
	for _, p := range pages {
		cmd := exec.Command(groff, "-man", "-ww", "-z", p)
		out, err := cmd.CombinedOutput()
		if err != nil || len(out) != 0 {
			t.Errorf("groff -man -ww -z %s: %v\n%s", filepath.Base(p), err, out)
		}
		src, _ := os.ReadFile(p)
		for _, sec := range []string{".SH NAME\n", ".SH SYNOPSIS\n", ".SH DESCRIPTION\n", ".SH OPTIONS\n", ".SH SEE ALSO\n"} {
			if !bytes.Contains(src, []byte(sec)) {
				t.Errorf("%s: no %q section", filepath.Base(p), strings.TrimSpace(sec))
			}
		}
	}
	src, err := os.ReadFile(filepath.Join(root, "docs", "man", "gofsck.8"))
	if err != nil {
		t.Fatal(err)
	}
	// Roff writes a dash as \-.
	text := strings.ReplaceAll(string(src), `\-`, "-")
	letters, keys := gofsckOptions(t)
	for _, l := range letters {
		if !regexp.MustCompile(`(?m)^\.(B|BI|BR) .*` + regexp.QuoteMeta(l) + `\b`).MatchString(text) {
			t.Errorf("gofsck.8 does not document %s", l)
		}
	}
	for _, k := range keys {
		if !strings.Contains(text, k) {
			t.Errorf("gofsck.8 does not document -E %s", k)
		}
	}
	// Every -E key has its own paragraph, saying what it does (a bare
	// list of e2fsck's keys told nothing), as has --sample.
	for _, k := range append(keys, "--sample") {
		k = strings.TrimSuffix(k, "=")
		if !regexp.MustCompile(`(?m)^\.TP\n\.(B|BI|BR) (.*[ "])?` + regexp.QuoteMeta(k) + `[= ",\n]`).MatchString(text) {
			t.Errorf("gofsck.8 has no paragraph for %s", k)
		}
	}
	// -F flushes the buffers, as e2fsck's does (tested in cmd/gofsck's
	// TestBadInputMatchesE2fsck); the page said it had no effect.
	if m := regexp.MustCompile(`(?m)^\.TP\n\.B -F\n([^.][^\n]*\n)+`).FindString(text); !strings.Contains(m, "Flush") {
		t.Errorf("gofsck.8 does not say that -F flushes: %q", m)
	}
	for _, sec := range []string{".SH EXIT STATUS\n"} {
		if !strings.Contains(text, sec) {
			t.Errorf("gofsck.8: no %q section", strings.TrimSpace(sec))
		}
	}
}

// complete runs the bash completion for words (the last one being
// completed) and returns the candidates.
func complete(t *testing.T, script string, words ...string) []string {
	t.Helper()
	var quoted []string
	for _, w := range words {
		quoted = append(quoted, "'"+w+"'")
	}
	prog := "source '" + script + "'\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\n" +
		"COMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n_gofsck\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", prog)
	cmd.Dir = t.TempDir() // no files to complete
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// TestBashCompletion: the completion offers gofsck's options and -E keys,
// all of them and only those.
func TestBashCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is needed")
	}
	script := filepath.Join(moduleRoot(t), "scripts", "gofsck.bash-completion")
	letters, keys := gofsckOptions(t)
	opts := complete(t, script, "gofsck", "-")
	slices.Sort(opts)
	want := slices.Clone(letters)
	slices.Sort(want)
	want = slices.Compact(want)
	if !slices.Equal(opts, want) {
		t.Errorf("options %v, want %v", opts, want)
	}
	got := complete(t, script, "fsck.ext4", "-E", "")
	slices.Sort(got)
	slices.Sort(keys)
	if !slices.Equal(got, keys) {
		t.Errorf("-E keys %v, want %v", got, keys)
	}
	if got := complete(t, script, "gofsck", "-E", "json=r.json,no_sp"); !slices.Equal(got, []string{"json=r.json,no_speculation"}) {
		t.Errorf("-E after a comma: %v", got)
	}
	if got := complete(t, script, "gofsck", "un"); !slices.Equal(got, []string{"undo"}) {
		t.Errorf("subcommand: %v", got)
	}
	if got := complete(t, script, "gofsck", "undo", "-"); !slices.Equal(got, []string{"-f", "-h", "-n", "-o", "-v"}) {
		t.Errorf("undo options: %v", got)
	}
}

// builtTools runs scripts/build.sh once for the package's tests, with
// VERSION and DATE set as a build without git would set them, and
// returns its BUILDDIR.
func builtTools(t *testing.T) string {
	t.Helper()
	return testfs.Shared(t, "scripts-build", func(t testing.TB) string {
		dir := filepath.Join(t.TempDir(), "build")
		cmd := exec.Command(filepath.Join(moduleRoot(t.(*testing.T)), "scripts", "build.sh"))
		cmd.Env = append(os.Environ(), "BUILDDIR="+dir, "VERSION=9.9.9", "DATE=1-Jan-2027",
			"GO="+filepath.Join(runtime.GOROOT(), "bin", "go"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build.sh: %v\n%s", err, out)
		}
		return dir
	})
}

// stageInstall runs scripts/install.sh on builtTools' binaries into a
// fresh staging DESTDIR with PREFIX=/usr and the extra environment env,
// with no go command on PATH (installing builds nothing), and returns
// the DESTDIR and the tree it made (path: mode, or "-> target" for a
// link).
func stageInstall(t *testing.T, env ...string) (string, map[string]string) {
	t.Helper()
	root := moduleRoot(t)
	build := builtTools(t)
	dest := t.TempDir()
	cmd := exec.Command(filepath.Join(root, "scripts", "install.sh"))
	cmd.Env = append(os.Environ(), "DESTDIR="+dest, "PREFIX=/usr", "BUILDDIR="+build, "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "GO=/nonexistent")
	cmd.Env = append(cmd.Env, env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	got := map[string]string{}
	err := filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dest, p)
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			got[rel] = "-> " + target
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		got[rel] = fmt.Sprintf("%04o", fi.Mode().Perm())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dest, got
}

// fsckLinks are the paths FSCK_LINKS=1 adds to an install.
var fsckLinks = map[string]string{
	"usr/sbin/fsck.ext2": "-> gofsck", "usr/sbin/fsck.ext3": "-> gofsck", "usr/sbin/fsck.ext4": "-> gofsck",
	"usr/share/man/man8/fsck.ext2.8": "-> gofsck.8", "usr/share/man/man8/fsck.ext3.8": "-> gofsck.8",
	"usr/share/man/man8/fsck.ext4.8":                  "-> gofsck.8",
	"usr/share/bash-completion/completions/fsck.ext2": "-> gofsck",
	"usr/share/bash-completion/completions/fsck.ext3": "-> gofsck",
	"usr/share/bash-completion/completions/fsck.ext4": "-> gofsck",
}

// TestInstallNoFsckLinksByDefault: a plain install leaves fsck(8)
// alone. util-linux's fsck finds fsck.TYPE through PATH, where
// /usr/local/sbin comes first for root, so a default install must not
// put fsck.ext2/3/4 there; FSCK_LINKS=1 asks for them (TestInstall).
func TestInstallNoFsckLinksByDefault(t *testing.T) {
	_, got := stageInstall(t)
	for p := range got {
		if strings.Contains(filepath.Base(p), "fsck.ext") {
			t.Errorf("%s installed without FSCK_LINKS=1", p)
		}
	}
	if got["usr/sbin/gofsck"] != "0755" {
		t.Errorf("usr/sbin/gofsck: %q", got["usr/sbin/gofsck"])
	}
	// Installing builds nothing: without built binaries it stops.
	cmd := exec.Command(filepath.Join(moduleRoot(t), "scripts", "install.sh"))
	cmd.Env = append(os.Environ(), "DESTDIR="+t.TempDir(), "BUILDDIR="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "is not built: run scripts/build.sh (or make) first") {
		t.Errorf("install without a build: %v\n%s", err, out)
	}
	cmd = exec.Command(filepath.Join(moduleRoot(t), "scripts", "install.sh"))
	cmd.Env = append(os.Environ(), "DESTDIR="+t.TempDir(), "FSCK_LINKS=yes", "BUILDDIR="+builtTools(t))
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "FSCK_LINKS must be 0 or 1") {
		t.Errorf("FSCK_LINKS=yes: %v\n%s", err, out)
	}
}

// TestInstall runs scripts/install.sh with FSCK_LINKS=1 into a staging
// DESTDIR and checks the tree it makes; fsck.ext4 through its link is
// gofsck, and says what e2fsck run as fsck.ext4 says.
func TestInstall(t *testing.T) {
	testfs.RequireE2fsprogs(t)
	root := moduleRoot(t)
	dest, got := stageInstall(t, "FSCK_LINKS=1")
	want := map[string]string{ // path: mode, or "-> target" for a link
		"usr/sbin/gofsck": "0755", "usr/sbin/gofsck-freefrag": "0755", "usr/sbin/gofsck-fsinfo": "0755",
		"usr/bin/gofsck-iowatch":      "0755",
		"usr/share/man/man8/gofsck.8": "0644", "usr/share/man/man8/gofsck-freefrag.8": "0644",
		"usr/share/man/man8/gofsck-fsinfo.8": "0644", "usr/share/man/man1/gofsck-iowatch.1": "0644",
		"usr/share/bash-completion/completions/gofsck": "0644",
		"usr/share/doc/gofsck/README.md":               "0644",
		"usr/share/doc/gofsck/json-report.md":          "0644", "usr/share/doc/gofsck/json-report.schema.json": "0644",
		"usr/share/doc/gofsck/repair.md": "0644", "usr/share/doc/gofsck/tools.md": "0644",
		"usr/share/licenses/gofsck/LICENSE": "0644",
	}
	for p, m := range fsckLinks {
		want[p] = m
	}
	for p, m := range want {
		if got[p] != m {
			t.Errorf("%s: %q, want %q", p, got[p], m)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s installed, not expected", p)
		}
		if strings.Contains(p, "mkworkload") {
			t.Errorf("%s: the benchmark builder is installed", p)
		}
	}
	for src, dst := range map[string]string{
		"docs/man/gofsck.8": "usr/share/man/man8/gofsck.8", "LICENSE": "usr/share/licenses/gofsck/LICENSE",
		"scripts/gofsck.bash-completion": "usr/share/bash-completion/completions/gofsck",
		"docs/json-report.schema.json":   "usr/share/doc/gofsck/json-report.schema.json",
	} {
		a, _ := os.ReadFile(filepath.Join(root, src))
		b, _ := os.ReadFile(filepath.Join(dest, dst))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s not installed as is", src)
		}
	}
	// The version stamped at build time (scripts/build.sh's VERSION and
	// DATE, -ldflags -X) is what -V says.
	if out, _ := runBin(t, filepath.Join(dest, "usr", "sbin", "gofsck"), "gofsck", "-V"); !strings.HasPrefix(out, "gofsck 9.9.9 (1-Jan-2027)\n") {
		t.Errorf("-V of the built gofsck: %q", out)
	}
	// The man page alias: man fsck.ext4 shows gofsck(8), which names
	// the companion tools by their installed names.
	if page, err := os.ReadFile(filepath.Join(dest, "usr/share/man/man8/fsck.ext4.8")); err != nil || !bytes.Contains(page, []byte(".BR gofsck-fsinfo (8)")) {
		t.Errorf("man8/fsck.ext4.8: %v", err)
	}
	// Each companion tool names itself by its installed name.
	if out, code := runBin(t, filepath.Join(dest, "usr/sbin/gofsck-fsinfo"), "gofsck-fsinfo", "-h", filepath.Join(dest, "missing")); code != 1 || !strings.HasPrefix(out, "gofsck-fsinfo: No such file or directory") {
		t.Errorf("gofsck-fsinfo: exit %d, %q", code, out)
	}

	// fsck.ext4 through the link checks as gofsck does.
	link := filepath.Join(dest, "usr", "sbin", "fsck.ext4")
	img := testfs.MkImage(t, testfs.Spec{})
	gout, gcode := runBin(t, testfs.GofsckPath(t), "gofsck", "-fn", img)
	lout, lcode := runBin(t, link, "fsck.ext4", "-fn", img)
	if lcode != gcode || dropBanner(lout) != dropBanner(gout) || !strings.HasPrefix(lout, "gofsck ") {
		t.Errorf("fsck.ext4 -fn: exit %d\n%s\ngofsck -fn: exit %d\n%s", lcode, lout, gcode, gout)
	}
	// Messages name the program as run, as e2fsck's do: compare with
	// e2fsck run as fsck.ext4 (by name, as fsck(8) runs it).
	e2fsck, err := exec.LookPath("e2fsck")
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	for _, args := range [][]string{
		{"-fn", missing},         // com_err: the name run by
		{"-fn"},                  // usage: likewise
		{"-n", "-D", img},        // likewise
		{"-fn", "-p", img},       // fatal_error: the program's own name
		{"-f", img},              // likewise (no terminal)
		{"-fn", "-C", "99", img}, // likewise
	} {
		eout, ecode := runBin(t, e2fsck, "fsck.ext4", args...)
		lout, lcode := runBin(t, link, "fsck.ext4", args...)
		// fatal_error names e2fsck itself, as gofsck names itself.
		eout = strings.ReplaceAll(eout, "e2fsck: ", "gofsck: ")
		if ecode != lcode || banner(eout) != banner(lout) || dropBanner(eout) != dropBanner(lout) {
			t.Errorf("fsck.ext4 %v:\ne2fsck (exit %d):\n%s\ngofsck (exit %d):\n%s", args, ecode, eout, lcode, lout)
		}
	}
	// Run by its path, gofsck names itself by the link's base name
	// (e2fsck would print the path).
	if out, _ := runBin(t, link, link, "-fn", missing); !strings.Contains(out, "\nfsck.ext4: No such file or directory while trying to open "+missing+"\n") {
		t.Errorf("%s -fn %s:\n%s", link, missing, out)
	}
}

// banner reports whether s starts with a version line.
func banner(s string) bool {
	return strings.HasPrefix(s, "e2fsck 1.") || strings.HasPrefix(s, "gofsck ")
}

// dropBanner removes the version lines, which name the program by
// itself whatever argv[0] is ("e2fsck 1.47.0 (5-Feb-2023)", "gofsck ...").
func dropBanner(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "e2fsck 1.") && !strings.HasPrefix(l, "gofsck ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestDocsStayInRepository: the documentation installed or read with the
// sources names no path outside the repository (docs/tools.md named the
// developers' spec directory).
func TestDocsStayInRepository(t *testing.T) {
	root := moduleRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "man", "*"))
	files = append(append(files, pages...), filepath.Join(root, "README.md"))
	outside := regexp.MustCompile(`/work/|/home/`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if outside.MatchString(l) {
				t.Errorf("%s:%d names a path outside the repository: %s", filepath.Base(f), i+1, l)
			}
		}
	}
}
