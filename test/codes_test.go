package test

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gofsck/internal/check"
	"gofsck/internal/problem"
	"gofsck/internal/testfs"
)

const codesNotRaisedPath = "testdata/codes_not_raised.txt"

// raisedCodes returns the problem codes named in gofsck's non-test source
// outside the catalogue itself (internal/problem's codes.go and
// table.go): identifiers only, so a code named in a comment does not
// count.
func raisedCodes(t *testing.T) map[string]bool {
	t.Helper()
	root, err := testfs.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, top := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if rel == filepath.Join("internal", "problem", "codes.go") || rel == filepath.Join("internal", "problem", "table.go") {
				return nil
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			var s scanner.Scanner
			fset := token.NewFileSet()
			s.Init(fset.AddFile(p, -1, len(src)), src, nil, 0)
			for {
				_, tok, lit := s.Scan()
				if tok == token.EOF {
					break
				}
				if tok == token.IDENT && strings.HasPrefix(lit, "PR_") {
					seen[lit] = true
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return seen
}

// TestProblemCodesRaised accounts for every code of e2fsck's problem
// table: gofsck's source raises it, or testdata/codes_not_raised.txt
// says why not (and then the source must indeed not raise it, so the
// list only holds what is true). It also requires every question gofsck
// can ask in a writable run to have its fix registered, except the ones
// docs/repair.md lists as not made, which stop the run before anything
// is written.
func TestProblemCodesRaised(t *testing.T) {
	raised := raisedCodes(t)
	notRaised := loadKnown(t, codesNotRaisedPath).listed
	defs := problem.Defs()
	if len(defs) < 400 {
		t.Fatalf("the catalogue has only %d codes", len(defs))
	}
	names := map[string]problem.Def{}
	for _, d := range defs {
		names[d.Name] = d
		why, listed := notRaised[d.Name]
		switch {
		case raised[d.Name] && listed:
			t.Errorf("%s is raised now: remove it from %s", d.Name, codesNotRaisedPath)
		case !raised[d.Name] && !listed:
			t.Errorf("%s is never raised: raise it, or say why in %s", d.Name, codesNotRaisedPath)
		case listed && why == "":
			t.Errorf("%s: %s gives no reason", d.Name, codesNotRaisedPath)
		}
	}
	for name := range notRaised {
		if _, ok := names[name]; !ok {
			t.Errorf("%s: %s is not a problem code", codesNotRaisedPath, name)
		}
	}
	// Questions without a registered fix: "yes" must be either the end
	// of the run (Abort, or a fatal problem) or a documented fix gofsck
	// does not make.
	root, err := testfs.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "repair.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		if !raised[d.Name] || d.Prompt == problem.PromptNone || d.Prompt == problem.PromptAbort || d.Flags&problem.FlagFatal != 0 || check.CanFix(d.Code) {
			continue
		}
		if !strings.Contains(string(doc), d.Name) {
			t.Errorf("%s asks %q but its fix is neither registered nor listed in docs/repair.md", d.Name, d.Prompt)
		}
	}
}
