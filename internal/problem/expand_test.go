package problem

import (
	"strings"
	"testing"
	"time"
)

// expandMsg expands an arbitrary template the way Fix does.
func expandMsg(msg string, p Problem, n Namer) string {
	e := expander{p: &p, namer: n, loc: time.UTC,
		now: func() time.Time { return time.Date(2024, 2, 5, 7, 8, 9, 0, time.UTC) }}
	e.expand(msg, true, 0)
	return e.b.String()
}

func TestExpand(t *testing.T) {
	namer := mapNamer{{2, 0}: "/", {12, 0}: "/dir", {12, 13}: "/dir/f\x01le", {2, 12}: "/dir"}
	dir := &InodeInfo{Mode: 0o40755, SizeHigh: 7, UID: 0xffffffff, GID: 100, Links: 3,
		Size: 1 << 33, Blocks: 1 << 32, ExtraIsize: 32, Faddr: 5, FileACL: 1234,
		Mtime: time.Date(1994, 1, 2, 8, 29, 13, 0, time.UTC).Unix()}
	reg := &InodeInfo{Mode: 0o100644, SizeHigh: 7}
	tests := []struct {
		name string
		msg  string
		p    Problem
		n    Namer
		want string
	}{
		{"abbrev capitalised", "@i %i", Problem{Ino: 12}, nil, "Inode 12"},
		{"abbrev not first", "Bad @i", Problem{}, nil, "Bad inode"},
		{"nested abbrev", "@h %i", Problem{Ino: 5}, nil, "HTREE directory inode 5"},
		{"nested capital", "@S", Problem{}, nil, "Superblock"},
		{"@E", "@E", Problem{Ino: 2, Dirent: &DirentInfo{Name: name("x"), NameLen: 1}}, namer, "Entry 'x' in / (2)"},
		{"@F", "@F bad", Problem{Ino: 13, Dir: 12}, namer, "For inode 13 (/dir/f^Ale) is bad"},
		{"unknown abbrev", "@Z @", Problem{}, nil, "@Z @"},
		{"@@", "a@@b", Problem{}, nil, "a@b"},
		{"%%", "100%%", Problem{}, nil, "100%"},
		{"unknown field", "%W %", Problem{}, nil, "%W %"},
		{"width", "[%6b] [%3i]", Problem{Blk: 42, Ino: 7}, nil, "[    42] [  7]"},
		{"%B data", "%B", Problem{BlkCount: 17}, nil, "Block #17"},
		{"%B not first", "x %B", Problem{BlkCount: 0}, nil, "x block #0"},
		{"%B ind", "x %B", Problem{BlkCount: -1}, nil, "x indirect block"},
		{"%B dind", "x %B", Problem{BlkCount: -2}, nil, "x double indirect block"},
		{"%B tind", "%B", Problem{BlkCount: -3}, nil, "Triple indirect block"},
		{"%B translator", "x %B", Problem{BlkCount: -4}, nil, "x translator block"},
		{"%B other negative", "x %B", Problem{BlkCount: -9}, nil, "x block #"},
		{"%r", "%r", Problem{BlkCount: -2}, nil, "-2"},
		{"%c %d %g %j", "%c %d %g %j", Problem{Blk2: 1, Dir: 2, Group: 3, Ino2: 4}, nil, "1 2 3 4"},
		{"%N %n big", "%N %n", Problem{Num: 1<<64 - 1, Num2: 5}, nil, "18446744073709551615 5"},
		{"%s %m", "%s: %m", Problem{Str: "s_inodes_count", Err: "Bad magic"}, nil, "s_inodes_count: Bad magic"},
		{"%x %y width", "%04x %04y %x", Problem{Csum1: 0x49f, Csum2: 0xabcdef}, nil, "0x049f 0xabcdef 0x49f"},
		{"%X", "%X", Problem{Num: 0xbeef}, nil, "0xbeef"},
		{"%S", "%S", Problem{}, nil, "8193"},
		{"%t", "%t", Problem{Num: uint64(time.Date(1994, 1, 2, 8, 29, 13, 0, time.UTC).Unix())}, nil, "Sun Jan  2 08:29:13 1994"},
		{"%T", "%T", Problem{}, nil, "Mon Feb  5 07:08:09 2024"},
		{"%U user", "%U", Problem{Num: 0}, nil, "User"},
		{"%U group", "x %U", Problem{Num: 1}, nil, "x group"},
		{"%U project", "x %U", Problem{Num: 2}, nil, "x project"},
		{"%U unknown", "x %U", Problem{Num: 7}, nil, "x unknown quota type 7"},
		{"%I fields", "%Is %IS %Ib %Il %Im %IF %If %Id %Iu %Ig", Problem{Inode: dir}, nil,
			"8589934592 32 4294967296 3 040755 5 1234 7 -1 100"},
		{"%IM", "%IM", Problem{Inode: dir}, nil, "Sun Jan  2 08:29:13 1994"},
		{"%Id regular", "%Id", Problem{Inode: reg}, nil, "0"},
		{"%It dir", "%It", Problem{Inode: dir}, nil, "directory"},
		{"%It reg", "%It", Problem{Inode: reg}, nil, "regular file"},
		{"%It chr", "%It", Problem{Inode: &InodeInfo{Mode: 0o20600}}, nil, "character device"},
		{"%It blk", "%It", Problem{Inode: &InodeInfo{Mode: 0o60600}}, nil, "block device"},
		{"%It fifo", "%It", Problem{Inode: &InodeInfo{Mode: 0o10600}}, nil, "named pipe"},
		{"%It lnk", "%It", Problem{Inode: &InodeInfo{Mode: 0o120777}}, nil, "symbolic link"},
		{"%It sock", "%It", Problem{Inode: &InodeInfo{Mode: 0o140777}}, nil, "socket"},
		{"%It unknown", "%It", Problem{Inode: &InodeInfo{Mode: 0o170644}}, nil, "unknown file type with mode 0170644"},
		{"%I without inode", "%Is %IM", Problem{}, nil, "%Is %IM"},
		{"%I unknown", "%Iz", Problem{Inode: dir}, nil, "%Iz"},
		{"%D fields", "%Di %Dr %Dl %Dt", Problem{Dirent: &DirentInfo{Ino: 9, RecLen: 12, NameLen: 4, FileType: 2}}, nil, "9 12 4 2"},
		{"%D without dirent", "%Dn", Problem{}, nil, "%Dn"},
		{"%Dn escapes", "%Dn", Problem{Dirent: &DirentInfo{Name: []byte{'a', 0, 0x1f, 0x7f, 0x80, 0xc1, 0xff}, NameLen: 7, RecLen: 16}}, nil,
			"a^@^_^?\x80M-AM-^?"},
		{"%Dn name_len", "%Dn", Problem{Dirent: &DirentInfo{Name: name("abcdef"), NameLen: 3, RecLen: 12}}, nil, "abc"},
		{"%Dn rec_len", "%Dn", Problem{Dirent: &DirentInfo{Name: name("abcdef"), NameLen: 6, RecLen: 4}}, nil, "abcd"},
		{"%Dn short buffer", "%Dn", Problem{Dirent: &DirentInfo{Name: name("ab"), NameLen: 200}}, nil, "ab"},
		{"%p special", "%p", Problem{Ino: 0}, nil, "<The NULL inode>"},
		{"%q special", "%q", Problem{Dir: 0}, nil, "<The NULL inode>"},
		{"%q is a lookup", "%q", Problem{Dir: 8}, nil, "???"},
		{"%Q journal", "%Q", Problem{Ino: 8}, nil, "<The journal inode>"},
		{"%Q special", "%Q", Problem{Ino: 1}, nil, "<The bad blocks inode>"},
		{"%Q root", "%Q", Problem{Ino: 2}, nil, "/"},
		{"%P special", "%P", Problem{Ino2: 0, Dirent: &DirentInfo{Ino: 10}}, nil, "<Reserved inode 10>"},
		{"%p nil namer", "%p", Problem{Ino: 12}, nil, "???"},
		{"%p namer", "%p", Problem{Ino: 12}, namer, "/dir"},
		{"%Q namer escapes", "%Q", Problem{Dir: 12, Ino: 13}, namer, "/dir/f^Ale"},
		{"%P namer", "%P", Problem{Ino2: 12, Dirent: &DirentInfo{Ino: 13}}, namer, "/dir/f^Ale"},
		{"%Q no dir", "%Q", Problem{Dir: 0, Ino: 13}, namer, "..."},
		{"%Q unknown", "%Q", Problem{Dir: 2, Ino: 99}, namer, "???"},
		{"truncated %I", "%I", Problem{Inode: dir}, nil, "%I"},
		{"truncated %D", "x%D", Problem{}, nil, "x%D"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := expandMsg(tt.msg, tt.p, tt.n); got != tt.want {
				t.Errorf("expand(%q) = %q, want %q", tt.msg, got, tt.want)
			}
		})
	}
}

// namerFunc adapts a function to Namer.
type namerFunc func(dir, ino uint32) string

func (f namerFunc) Path(dir, ino uint32) string { return f(dir, ino) }

func TestNamerArguments(t *testing.T) {
	type call struct{ dir, ino uint32 }
	var calls []call
	n := namerFunc(func(dir, ino uint32) string {
		calls = append(calls, call{dir, ino})
		return "x"
	})
	p := Problem{Ino: 20, Ino2: 21, Dir: 22, Dirent: &DirentInfo{Ino: 23}}
	expandMsg("%p %P %q %Q", p, n)
	want := []call{{20, 0}, {21, 23}, {22, 0}, {22, 20}}
	if len(calls) != len(want) {
		t.Fatalf("calls %v, want %v", calls, want)
	}
	for i := range want {
		if calls[i] != want[i] {
			t.Errorf("call %d = %v, want %v", i, calls[i], want[i])
		}
	}
}

func TestRecursionLimit(t *testing.T) {
	// Templates never nest this deep, but the expander must stop anyway.
	msg := strings.Repeat("@", 50) + "i"
	_ = expandMsg(msg, Problem{}, nil)
}

func FuzzExpand(f *testing.F) {
	for i := range defs {
		f.Add(defs[i].Msg, uint64(i), int64(i)-5, []byte("na\x00me"))
	}
	f.Add("%", uint64(0), int64(0), []byte{})
	f.Add("@", uint64(0), int64(0), []byte{})
	f.Add("%99999999999999999999b", uint64(0), int64(0), []byte{})
	f.Fuzz(func(t *testing.T, msg string, num uint64, bc int64, nm []byte) {
		p := Problem{Ino: uint32(num), Dir: uint32(num >> 32), Num: num, BlkCount: bc, Str: string(nm),
			Inode:  &InodeInfo{Mode: uint16(num), Mtime: int64(num)},
			Dirent: &DirentInfo{Name: nm, NameLen: uint8(num), RecLen: uint32(bc)}}
		out := expandMsg(msg, p, mapNamer{})
		if len(out) > 1<<20 {
			t.Fatalf("output of %d bytes", len(out))
		}
	})
}
