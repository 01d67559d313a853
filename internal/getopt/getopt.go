// Package getopt parses short options the way glibc's getopt(3) does, so
// that commands modelled on e2fsprogs accept the same command lines and
// reject bad ones with the same messages.
//
// Supported, as in glibc:
//
//   - clustered flags ("-fn") with an argument attached at the end of a
//     cluster ("-fC0", "-b8193") or taken from the next word ("-C 0"), even
//     when that word looks like an option ("-b --");
//   - permutation: options may follow operands ("dev -f -n"); operands are
//     returned in their original order;
//   - "--" ends option parsing; a lone "-" is an operand;
//   - optional arguments ("x::"), which must be attached;
//   - a leading '+' in the spec, which stops at the first operand (what
//     POSIXLY_CORRECT does in glibc; Parse reads no environment, so a caller
//     wanting that behaviour prepends '+' itself).
//
// There are no long options: "--help" is the option '-' followed by 'h',
// 'e', ... and so fails with "invalid option -- '-'", exactly like e2fsck.
// glibc's '-' spec prefix (operands returned in place) is not supported, and
// a leading ':' is accepted and ignored: errors are always returned, never
// printed.
package getopt

import (
	"errors"
	"strings"
)

// Option is one option found on the command line, in command-line order.
// Repeated options appear once per occurrence, so counting flags such as
// e2fsck's -v is the caller's job.
type Option struct {
	Name   byte   // the option character
	Arg    string // the argument, when HasArg
	HasArg bool   // an argument was given (always true for "x:" options)
}

// Errors wrapped by *Error, for errors.Is.
var (
	ErrInvalidOption   = errors.New("invalid option")
	ErrMissingArgument = errors.New("option requires an argument")
)

// Error describes a rejected command line. Its message is glibc's
// diagnostic, without the trailing newline, e.g.
// "e2fsck: invalid option -- 'x'".
type Error struct {
	Prog string // program name as passed to Parse
	Opt  byte   // the offending option character
	Err  error  // ErrInvalidOption or ErrMissingArgument
}

// Error returns glibc's diagnostic for the rejected option.
func (e *Error) Error() string {
	// The option is written as the raw byte, like glibc's "%c", not as
	// the UTF-8 encoding of a rune.
	return e.Prog + ": " + e.Err.Error() + " -- '" + string([]byte{e.Opt}) + "'"
}

// Unwrap returns ErrInvalidOption or ErrMissingArgument.
func (e *Error) Unwrap() error { return e.Err }

// argKind says whether an option character takes an argument.
type argKind uint8

const (
	invalid argKind = iota
	noArg
	requiredArg
	optionalArg
)

// lookup finds c in a getopt spec: a letter, optionally followed by ':'
// (argument required) or "::" (argument optional). ':' itself is never an
// option, as in glibc.
func lookup(spec string, c byte) argKind {
	if c == ':' {
		return invalid
	}
	i := strings.IndexByte(spec, c)
	if i < 0 {
		return invalid
	}
	switch {
	case strings.HasPrefix(spec[i+1:], "::"):
		return optionalArg
	case strings.HasPrefix(spec[i+1:], ":"):
		return requiredArg
	}
	return noArg
}

// Parse parses args (the command line without the program name) against
// spec, written in getopt(3) syntax such as
// "panyrcdfktvDFVb:B:l:L:C:j:E:z:I:P:N:". prog is used only in error
// messages; pass argv[0] unchanged to match glibc.
//
// It returns the options in order and the operands in order. Parsing stops
// at the first error, as a getopt loop that exits on '?' does; the options
// seen before it are returned along with the *Error.
func Parse(prog string, args []string, spec string) (opts []Option, operands []string, err error) {
	inOrder := strings.HasPrefix(spec, "+")
	spec = strings.TrimPrefix(spec, "+")
	spec = strings.TrimPrefix(spec, ":")

	for i := 0; i < len(args); {
		word := args[i]
		if word == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		if len(word) < 2 || word[0] != '-' {
			if inOrder {
				operands = append(operands, args[i:]...)
				break
			}
			operands = append(operands, word)
			i++
			continue
		}
		i++
	cluster:
		for j := 1; j < len(word); j++ {
			c := word[j]
			switch lookup(spec, c) {
			case invalid:
				return opts, nil, &Error{Prog: prog, Opt: c, Err: ErrInvalidOption}
			case noArg:
				opts = append(opts, Option{Name: c})
			case requiredArg:
				var arg string
				switch {
				case j+1 < len(word):
					arg = word[j+1:]
				case i < len(args):
					arg = args[i]
					i++
				default:
					return opts, nil, &Error{Prog: prog, Opt: c, Err: ErrMissingArgument}
				}
				opts = append(opts, Option{Name: c, Arg: arg, HasArg: true})
				break cluster
			case optionalArg:
				o := Option{Name: c}
				if j+1 < len(word) {
					o.Arg, o.HasArg = word[j+1:], true
				}
				opts = append(opts, o)
				break cluster
			}
		}
	}
	return opts, operands, nil
}
