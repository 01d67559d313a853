package plot

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// svgSummary parses an SVG and counts circles per scatter series (by
// data-name), path points per line series, and collects the text.
func svgSummary(t *testing.T, b []byte) (circles map[string]int, texts []string) {
	t.Helper()
	circles = map[string]int{}
	d := xml.NewDecoder(bytes.NewReader(b))
	var stack []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			name := ""
			for _, a := range el.Attr {
				if a.Name.Local == "data-name" {
					name = a.Value
				}
			}
			if el.Name.Local == "circle" && len(stack) > 0 && stack[len(stack)-1] != "" {
				circles[stack[len(stack)-1]]++
			}
			stack = append(stack, name)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if s := strings.TrimSpace(string(el)); s != "" {
				texts = append(texts, s)
			}
		}
	}
	return circles, texts
}

func TestScatterAndLine(t *testing.T) {
	var x, y []float64
	for i := 0; i < 300; i++ {
		x = append(x, float64(i))
		y = append(y, float64(i%50)*3)
	}
	fig := &Figure{Title: "T & <co>", Cols: 1, Panels: []Panel{
		{Title: "Offsets", X: Axis{Label: "time (s)"}, Y: Axis{Label: "offset (MiB)"},
			Series: []Series{{Name: "run a", Kind: Scatter, X: x, Y: y}}},
		{Title: "Rate", X: Axis{Label: "time (s)", Min: 0, Max: 300}, Y: Axis{Label: "MiB/s"},
			Series: []Series{{Name: "run a", Kind: Line, X: x, Y: y}, {Name: "run b", Kind: Line, X: x[:10], Y: y[:10]}}},
	}}
	var b bytes.Buffer
	st, err := fig.WriteSVG(&b)
	if err != nil {
		t.Fatal(err)
	}
	circles, texts := svgSummary(t, b.Bytes())
	if circles["run a"] != 300 || st.Drawn[0][0] != 300 {
		t.Errorf("scatter drew %d circles (stats %v), want 300", circles["run a"], st.Drawn)
	}
	if st.Drawn[1][0] != 300 || st.Drawn[1][1] != 10 {
		t.Errorf("line points %v", st.Drawn[1])
	}
	joined := strings.Join(texts, "|")
	for _, want := range []string{"T & <co>", "Offsets", "Rate", "time (s)", "offset (MiB)", "MiB/s", "run a", "run b", "|0|", "|300|"} {
		if !strings.Contains("|"+joined+"|", want) {
			t.Errorf("text %q missing from %s", want, joined)
		}
	}
}

func TestThinningAndDeterminism(t *testing.T) {
	x := make([]float64, 100000)
	y := make([]float64, 100000)
	for i := range x {
		x[i] = float64(i % 7)
		y[i] = float64(i % 5)
	}
	fig := &Figure{Panels: []Panel{{Series: []Series{{Name: "dense", X: x, Y: y}}}}}
	var a, b bytes.Buffer
	st, _ := fig.WriteSVG(&a)
	fig.WriteSVG(&b)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("rendering is not deterministic")
	}
	if st.Drawn[0][0] != 35 {
		t.Errorf("drew %d points, want the 35 distinct pixels", st.Drawn[0][0])
	}
}

func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 1, "0.0 0.2 0.4 0.6 0.8 1.0"},
		{0, 97, "0 20 40 60 80 100"},
		{3, 3, "2.5 3.0 3.5"},
	} {
		r := Axis{}.resolve([]Series{{X: []float64{tc.lo, tc.hi}}}, func(s *Series) []float64 { return s.X })
		var got []string
		for _, v := range r.ticks {
			got = append(got, r.label(v))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%v..%v: ticks %v, want %s", tc.lo, tc.hi, got, tc.want)
		}
	}
}
