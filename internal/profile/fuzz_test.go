package profile

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParse: any bytes parse or give a SyntaxError, never a panic, and a
// parsed profile answers lookups.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"[options]\n\tbroken_system_clock = true\n[problems]\n\t0x05000f = {\n\t\tforce_no = 1\n\t}\n",
		"[\"a]b\"]*\nx = \"\\\nq",
		"[a]\ns =\n{\n t* = {\n}*\n}\n\"k\\",
		"junk\n[ a ] x\r\nk; = \"v\r\n",
		"[a]\nx = " + strings.Repeat("v", chunkSize) + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz", bytes.NewReader(data))
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("error %T: %v", err, err)
			}
			return
		}
		for _, names := range [][]string{{"a", "x"}, {"options", "broken_system_clock"}, {"problems", "0x05000f", "force_no"}, {"a", "s", "t"}} {
			p.Value(names...)
			p.Bool(false, names...)
			p.Int(0, names...)
			p.Uint(0, names...)
		}
	})
}
