package test

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"gofsck/internal/testfs"
)

func TestMain(m *testing.M) { testfs.Main(m) }

// checkPair runs gofsck on gimg and the installed e2fsck on eimg with the
// same args, side by side (each keeps about one CPU busy on a small
// image), and returns both outputs and exit codes.
func checkPair(t *testing.T, gimg, eimg string, args ...string) (gout string, gexit int, eout string, eexit int) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		eout, eexit = testfs.E2fsckInPlace(t, eimg, args...)
	}()
	gout, gexit = testfs.Gofsck(t, gimg, args...)
	<-done
	return gout, gexit, eout, eexit
}

var updateKnown = flag.Bool("update-known", false,
	"rewrite testdata/known_differences.txt and testdata/corpus_known_differences.txt from the current results")

// knownDiffs is a known-differences file: one "case-name<TAB>reason" line
// per case on which gofsck is allowed to disagree with the reference. '#'
// lines are comments. The list may only shrink: a listed case that agrees
// fails the test as well, so that fixes get recorded.
type knownDiffs struct {
	path    string
	listed  map[string]string // case name → reason, as read from the file
	mu      sync.Mutex
	results map[string]outcome // mu protects results.
}

type outcome struct {
	agree  bool
	reason string // why it disagrees, one line
}

func loadKnown(t *testing.T, path string) *knownDiffs {
	t.Helper()
	k := &knownDiffs{path: path, listed: map[string]string{}, results: map[string]outcome{}}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return k
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		name, reason, _ := strings.Cut(l, "\t")
		name = strings.TrimSpace(name)
		if _, dup := k.listed[name]; dup {
			t.Errorf("%s:%d: %s listed twice", path, n, name)
		}
		k.listed[name] = strings.TrimSpace(reason)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return k
}

// record stores one case's outcome and, unless -update-known is given,
// fails the case when it disagrees without being listed or agrees while
// listed. detail is logged with an unexpected disagreement.
func (k *knownDiffs) record(t *testing.T, name string, agree bool, reason, detail string) {
	t.Helper()
	k.mu.Lock()
	k.results[name] = outcome{agree: agree, reason: reason}
	k.mu.Unlock()
	if *updateKnown {
		return
	}
	_, listed := k.listed[name]
	switch {
	case !agree && !listed:
		t.Errorf("gofsck disagrees with the reference: %s\n%s\n(add to %s: %q, or run with -update-known)",
			reason, detail, k.path, name+"\t"+reason)
	case agree && listed:
		t.Errorf("gofsck now agrees with the reference; remove the line %q from %s (or run with -update-known)",
			name, k.path)
	}
}

// finish logs the summary line, rewrites the file under -update-known, and
// otherwise fails listing every line to add or remove. all is the set of
// every case name that exists (ran or not), to spot stale lines.
func (k *knownDiffs) finish(t *testing.T, label string, all []string, header string) {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	agree, known, unexpected := 0, 0, 0
	var add, remove []string
	for name, o := range k.results {
		_, listed := k.listed[name]
		switch {
		case o.agree && listed:
			agree++
			remove = append(remove, name)
		case o.agree:
			agree++
		case listed:
			known++
		default:
			unexpected++
			add = append(add, name+"\t"+o.reason)
		}
	}
	for name := range k.listed {
		if !slices.Contains(all, name) {
			remove = append(remove, name+" (no such case)")
		}
	}
	slices.Sort(add)
	slices.Sort(remove)
	summary := fmt.Sprintf("%s: %d cases, %d agree, %d known differences", label, len(k.results), agree, known)
	if unexpected > 0 {
		summary += fmt.Sprintf(", %d unexpected differences", unexpected)
	}
	t.Log(summary)

	if *updateKnown {
		if t.Failed() {
			t.Errorf("not rewriting %s: the test failed for other reasons", k.path)
			return
		}
		lines := map[string]string{}
		for name, reason := range k.listed {
			if _, ran := k.results[name]; !ran && slices.Contains(all, name) {
				lines[name] = reason // not run this time (-run filter): keep
			}
		}
		for name, o := range k.results {
			if !o.agree {
				lines[name] = o.reason
				if r, ok := k.listed[name]; ok && r != "" {
					lines[name] = r // a still-listed case keeps its written reason
				}
			}
		}
		names := make([]string, 0, len(lines))
		for n := range lines {
			names = append(names, n)
		}
		slices.Sort(names)
		var b strings.Builder
		b.WriteString(header)
		for _, n := range names {
			fmt.Fprintf(&b, "%s\t%s\n", n, lines[n])
		}
		if err := os.WriteFile(k.path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s with %d lines", k.path, len(names))
		return
	}
	if len(add) > 0 || len(remove) > 0 {
		t.Errorf("%s is out of date (fix gofsck, or run go test ./test -run '^%s$' -update-known):\nlines to add:\n\t%s\nlines to remove:\n\t%s",
			k.path, t.Name(), strings.Join(add, "\n\t"), strings.Join(remove, "\n\t"))
	}
}
