package problem

import "fmt"

// Setting is what an administrator's e2fsck.conf says about one problem
// code, in its [problems] stanza:
//
//	[problems]
//		0x05000f = {
//			force_no = true
//			max_count = 3
//		}
//
// The Reporter applies it over the catalogue entry (Options.Settings).
// Fields left at their zero value change nothing.
type Setting struct {
	// Msg replaces the message template when HasMsg ("description"; the
	// text is expanded like the catalogue's, @-abbreviations and
	// %-fields included; empty prints no message).
	Msg    string
	HasMsg bool
	// Set and Clear are the flags the stanza turns on and off; only those
	// ConfigFlags names may be given.
	Set, Clear Flags
	// MaxCount replaces Options.MaxCount for this code when HasMaxCount
	// ("max_count").
	MaxCount    int
	HasMaxCount bool
}

// ConfigFlag is a flag e2fsck.conf may set or clear per problem, with the
// name of its relation.
type ConfigFlag struct {
	Name string
	Flag Flags
}

// configFlags are e2fsck's per-problem booleans. FlagMsgOnly can be set
// but, as in e2fsck, changes nothing.
var configFlags = [...]ConfigFlag{
	{"preen_ok", FlagPreenOK},
	{"no_ok", FlagNoOK},
	{"no_default", FlagNoDefault},
	{"print_message_only", FlagMsgOnly},
	{"preen_nomessage", FlagPreenNoMsg},
	{"no_collate", FlagNoCollate},
	{"no_nomsg", FlagNoNoMsg},
	{"preen_noheader", FlagPreenNoHdr},
	{"force_no", FlagForceNo},
	{"not_a_fix", FlagNotAFix},
}

// ConfigFlags returns the flags e2fsck.conf may set per problem.
func ConfigFlags() []ConfigFlag { return configFlags[:] }

// settable are the flags a Setting may change.
const settable = FlagPreenOK | FlagNoOK | FlagNoDefault | FlagMsgOnly | FlagPreenNoMsg |
	FlagNoCollate | FlagNoNoMsg | FlagPreenNoHdr | FlagForceNo | FlagNotAFix

// ConfigKey returns the name e2fsck.conf gives code c in its [problems]
// stanza: "0x" and six lower-case hex digits, "0x05000f".
func ConfigKey(c Code) string { return fmt.Sprintf("0x%06x", uint32(c)) }

// configure returns the Reporter's catalogue and per-code maximum counts
// with opts.Settings applied; without settings, the shared catalogue and
// nil (Options.MaxCount for every code).
func configure(opts Options) (*[len(all)]Def, *[len(all)]int) {
	if len(opts.Settings) == 0 {
		return &all, nil
	}
	tab := all
	var max [len(all)]int
	for i := range max {
		max[i] = opts.MaxCount
	}
	for c, s := range opts.Settings {
		i, ok := index(c)
		if !ok || i >= len(defs) {
			// Unknown codes, and the I/O channel's questions, which e2fsck
			// asks outside its problem table.
			continue
		}
		d := &tab[i]
		if s.HasMsg {
			d.Msg = s.Msg
		}
		d.Flags = d.Flags&^(s.Clear&settable) | s.Set&settable
		if s.HasMaxCount {
			max[i] = s.MaxCount
		}
	}
	return &tab, &max
}
