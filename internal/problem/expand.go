package problem

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Message templates use e2fsck's notation:
//
//   - @x is an abbreviation (@i "inode", @b "block", @E "entry '%Dn' in %p
//     (%i)", ...). Abbreviations may contain further @ and % sequences. When
//     an abbreviation opens the message its first letter is capitalised.
//   - %x prints a field of the Problem, optionally with a decimal width
//     (%6b). %Ix prints a field of Problem.Inode, %Dx a field of
//     Problem.Dirent. An unknown sequence, or %I/%D without an inode or
//     directory entry, is printed as written.

// abbrevs maps the letter after '@' to its expansion.
var abbrevs = [128]string{
	'a': "extended attribute",
	'A': "error allocating",
	'b': "block",
	'B': "bitmap",
	'c': "compress",
	'C': "conflicts with some other fs @b",
	'd': "directory",
	'D': "deleted",
	'e': "entry",
	'E': "@e '%Dn' in %p (%i)",
	'f': "filesystem",
	'F': "for @i %i (%Q) is",
	'g': "group",
	'h': "HTREE @d @i",
	'i': "inode",
	'I': "illegal",
	'j': "journal",
	'l': "lost+found",
	'L': "is a link",
	'm': "multiply-claimed",
	'n': "invalid",
	'o': "orphaned",
	'p': "problem in",
	'q': "quota",
	'r': "root @i",
	's': "should be",
	'S': "super@b",
	'u': "unattached",
	'v': "device",
	'x': "extent",
	'z': "zero-length",
	'@': "@",
}

// specialInodes are the names printed for the reserved inodes below 11
// when a path is asked for without a containing directory.
var specialInodes = [...]string{
	"<The NULL inode>",
	"<The bad blocks inode>",
	"/",
	"<The user quota inode>",
	"<The group quota inode>",
	"<The boot loader inode>",
	"<The undelete directory inode>",
	"<The group descriptor inode>",
	"<The journal inode>",
	"<Reserved inode 9>",
	"<Reserved inode 10>",
}

// Block-count values with a special meaning for %B (e2fsck's
// BLOCK_COUNT_*): the block being reported is a mapping block, not data.
const (
	BlockCountInd        int64 = -1 // "indirect block"
	BlockCountDind       int64 = -2 // "double indirect block"
	BlockCountTind       int64 = -3 // "triple indirect block"
	BlockCountTranslator int64 = -4 // "translator block"
)

// backupSuper is what e2fsck prints for %S without a filesystem: it never
// probes the device when formatting a message.
const backupSuper = 8193

// expander formats one message. It is built per printed problem.
type expander struct {
	b     strings.Builder
	p     *Problem
	namer Namer
	// backup is %S (0: backupSuper).
	backup uint64
	now    func() time.Time // nil: time.Now
	loc    *time.Location
	// hasPath is set once a path name is printed; pathStart and pathEnd
	// delimit the first one (for Report.Path).
	hasPath            bool
	pathStart, pathEnd int
}

// maxRecurse bounds abbreviation nesting, as e2fsck does.
const maxRecurse = 10

// expand appends msg to e.b. first says whether this is the start of the
// message (for capitalisation).
func (e *expander) expand(msg string, first bool, depth int) {
	for i := 0; i < len(msg); i++ {
		switch c := msg[i]; c {
		case '@':
			i++
			var ch byte
			if i < len(msg) {
				ch = msg[i]
			}
			var s string
			if ch < 128 {
				s = abbrevs[ch]
			}
			if s == "" || depth >= maxRecurse {
				e.b.WriteByte('@')
				if ch != 0 {
					e.b.WriteByte(ch)
				}
				break
			}
			if first && s[0] >= 'a' && s[0] <= 'z' {
				e.b.WriteByte(s[0] - 'a' + 'A')
				s = s[1:]
				first = false
			}
			e.expand(s, first, depth+1)
		case '%':
			i++
			width := 0
			for i < len(msg) && msg[i] >= '0' && msg[i] <= '9' {
				if width < 1<<16 {
					width = width*10 + int(msg[i]-'0')
				}
				i++
			}
			if i >= len(msg) {
				e.b.WriteByte('%')
				break
			}
			switch msg[i] {
			case 'I':
				i++
				e.inode(at(msg, i))
			case 'D':
				i++
				e.dirent(at(msg, i))
			default:
				e.field(msg[i], width, first)
			}
		default:
			j := i
			for j < len(msg) && msg[j] != '@' && msg[j] != '%' {
				j++
			}
			e.b.WriteString(msg[i:j])
			i = j - 1
		}
		first = false
	}
}

// at returns msg[i], or 0 past the end.
func at(msg string, i int) byte {
	if i < len(msg) {
		return msg[i]
	}
	return 0
}

// raw prints an unexpandable sequence as written.
func (e *expander) raw(prefix string, ch byte) {
	e.b.WriteString(prefix)
	if ch != 0 {
		e.b.WriteByte(ch)
	}
}

func (e *expander) pad(s string, width int, zero bool) {
	for n := len(s); n < width; n++ {
		if zero {
			e.b.WriteByte('0')
		} else {
			e.b.WriteByte(' ')
		}
	}
	e.b.WriteString(s)
}

// capital writes s, capitalising its first letter if first.
func (e *expander) capital(s string, first bool) {
	if first && s != "" && s[0] >= 'a' && s[0] <= 'z' {
		e.b.WriteByte(s[0] - 'a' + 'A')
		s = s[1:]
	}
	e.b.WriteString(s)
}

// field expands %ch.
func (e *expander) field(ch byte, width int, first bool) {
	p := e.p
	u := func(v uint64) { e.pad(strconv.FormatUint(v, 10), width, false) }
	switch ch {
	case '%':
		e.b.WriteByte('%')
	case 'b':
		u(p.Blk)
	case 'B':
		var m string
		switch p.BlkCount {
		case BlockCountInd:
			m = "indirect block"
		case BlockCountDind:
			m = "double indirect block"
		case BlockCountTind:
			m = "triple indirect block"
		case BlockCountTranslator:
			m = "translator block"
		default:
			m = "block #"
		}
		e.capital(m, first)
		if p.BlkCount >= 0 {
			e.b.WriteString(strconv.FormatInt(p.BlkCount, 10))
		}
	case 'c':
		u(p.Blk2)
	case 'd':
		u(uint64(p.Dir))
	case 'g':
		u(uint64(p.Group))
	case 'i':
		u(uint64(p.Ino))
	case 'j':
		u(uint64(p.Ino2))
	case 'm':
		e.pad(p.Err, width, false)
	case 'N':
		u(p.Num)
	case 'n':
		u(p.Num2)
	case 'p':
		e.path(p.Ino, 0)
	case 'P':
		var ino uint32
		if p.Dirent != nil {
			ino = p.Dirent.Ino
		}
		e.path(p.Ino2, ino)
	case 'q':
		e.path(p.Dir, 0)
	case 'Q':
		e.path(p.Dir, p.Ino)
	case 'r':
		e.pad(strconv.FormatInt(p.BlkCount, 10), width, false)
	case 'S':
		if e.backup != 0 {
			e.b.WriteString(strconv.FormatUint(e.backup, 10))
		} else {
			e.b.WriteString(strconv.Itoa(backupSuper))
		}
	case 's':
		e.pad(p.Str, width, false)
	case 't':
		e.time(int64(p.Num))
	case 'T':
		now := time.Now
		if e.now != nil {
			now = e.now
		}
		e.time(now().Unix())
	case 'U':
		var m string
		switch p.Num {
		case 0:
			m = "user"
		case 1:
			m = "group"
		case 2:
			m = "project"
		default:
			m = "unknown quota type"
		}
		e.capital(m, first)
		if p.Num > 2 {
			fmt.Fprintf(&e.b, " %d", int32(p.Num))
		}
	case 'x':
		e.b.WriteString("0x")
		e.pad(strconv.FormatUint(uint64(p.Csum1), 16), width, true)
	case 'X':
		e.b.WriteString("0x")
		e.pad(strconv.FormatUint(p.Num, 16), width, true)
	case 'y':
		e.b.WriteString("0x")
		e.pad(strconv.FormatUint(uint64(p.Csum2), 16), width, true)
	default:
		e.raw("%", ch)
	}
}

// inode expands %I<ch>.
func (e *expander) inode(ch byte) {
	in := e.p.Inode
	if in == nil {
		e.raw("%I", ch)
		return
	}
	switch ch {
	case 's':
		e.b.WriteString(strconv.FormatUint(in.Size, 10))
	case 'S':
		e.b.WriteString(strconv.FormatUint(uint64(in.ExtraIsize), 10))
	case 'b':
		e.b.WriteString(strconv.FormatUint(in.Blocks, 10))
	case 'l':
		e.b.WriteString(strconv.FormatUint(uint64(in.Links), 10))
	case 'm':
		e.b.WriteString("0" + strconv.FormatUint(uint64(in.Mode), 8))
	case 'M':
		e.time(in.Mtime)
	case 'F':
		e.b.WriteString(strconv.FormatUint(uint64(in.Faddr), 10))
	case 'f':
		e.b.WriteString(strconv.FormatUint(in.FileACL, 10))
	case 'd':
		var v uint32
		if in.Mode&modeFmt == modeDir {
			v = in.SizeHigh
		}
		e.b.WriteString(strconv.FormatUint(uint64(v), 10))
	case 'u':
		e.b.WriteString(strconv.FormatInt(int64(int32(in.UID)), 10))
	case 'g':
		e.b.WriteString(strconv.FormatInt(int64(int32(in.GID)), 10))
	case 't':
		switch in.Mode & modeFmt {
		case modeReg:
			e.b.WriteString("regular file")
		case modeDir:
			e.b.WriteString("directory")
		case modeChr:
			e.b.WriteString("character device")
		case modeBlk:
			e.b.WriteString("block device")
		case modeFifo:
			e.b.WriteString("named pipe")
		case modeLnk:
			e.b.WriteString("symbolic link")
		case modeSock:
			e.b.WriteString("socket")
		default:
			e.b.WriteString("unknown file type with mode 0" + strconv.FormatUint(uint64(in.Mode), 8))
		}
	default:
		e.raw("%I", ch)
	}
}

// File type bits of i_mode.
const (
	modeFmt  = 0o170000
	modeSock = 0o140000
	modeLnk  = 0o120000
	modeReg  = 0o100000
	modeBlk  = 0o060000
	modeDir  = 0o040000
	modeChr  = 0o020000
	modeFifo = 0o010000
)

// dirent expands %D<ch>.
func (e *expander) dirent(ch byte) {
	d := e.p.Dirent
	if d == nil {
		e.raw("%D", ch)
		return
	}
	switch ch {
	case 'i':
		e.b.WriteString(strconv.FormatUint(uint64(d.Ino), 10))
	case 'n':
		n := int(d.NameLen)
		if d.RecLen != 0 && uint32(n) > d.RecLen {
			n = int(d.RecLen)
		}
		n = min(n, len(d.Name))
		safeWrite(&e.b, d.Name[:n])
	case 'r':
		e.b.WriteString(strconv.FormatUint(uint64(d.RecLen), 10))
	case 'l':
		e.b.WriteString(strconv.FormatUint(uint64(d.NameLen), 10))
	case 't':
		e.b.WriteString(strconv.FormatUint(uint64(d.FileType), 10))
	default:
		e.raw("%D", ch)
	}
}

// path prints the path name of (dir, ino) with ext2fs_get_pathname's
// conventions: ino 0 names the directory dir itself.
func (e *expander) path(dir, ino uint32) {
	if !e.hasPath {
		e.hasPath = true
		e.pathStart = e.b.Len()
		defer func() { e.pathEnd = e.b.Len() }()
	}
	if dir == 0 && ino < uint32(len(specialInodes)) {
		e.b.WriteString(specialInodes[ino])
		return
	}
	if e.namer == nil {
		e.b.WriteString("???")
		return
	}
	if dir == 0 {
		// e2fsck cannot search without a directory.
		e.b.WriteString("...")
		return
	}
	s := e.namer.Path(dir, ino)
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	safeWrite(&e.b, []byte(s))
}

// safeWrite writes name with control bytes as ^X and bytes above 128 as
// M-X, as e2fsck does.
func safeWrite(b *strings.Builder, name []byte) {
	for _, ch := range name {
		if ch > 128 {
			b.WriteString("M-")
			ch -= 128
		}
		if ch < 32 || ch == 0x7f {
			b.WriteByte('^')
			ch ^= 0x40
		}
		b.WriteByte(ch)
	}
}

// time prints t like asctime(3) without its newline: "Tue Sep 21
// 03:19:14 1993".
func (e *expander) time(t int64) {
	loc := e.loc
	if loc == nil {
		loc = time.Local
	}
	tm := time.Unix(t, 0).In(loc)
	s := fmt.Sprintf("%.3s %.3s%3d %.2d:%.2d:%.2d %d",
		tm.Weekday().String(), tm.Month().String(), tm.Day(),
		tm.Hour(), tm.Minute(), tm.Second(), tm.Year())
	if len(s) > 24 {
		s = s[:24]
	}
	e.b.WriteString(s)
}
