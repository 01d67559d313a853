package dirhash

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// needTool returns the path of an e2fsprogs binary. Without it the test
// fails in CI (env CI set) and is skipped elsewhere.
func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found (e2fsprogs is required in CI): %v", name, err)
		}
		t.Skipf("%s not found: %v", name, err)
	}
	return p
}

// seedFromUUID reads a UUID string the way s_hash_seed is stored: 16 bytes,
// taken as four little-endian words.
func seedFromUUID(t testing.TB, s string) [4]uint32 {
	t.Helper()
	var raw []byte
	for i := 0; i < len(s); {
		if s[i] == '-' {
			i++
			continue
		}
		v, err := strconv.ParseUint(s[i:i+2], 16, 8)
		if err != nil {
			t.Fatalf("bad uuid %q: %v", s, err)
		}
		raw = append(raw, byte(v))
		i += 2
	}
	if len(raw) != 16 {
		t.Fatalf("bad uuid %q", s)
	}
	var seed [4]uint32
	for i := range seed {
		seed[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	return seed
}

// Known answers produced by debugfs 1.47 "dx_hash", kept so the algorithms
// are pinned even where e2fsprogs is not installed.
func TestKnownAnswers(t *testing.T) {
	nonzero := [4]uint32{0x67452301, 0xefcdab89, 0x67452301, 0xefcdab89} // 01234567-89ab-cdef-0123-456789abcdef
	tests := []struct {
		v            Version
		name         string
		seed         *[4]uint32
		major, minor uint32
	}{
		{Legacy, "hello", nil, 0x32252546, 0},
		{HalfMD4, "hello", nil, 0x1746da32, 0x420013b5},
		{TEA, "hello", nil, 0x6f5bb1a8, 0x231917c2},
		{HalfMD4, "hello", &nonzero, 0xa26e4a80, 0x97e5b7f7},
		{HalfMD4, "hello", &[4]uint32{}, 0x1746da32, 0x420013b5},
		{LegacyUnsigned, "hello", nil, 0x32252546, 0},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%v/%s", tc.v, tc.name), func(t *testing.T) {
			major, minor, err := Hash(tc.v, []byte(tc.name), tc.seed)
			if err != nil {
				t.Fatal(err)
			}
			if major != tc.major || minor != tc.minor {
				t.Errorf("got %#x/%#x, want %#x/%#x", major, minor, tc.major, tc.minor)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	if _, _, err := Hash(SipHash, []byte("x"), nil); !errors.Is(err, ErrNeedKey) {
		t.Errorf("siphash: err = %v, want ErrNeedKey", err)
	}
	if _, _, err := Hash(7, []byte("x"), nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("version 7: err = %v, want ErrUnsupported", err)
	}
}

func TestVersion(t *testing.T) {
	for v, want := range map[Version]string{Legacy: "legacy", HalfMD4Unsigned: "half_md4_unsigned", SipHash: "siphash", 9: "HASHALG_9"} {
		if got := v.String(); got != want {
			t.Errorf("Version(%d).String() = %q, want %q", uint8(v), got, want)
		}
	}
	for v, want := range map[Version]Version{Legacy: LegacyUnsigned, HalfMD4: HalfMD4Unsigned, TEA: TEAUnsigned, TEAUnsigned: TEAUnsigned, SipHash: SipHash} {
		if got := v.Unsigned(); got != want {
			t.Errorf("%v.Unsigned() = %v, want %v", v, got, want)
		}
	}
}

// The kernel never hands out the EOF cookie as a major hash.
func TestFinish(t *testing.T) {
	for in, want := range map[uint32]uint32{0: 0, 1: 0, 0x12345677: 0x12345676, 0xfffffffd: 0xfffffffc, 0xfffffffe: 0xfffffffc, 0xffffffff: 0xfffffffc} {
		if got := finish(in); got != want {
			t.Errorf("finish(%#x) = %#x, want %#x", in, got, want)
		}
	}
}

// Signed and unsigned variants agree on ASCII and differ once a byte has the
// high bit set.
func TestSignedness(t *testing.T) {
	for _, pair := range [][2]Version{{Legacy, LegacyUnsigned}, {HalfMD4, HalfMD4Unsigned}, {TEA, TEAUnsigned}} {
		a1, b1, _ := Hash(pair[0], []byte("plain-ascii"), nil)
		a2, b2, _ := Hash(pair[1], []byte("plain-ascii"), nil)
		if a1 != a2 || b1 != b2 {
			t.Errorf("%v/%v differ on ASCII", pair[0], pair[1])
		}
		a1, _, _ = Hash(pair[0], []byte("caf\xc3\xa9"), nil)
		a2, _, _ = Hash(pair[1], []byte("caf\xc3\xa9"), nil)
		if a1 == a2 {
			t.Errorf("%v/%v agree on high bytes", pair[0], pair[1])
		}
	}
}

// Reference vectors from the SipHash paper (appendix A): key 00..0f,
// messages 00, 00 01, ... of length 0..63; the first and the 64-byte ones
// below are from the published vector table.
func TestSipHash24(t *testing.T) {
	k0 := uint64(0x0706050403020100)
	k1 := uint64(0x0f0e0d0c0b0a0908)
	msg := make([]byte, 64)
	for i := range msg {
		msg[i] = byte(i)
	}
	for n, want := range map[int]uint64{0: 0x726fdb47dd0e0e31, 1: 0x74f839c593dc67fd, 15: 0xa129ca6149be45e5, 63: 0x958a324ceb064572} {
		if got := sipHash24(k0, k1, msg[:n]); got != want {
			t.Errorf("siphash len %d = %#x, want %#x", n, got, want)
		}
	}
	var key [16]byte
	copy(key[:], msg)
	major, minor := SipHashKeyed(&key, msg[:15])
	if major != 0xa129ca60 || minor != 0x49be45e5 {
		t.Errorf("SipHashKeyed = %#x/%#x", major, minor)
	}
}

func TestNoAllocs(t *testing.T) {
	name := bytes.Repeat([]byte("n\xe9"), 100)
	seed := [4]uint32{1, 2, 3, 4}
	for v := Legacy; v <= TEAUnsigned; v++ {
		if n := testing.AllocsPerRun(100, func() { Hash(v, name, &seed) }); n != 0 {
			t.Errorf("%v: %v allocs per call", v, n)
		}
	}
}

func BenchmarkHash(b *testing.B) {
	name := []byte("a-typical-file-name.txt")
	var seed [4]uint32
	for v := Legacy; v <= TEA; v++ {
		b.Run(v.String(), func(b *testing.B) {
			for b.Loop() {
				Hash(v, name, &seed)
			}
		})
	}
}

// oracleNames returns names of the interesting lengths plus random ones,
// avoiding bytes the debugfs command parser treats specially (whitespace,
// quotes, backslash, NUL) and a leading '-' that dx_hash would take as an
// option.
func oracleNames() [][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	randByte := func(high bool) byte {
		for {
			b := byte(r.IntN(256))
			if !high && b >= 0x80 {
				continue
			}
			if b > ' ' && b != 0x7f && b != '"' && b != '\'' && b != '\\' && b != '#' {
				return b
			}
		}
	}
	var names [][]byte
	lengths := []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 100, 128, 200, 254, 255}
	for range 40 {
		lengths = append(lengths, 1+r.IntN(255))
	}
	for _, n := range lengths {
		for _, high := range []bool{false, true} {
			name := make([]byte, n)
			for i := range name {
				name[i] = randByte(high)
			}
			if name[0] == '-' {
				name[0] = 'x'
			}
			names = append(names, name)
		}
	}
	names = append(names, []byte("a"), []byte("\xff"), []byte("\x80"), []byte("lost+found"), []byte("caf\xc3\xa9"))
	return names
}

var hashLine = regexp.MustCompile(`(?m)^Hash of .* is 0x([0-9a-f]+) \(minor 0x([0-9a-f]+)\)$`)

// TestDebugfsOracle compares every algorithm, both signednesses, with a zero
// and a non-zero seed, against "debugfs dx_hash".
func TestDebugfsOracle(t *testing.T) {
	debugfs := needTool(t, "debugfs")
	names := oracleNames()
	for _, uuid := range []string{"00000000-0000-0000-0000-000000000000", "8f3a6c1e-52b4-4d7e-9a0b-c1d2e3f40516"} {
		seed := seedFromUUID(t, uuid)
		for v := Legacy; v <= TEAUnsigned; v++ {
			t.Run(fmt.Sprintf("%v/%s", v, uuid[:8]), func(t *testing.T) {
				var cmds bytes.Buffer
				for _, name := range names {
					fmt.Fprintf(&cmds, "dx_hash -h %d -s %s %s\n", v, uuid, name)
				}
				cmdFile := filepath.Join(t.TempDir(), "cmds")
				if err := os.WriteFile(cmdFile, cmds.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				out, err := exec.Command(debugfs, "-f", cmdFile).CombinedOutput()
				if err != nil {
					t.Fatalf("debugfs: %v\n%s", err, out)
				}
				m := hashLine.FindAllSubmatch(out, -1)
				if len(m) != len(names) {
					t.Fatalf("debugfs printed %d hashes for %d names:\n%s", len(m), len(names), out)
				}
				for i, name := range names {
					wantMajor, _ := strconv.ParseUint(string(m[i][1]), 16, 32)
					wantMinor, _ := strconv.ParseUint(string(m[i][2]), 16, 32)
					major, minor, err := Hash(v, name, &seed)
					if err != nil {
						t.Fatal(err)
					}
					if major != uint32(wantMajor) || minor != uint32(wantMinor) {
						t.Errorf("name %q (len %d): got %#x/%#x, debugfs %#x/%#x", name, len(name), major, minor, wantMajor, wantMinor)
					}
				}
			})
		}
	}
}

// FuzzHash checks that Hash never panics on any name and version, and that
// the signed and unsigned variants agree on names without high bytes.
func FuzzHash(f *testing.F) {
	f.Add([]byte("hello"), uint8(1), uint32(0))
	f.Add(bytes.Repeat([]byte{0xff}, 255), uint8(5), uint32(7))
	f.Fuzz(func(t *testing.T, name []byte, v uint8, s uint32) {
		seed := [4]uint32{s, ^s, s * 3, 0}
		major, _, err := Hash(Version(v), name, &seed)
		if err != nil {
			return
		}
		if major&1 != 0 || major == eof32 {
			t.Fatalf("major %#x", major)
		}
		if v <= uint8(TEA) && bytes.IndexFunc(name, func(r rune) bool { return r >= 0x80 || r == 0xfffd }) < 0 {
			m2, n2, _ := Hash(Version(v).Unsigned(), name, &seed)
			m1, n1, _ := Hash(Version(v), name, &seed)
			if m1 != m2 || n1 != n2 {
				t.Fatalf("signed and unsigned differ on %q", name)
			}
		}
	})
}
