package getopt

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// e2fsckSpec is the option string e2fsck passes to getopt.
const e2fsckSpec = "panyrcdfktvDFVb:B:l:L:C:j:E:z:I:P:N:"

// flag and with build expected options tersely.
func flag(c byte) Option           { return Option{Name: c} }
func with(c byte, a string) Option { return Option{Name: c, Arg: a, HasArg: true} }

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		spec     string // e2fsckSpec when empty
		args     string // split on spaces; "''" stands for an empty word
		opts     []Option
		operands []string
		err      string
	}{
		{name: "nothing"},
		{name: "operand only", args: "/dev/sda1", operands: []string{"/dev/sda1"}},
		{name: "separate flags", args: "-f -n img", opts: []Option{flag('f'), flag('n')}, operands: []string{"img"}},
		{name: "cluster fn", args: "-fn img", opts: []Option{flag('f'), flag('n')}, operands: []string{"img"}},
		{name: "cluster fy", args: "-fy img", opts: []Option{flag('f'), flag('y')}, operands: []string{"img"}},
		{name: "cluster fp", args: "-fp img", opts: []Option{flag('f'), flag('p')}, operands: []string{"img"}},
		{name: "all flags", args: "-panyrcdfktvDFV", opts: []Option{flag('p'), flag('a'), flag('n'), flag('y'), flag('r'), flag('c'), flag('d'), flag('f'), flag('k'), flag('t'), flag('v'), flag('D'), flag('F'), flag('V')}},
		{name: "attached arg", args: "-C0 img", opts: []Option{with('C', "0")}, operands: []string{"img"}},
		{name: "attached number", args: "-b8193 img", opts: []Option{with('b', "8193")}, operands: []string{"img"}},
		{name: "separate arg", args: "-C 0 img", opts: []Option{with('C', "0")}, operands: []string{"img"}},
		{name: "arg at end of cluster", args: "-fC0 img", opts: []Option{flag('f'), with('C', "0")}, operands: []string{"img"}},
		{name: "cluster then separate arg", args: "-fnb 32768 img", opts: []Option{flag('f'), flag('n'), with('b', "32768")}, operands: []string{"img"}},
		{name: "arg swallows rest of cluster", args: "-bfn img", opts: []Option{with('b', "fn")}, operands: []string{"img"}},
		{name: "separate arg looks like option", args: "-l -f img", opts: []Option{with('l', "-f")}, operands: []string{"img"}},
		{name: "separate arg is --", args: "-b -- img", opts: []Option{with('b', "--")}, operands: []string{"img"}},
		{name: "empty separate arg", args: "-E '' img", opts: []Option{with('E', "")}, operands: []string{"img"}},
		{name: "extended opts", args: "-E journal_only,discard img", opts: []Option{with('E', "journal_only,discard")}, operands: []string{"img"}},
		{name: "all arg options", args: "-b 1 -B 2 -l f -L F -C 3 -j J -E e -z u -I 4 -P 5 -N n img",
			opts: []Option{with('b', "1"), with('B', "2"), with('l', "f"), with('L', "F"), with('C', "3"), with('j', "J"), with('E', "e"), with('z', "u"), with('I', "4"), with('P', "5"), with('N', "n")}, operands: []string{"img"}},
		{name: "options after operand", args: "/dev/x -f -n", opts: []Option{flag('f'), flag('n')}, operands: []string{"/dev/x"}},
		{name: "arg option after operand", args: "img -C 0", opts: []Option{with('C', "0")}, operands: []string{"img"}},
		{name: "operands keep order", args: "a -f b -n c", opts: []Option{flag('f'), flag('n')}, operands: []string{"a", "b", "c"}},
		{name: "double dash", args: "-f -- -n", opts: []Option{flag('f')}, operands: []string{"-n"}},
		{name: "double dash after operand", args: "a -f -- -n b", opts: []Option{flag('f')}, operands: []string{"a", "-n", "b"}},
		{name: "second double dash is operand", args: "-- -- x", operands: []string{"--", "x"}},
		{name: "lone dash is operand", args: "- -f", opts: []Option{flag('f')}, operands: []string{"-"}},
		{name: "empty word is operand", args: "'' -f", opts: []Option{flag('f')}, operands: []string{""}},
		{name: "repeated counting flags", args: "-vv -c -v -cc -t -tt", opts: []Option{flag('v'), flag('v'), flag('c'), flag('v'), flag('c'), flag('c'), flag('t'), flag('t'), flag('t')}},
		{name: "repeated arg option", args: "-b 1 -b2", opts: []Option{with('b', "1"), with('b', "2")}},
		{name: "invalid", args: "-x img", err: "e2fsck: invalid option -- 'x'"},
		{name: "invalid in cluster", args: "-fxn img", opts: []Option{flag('f')}, err: "e2fsck: invalid option -- 'x'"},
		{name: "invalid after operand", args: "img -f -Q", opts: []Option{flag('f')}, err: "e2fsck: invalid option -- 'Q'"},
		{name: "colon is never an option", args: "-:", err: "e2fsck: invalid option -- ':'"},
		{name: "long option", args: "--help", err: "e2fsck: invalid option -- '-'"},
		{name: "missing arg", args: "-b", err: "e2fsck: option requires an argument -- 'b'"},
		{name: "missing arg in cluster", args: "-fnb", opts: []Option{flag('f'), flag('n')}, err: "e2fsck: option requires an argument -- 'b'"},
		{name: "missing arg after operand", args: "/dev/null -C", err: "e2fsck: option requires an argument -- 'C'"},
		{name: "error stops parsing", args: "-x -b", err: "e2fsck: invalid option -- 'x'"},
		{name: "plus stops at operand", spec: "+fn", args: "-f a -n", opts: []Option{flag('f')}, operands: []string{"a", "-n"}},
		{name: "plus and double dash", spec: "+fn", args: "-f -- -n", opts: []Option{flag('f')}, operands: []string{"-n"}},
		{name: "leading colon ignored", spec: ":fb:", args: "-b", err: "e2fsck: option requires an argument -- 'b'"},
		{name: "optional arg attached", spec: "fo::", args: "-foval x", opts: []Option{flag('f'), with('o', "val")}, operands: []string{"x"}},
		{name: "optional arg absent", spec: "fo::", args: "-o val", opts: []Option{flag('o')}, operands: []string{"val"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			if spec == "" {
				spec = e2fsckSpec
			}
			var args []string
			for _, a := range strings.Fields(tc.args) {
				if a == "''" {
					a = ""
				}
				args = append(args, a)
			}
			opts, operands, err := Parse("e2fsck", args, spec)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Errorf("err = %v, want %q", err, tc.err)
				}
				if operands != nil {
					t.Errorf("operands = %q on error, want nil", operands)
				}
			} else if err != nil {
				t.Errorf("unexpected error %v", err)
			}
			if !reflect.DeepEqual(opts, tc.opts) {
				t.Errorf("opts = %+v, want %+v", opts, tc.opts)
			}
			if tc.err == "" && !reflect.DeepEqual(operands, tc.operands) {
				t.Errorf("operands = %q, want %q", operands, tc.operands)
			}
		})
	}
}

func TestErrorIs(t *testing.T) {
	_, _, err := Parse("prog", []string{"-x"}, "f")
	var e *Error
	if !errors.As(err, &e) || e.Opt != 'x' || e.Prog != "prog" || !errors.Is(err, ErrInvalidOption) {
		t.Errorf("invalid option: err = %#v", err)
	}
	_, _, err = Parse("prog", []string{"-b"}, "b:")
	if !errors.Is(err, ErrMissingArgument) || errors.Is(err, ErrInvalidOption) {
		t.Errorf("missing argument: err = %#v", err)
	}
}

// The program name is used verbatim, as glibc uses argv[0].
func TestProgName(t *testing.T) {
	_, _, err := Parse("/usr/sbin/e2fsck", []string{"-x"}, e2fsckSpec)
	if want := "/usr/sbin/e2fsck: invalid option -- 'x'"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// TestAgainstE2fsck runs the installed e2fsck with bad command lines and
// compares the first line of its stderr with our error text. e2fsck exits
// 16 (usage) for all of them before opening any device.
func TestAgainstE2fsck(t *testing.T) {
	path, err := exec.LookPath("e2fsck")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("e2fsck not found (e2fsprogs is required in CI): %v", err)
		}
		t.Skipf("e2fsck not found: %v", err)
	}
	cases := [][]string{
		{"-x"},
		{"--help"},
		{"-b"},
		{"-fnb"},
		{"-:"},
		{"-f", "-Q", "/dev/null"},
		{"/dev/null", "-C"},
		{"-fC0", "/dev/null", "-n", "-Z"},
		{"-E"},
		{"-pz"},
		{"-y", "-\xe9"},
	}
	for _, args := range cases {
		t.Run(fmt.Sprint(args), func(t *testing.T) {
			_, _, ours := Parse("e2fsck", args, e2fsckSpec)
			if ours == nil {
				t.Fatal("Parse accepted a command line e2fsck rejects")
			}
			cmd := exec.Command(path, args...)
			cmd.Args[0] = "e2fsck"
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 16 {
				t.Fatalf("e2fsck %q: %v, want exit status 16", args, err)
			}
			first, _, _ := strings.Cut(stderr.String(), "\n")
			if first != ours.Error() {
				t.Errorf("e2fsck says %q, we say %q", first, ours.Error())
			}
		})
	}
}

// FuzzParse checks that Parse never panics and that its results are
// consistent with the input: every option is in the spec, every operand and
// argument is a word or a suffix of a word of args.
func FuzzParse(f *testing.F) {
	f.Add("-fn img", e2fsckSpec)
	f.Add("img -fC0 -- -x", e2fsckSpec)
	f.Add("-b", "+b:o::")
	f.Fuzz(func(t *testing.T, line, spec string) {
		args := strings.Split(line, " ")
		opts, operands, err := Parse("p", args, spec)
		joined := "\x00" + strings.Join(args, "\x00") + "\x00"
		for _, o := range opts {
			if o.Name == ':' || strings.IndexByte(spec, o.Name) < 0 {
				t.Fatalf("option %q not in spec %q", o.Name, spec)
			}
			if o.HasArg && !strings.Contains(joined, o.Arg+"\x00") {
				t.Fatalf("argument %q not from args", o.Arg)
			}
		}
		if err != nil {
			return
		}
		for _, a := range operands {
			if !strings.Contains(joined, "\x00"+a+"\x00") {
				t.Fatalf("operand %q not in args", a)
			}
		}
	})
}
