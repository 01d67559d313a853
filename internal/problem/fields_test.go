package problem

import "testing"

func TestFields(t *testing.T) {
	for _, tc := range []struct {
		code Code
		want Field
	}{
		{PR_1_PASS_HEADER, 0},
		// "@i %i, i_size is %Is, @s %N.  " names the inode.
		{PR_1_BAD_I_SIZE, FieldIno | FieldInode},
		// "@E has @D/unused @i %Di.  " expands @E to "@e '%Dn' in %p (%i)".
		{PR_2_UNUSED_INODE, FieldDirent | FieldPath | FieldIno},
		{Code(0x7fffff), 0},
	} {
		if got := Fields(tc.code); got != tc.want {
			t.Errorf("Fields(%v) = %b, want %b (msg %q)", tc.code, got, tc.want, defs[func() int { i, _ := index(tc.code); return i }()%len(defs)].Msg)
		}
	}
}

// TestObserve checks that Observe sees, in order, exactly what is printed.
func TestObserve(t *testing.T) {
	var out []byte
	var got []Report
	w := writerFunc(func(p []byte) (int, error) { out = append(out, p...); return len(p), nil })
	r := NewReporter(w, Options{Mode: ModeNo, Observe: func(rep Report) { got = append(got, rep) }})
	r.Header(PR_1_PASS_HEADER)
	r.Fix(Problem{Code: PR_1_BAD_I_SIZE, Ino: 12, Num: 4096, Inode: &InodeInfo{Size: 1}})
	r.Fix(Problem{Code: PR_1_ILLEGAL_BLOCK_NUM, Ino: 13, Blk: 99999, BlkCount: 3})
	r.EndLatch(LatchBlock)
	var re []byte
	for _, g := range got {
		re = append(re, g.Message...)
		re = append(re, g.AnswerText...)
	}
	if string(re) != string(out) {
		t.Errorf("observed %q, printed %q", re, out)
	}
	if len(got) < 4 || got[1].Problem.Code != PR_1_BAD_I_SIZE || got[1].AnswerText != "Fix? no\n\n" || got[1].Yes || !got[1].Asked {
		t.Errorf("reports: %+v", got)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
