package problem

import (
	"fmt"
	"sort"
	"strings"
)

// Def is one entry of the problem catalogue: how a code is printed and
// answered.
type Def struct {
	Code Code
	// Name is e2fsck's name for the code, e.g. "PR_1_BAD_I_SIZE".
	Name string
	// Msg is the message template in e2fsck's abbreviated form: @x
	// abbreviations and %x fields, expanded when printed (see Reporter).
	Msg string
	// Prompt is the question asked after the message (PromptNone for
	// message-only problems).
	Prompt Prompt
	Flags  Flags
	// Latch is the latch group the problem belongs to (LatchNone if any).
	Latch Latch
	// Chain is the second problem asked after this one when
	// Flags has FlagAfterCode; its answer becomes this problem's answer.
	Chain Code
}

// Prompt is the question word printed after a problem's message.
type Prompt uint8

// The prompts, in e2fsck's order.
const (
	PromptNone       Prompt = iota // message only, nothing asked
	PromptFix                      // "Fix"
	PromptClear                    // "Clear"
	PromptRelocate                 // "Relocate"
	PromptAllocate                 // "Allocate"
	PromptExpand                   // "Expand"
	PromptConnect                  // "Connect to /lost+found"
	PromptCreate                   // "Create"
	PromptSalvage                  // "Salvage"
	PromptTruncate                 // "Truncate"
	PromptClearInode               // "Clear inode"
	PromptAbort                    // "Abort"; yes aborts the run
	PromptSplit                    // "Split"
	PromptContinue                 // "Continue"
	PromptClone                    // "Clone multiply-claimed blocks"
	PromptDelete                   // "Delete file"
	PromptSuppress                 // "Suppress messages"
	PromptUnlink                   // "Unlink"
	PromptClearHTree               // "Clear HTree index"
	PromptRecreate                 // "Recreate"
	PromptOptimize                 // "Optimize"
	PromptClearFlag                // "Clear flag"
	PromptNull                     // an empty question: the message is the question
	// The I/O channel's own questions (see channel.go).
	PromptIgnoreError  // "Ignore error"
	PromptForceRewrite // "Force rewrite"
	numPrompts
)

// promptWords holds, per prompt, the question and the word printed in
// preen mode (and for latched answers) when the answer is yes.
var promptWords = [numPrompts][2]string{
	PromptNone:         {"(no prompt)", "(NONE)"},
	PromptFix:          {"Fix", "FIXED"},
	PromptClear:        {"Clear", "CLEARED"},
	PromptRelocate:     {"Relocate", "RELOCATED"},
	PromptAllocate:     {"Allocate", "ALLOCATED"},
	PromptExpand:       {"Expand", "EXPANDED"},
	PromptConnect:      {"Connect to /lost+found", "RECONNECTED"},
	PromptCreate:       {"Create", "CREATED"},
	PromptSalvage:      {"Salvage", "SALVAGED"},
	PromptTruncate:     {"Truncate", "TRUNCATED"},
	PromptClearInode:   {"Clear inode", "INODE CLEARED"},
	PromptAbort:        {"Abort", "ABORTED"},
	PromptSplit:        {"Split", "SPLIT"},
	PromptContinue:     {"Continue", "CONTINUING"},
	PromptClone:        {"Clone multiply-claimed blocks", "MULTIPLY-CLAIMED BLOCKS CLONED"},
	PromptDelete:       {"Delete file", "FILE DELETED"},
	PromptSuppress:     {"Suppress messages", "SUPPRESSED"},
	PromptUnlink:       {"Unlink", "UNLINKED"},
	PromptClearHTree:   {"Clear HTree index", "HTREE INDEX CLEARED"},
	PromptRecreate:     {"Recreate", "WILL RECREATE"},
	PromptOptimize:     {"Optimize", "WILL OPTIMIZE"},
	PromptClearFlag:    {"Clear flag", "FLAG CLEARED"},
	PromptNull:         {"", ""},
	PromptIgnoreError:  {"Ignore error", "IGNORED"},
	PromptForceRewrite: {"Force rewrite", "REWRITTEN"},
}

// String returns the question word ("Fix", "Clear inode", ...); it is
// empty for PromptNull.
func (p Prompt) String() string {
	if p >= numPrompts {
		return fmt.Sprintf("Prompt(%d)", uint8(p))
	}
	return promptWords[p][0]
}

// Done returns the word printed instead of the question when the answer
// is yes and was not asked (preen mode, latched answers): "FIXED",
// "CLEARED", ...
func (p Prompt) Done() string {
	if p >= numPrompts {
		return ""
	}
	return promptWords[p][1]
}

// Flags modify how a problem is printed and answered. The names follow
// e2fsck's PR_* flags.
type Flags uint32

// The problem flags.
const (
	// FlagPreenOK: may be fixed automatically when preening; a prompted
	// problem without it halts preen mode.
	FlagPreenOK Flags = 1 << iota
	// FlagNoOK: answering no does not leave the file system invalid.
	FlagNoOK
	// FlagNoDefault: the default answer is no.
	FlagNoDefault
	// FlagMsgOnly: print the message only (no effect on answering).
	FlagMsgOnly
	// FlagFatal: abort the run after printing the message.
	FlagFatal
	// FlagAfterCode: after this problem, ask Def.Chain and use its answer.
	FlagAfterCode
	// FlagPreenNoMsg: print nothing when preening.
	FlagPreenNoMsg
	// FlagNoCollate: a message-only latch question that does not decide
	// the latch answer.
	FlagNoCollate
	// FlagNoNoMsg: print nothing under -n.
	FlagNoNoMsg
	// FlagPreenNo: the answer is no when preening.
	FlagPreenNo
	// FlagPreenNoHdr: no "device: " prefix when preening.
	FlagPreenNoHdr
	// FlagForceNo: always answer no (set only by configuration).
	FlagForceNo
	// FlagNotAFix: a yes does not count as fixing something.
	FlagNotAFix
	// FlagHeader: the problem is a pass header.
	FlagHeader
	numFlags = iota
)

var flagNames = [numFlags]string{
	"PREEN_OK", "NO_OK", "NO_DEFAULT", "MSG_ONLY", "FATAL", "AFTER_CODE",
	"PREEN_NOMSG", "NOCOLLATE", "NO_NOMSG", "PREEN_NO", "PREEN_NOHDR",
	"FORCE_NO", "NOT_A_FIX", "HEADER",
}

// String renders a flag set with e2fsck's names joined by "|", e.g.
// "PREEN_OK|NO_OK"; the empty set is "0".
func (f Flags) String() string {
	if f == 0 {
		return "0"
	}
	var b strings.Builder
	for i, n := range flagNames {
		if f&(1<<i) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('|')
		}
		b.WriteString(n)
		f &^= 1 << i
	}
	if f != 0 {
		if b.Len() > 0 {
			b.WriteByte('|')
		}
		fmt.Fprintf(&b, "%#x", uint32(f))
	}
	return b.String()
}

// Latch is a latch group: problems that share one answer. The first
// member reported asks the group's question (if it has one); later members
// reuse the answer until the latch is ended.
type Latch uint8

// The latch groups, as e2fsck defines them.
const (
	LatchNone        Latch = iota
	LatchBlock             // illegal blocks of one inode (pass 1); ended per inode
	LatchBBlock            // illegal blocks in the bad-blocks inode (pass 1)
	LatchIBitmap           // pass-5 inode bitmap difference list
	LatchBBitmap           // pass-5 block bitmap difference list
	LatchReloc             // relocation of bitmaps and inode tables (hint once)
	LatchDBlock            // pass-1B multiply-claimed block list of one inode
	LatchLowDtime          // inodes on the orphan list with a low dtime
	LatchTooBig            // "causes ... to be too big" blocks of one inode; ended per inode
	LatchOptimizeDir       // pass-3A list of directories being optimised
	LatchBGChecksum        // group descriptor checksums
	LatchOptimizeExt       // pass-1E list of inodes whose extent trees are rebuilt
	numLatches
)

// latchDef is a latch group's question (asked once, before the first
// member) and end message (asked by EndLatch if the latch was used).
type latchDef struct {
	name     string
	question Code
	end      Code
}

var latchDefs = [numLatches]latchDef{
	LatchNone:        {name: "NONE"},
	LatchBlock:       {"BLOCK", PR_1_INODE_BLOCK_LATCH, 0},
	LatchBBlock:      {"BBLOCK", PR_1_INODE_BBLOCK_LATCH, 0},
	LatchIBitmap:     {"IBITMAP", PR_5_INODE_BITMAP_HEADER, PR_5_INODE_BITMAP_END},
	LatchBBitmap:     {"BBITMAP", PR_5_BLOCK_BITMAP_HEADER, PR_5_BLOCK_BITMAP_END},
	LatchReloc:       {"RELOC", PR_0_RELOCATE_HINT, 0},
	LatchDBlock:      {"DBLOCK", PR_1B_DUP_BLOCK_HEADER, PR_1B_DUP_BLOCK_END},
	LatchLowDtime:    {"LOW_DTIME", PR_1_ORPHAN_LIST_REFUGEES, 0},
	LatchTooBig:      {"TOOBIG", PR_1_INODE_TOOBIG, 0},
	LatchOptimizeDir: {"OPTIMIZE_DIR", PR_3A_OPTIMIZE_DIR_HEADER, PR_3A_OPTIMIZE_DIR_END},
	LatchBGChecksum:  {"BG_CHECKSUM", PR_0_GDT_CSUM_LATCH, 0},
	LatchOptimizeExt: {"OPTIMIZE_EXT", PR_1E_OPTIMIZE_EXT_HEADER, PR_1E_OPTIMIZE_EXT_END},
}

// String returns e2fsck's name for the latch without the PR_LATCH_
// prefix ("BLOCK", "BG_CHECKSUM", ...).
func (l Latch) String() string {
	if l >= numLatches {
		return fmt.Sprintf("Latch(%d)", uint8(l))
	}
	return latchDefs[l].name
}

// Question returns the problem asked once before the latch's first member
// (0 if none).
func (l Latch) Question() Code {
	if l >= numLatches {
		return 0
	}
	return latchDefs[l].question
}

// End returns the problem asked when the latch is ended after being used
// (0 if none).
func (l Latch) End() Code {
	if l >= numLatches {
		return 0
	}
	return latchDefs[l].end
}

// all is defs followed by channelDefs: what index positions refer to.
var all = func() (a [len(defs) + len(channelDefs)]Def) {
	copy(a[:], defs[:])
	copy(a[len(defs):], channelDefs[:])
	return a
}()

// index returns the position of c in all.
func index(c Code) (int, bool) {
	i := sort.Search(len(defs), func(i int) bool { return defs[i].Code >= c })
	if i < len(defs) && defs[i].Code == c {
		return i, true
	}
	for j := range channelDefs {
		if channelDefs[j].Code == c {
			return len(defs) + j, true
		}
	}
	return 0, false
}

// Lookup returns a copy of the catalogue entry for c.
func Lookup(c Code) (*Def, bool) {
	i, ok := index(c)
	if !ok {
		return nil, false
	}
	d := all[i]
	return &d, true
}

// Defs returns a copy of the whole catalogue, sorted by code.
func Defs() []Def {
	return append([]Def(nil), defs[:]...)
}

// String returns e2fsck's name for the code ("PR_1_BAD_I_SIZE"), or
// "PR_0x%06x" for a code that is not in the catalogue.
func (c Code) String() string {
	if i, ok := index(c); ok {
		return all[i].Name
	}
	if c == PR_1_ALLOCATE_CASEFOLDED_DIRLIST {
		return "PR_1_ALLOCATE_CASEFOLDED_DIRLIST"
	}
	return fmt.Sprintf("PR_0x%06x", uint32(c))
}
