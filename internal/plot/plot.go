// Package plot renders small scientific figures as SVG by hand: a grid of
// panels, each with a title, labelled axes with "nice" ticks, scatter and
// line series, and a legend. It uses the standard library only.
//
// Rendering is deterministic (same figure, same bytes), so output can be
// golden-tested. Scatter series are thinned to one point per output pixel
// and series, which keeps a million-event trace a few hundred kilobytes
// without changing the picture; Series.Drawn reports what was kept.
package plot

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Kind is how a series is drawn.
type Kind int

// Series kinds.
const (
	Scatter Kind = iota // one dot per point
	Line                // points joined in order
)

// Series is one data set of a panel. X and Y have the same length.
type Series struct {
	Name  string
	Kind  Kind
	X, Y  []float64
	Color string // CSS colour; empty: the palette colour of its index
}

// Axis describes one axis. When Min == Max the range is taken from the
// data (and widened to nice tick values).
type Axis struct {
	Label    string
	Min, Max float64
}

// Panel is one plot.
type Panel struct {
	Title  string
	X, Y   Axis
	Series []Series
}

// Figure is a grid of panels filled row by row.
type Figure struct {
	Title  string
	Cols   int // panels per row (default 1)
	Panels []Panel
	// PanelW and PanelH are the size of one panel in pixels, margins
	// included (defaults 640×260).
	PanelW, PanelH int
}

// Palette holds the default series colours (colour-blind safe, after
// Okabe and Ito).
var Palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"}

// Layout constants, in pixels.
const (
	marginL   = 78
	marginR   = 18
	marginT   = 50
	marginB   = 46
	titleH    = 34
	fontAxis  = 12
	fontTitle = 14
	dotR      = 2
)

// Stats reports what WriteSVG drew, per panel and series, for tests and
// captions.
type Stats struct {
	Drawn [][]int // points drawn per panel and series
}

// WriteSVG renders the figure.
func (f *Figure) WriteSVG(w io.Writer) (Stats, error) {
	cols := max(f.Cols, 1)
	pw, ph := f.PanelW, f.PanelH
	if pw <= 0 {
		pw = 640
	}
	if ph <= 0 {
		ph = 260
	}
	rows := (len(f.Panels) + cols - 1) / cols
	top := 0
	if f.Title != "" {
		top = titleH
	}
	W, H := cols*pw, top+rows*ph
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`+"\n", W, H, W, H)
	fmt.Fprintf(bw, `<rect width="%d" height="%d" fill="white"/>`+"\n", W, H)
	if f.Title != "" {
		fmt.Fprintf(bw, `<text x="%d" y="22" font-size="16" font-weight="bold" text-anchor="middle">%s</text>`+"\n", W/2, esc(f.Title))
	}
	var st Stats
	for i := range f.Panels {
		x0, y0 := (i%cols)*pw, top+(i/cols)*ph
		st.Drawn = append(st.Drawn, f.Panels[i].render(bw, i, x0, y0, pw, ph))
	}
	fmt.Fprintln(bw, "</svg>")
	return st, bw.Flush()
}

// render draws panel p in the box (x0, y0, w, h) and returns the points
// drawn per series.
func (p *Panel) render(w *bufio.Writer, idx, x0, y0, pw, ph int) []int {
	left, top := float64(x0+marginL), float64(y0+marginT)
	width, height := float64(pw-marginL-marginR), float64(ph-marginT-marginB)
	xr := p.X.resolve(p.Series, func(s *Series) []float64 { return s.X })
	yr := p.Y.resolve(p.Series, func(s *Series) []float64 { return s.Y })
	sx := func(v float64) float64 { return left + (v-xr.min)/(xr.max-xr.min)*width }
	sy := func(v float64) float64 { return top + height - (v-yr.min)/(yr.max-yr.min)*height }

	fmt.Fprintf(w, `<g class="panel" id="panel%d">`+"\n", idx)
	if p.Title != "" {
		fmt.Fprintf(w, `<text x="%s" y="%d" font-size="%d" font-weight="bold" text-anchor="middle">%s</text>`+"\n",
			num(left+width/2), y0+18, fontTitle, esc(p.Title))
	}
	// Grid and ticks.
	fmt.Fprintf(w, `<g class="grid" stroke="#e4e4e4" stroke-width="1">`+"\n")
	for _, t := range xr.ticks {
		fmt.Fprintf(w, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", num(sx(t)), num(top), num(sx(t)), num(top+height))
	}
	for _, t := range yr.ticks {
		fmt.Fprintf(w, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", num(left), num(sy(t)), num(left+width), num(sy(t)))
	}
	fmt.Fprintln(w, "</g>")
	fmt.Fprintf(w, `<rect class="frame" x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#444"/>`+"\n",
		num(left), num(top), num(width), num(height))
	fmt.Fprintf(w, `<g class="xticks" font-size="%d" text-anchor="middle">`+"\n", fontAxis-1)
	for _, t := range xr.ticks {
		fmt.Fprintf(w, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#444"/><text x="%s" y="%s">%s</text>`+"\n",
			num(sx(t)), num(top+height), num(sx(t)), num(top+height+4), num(sx(t)), num(top+height+16), esc(xr.label(t)))
	}
	fmt.Fprintln(w, "</g>")
	fmt.Fprintf(w, `<g class="yticks" font-size="%d" text-anchor="end">`+"\n", fontAxis-1)
	for _, t := range yr.ticks {
		fmt.Fprintf(w, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#444"/><text x="%s" y="%s">%s</text>`+"\n",
			num(left-4), num(sy(t)), num(left), num(sy(t)), num(left-6), num(sy(t)+4), esc(yr.label(t)))
	}
	fmt.Fprintln(w, "</g>")
	if p.X.Label != "" {
		fmt.Fprintf(w, `<text class="xlabel" x="%s" y="%s" font-size="%d" text-anchor="middle">%s</text>`+"\n",
			num(left+width/2), num(top+height+36), fontAxis, esc(p.X.Label))
	}
	if p.Y.Label != "" {
		cx, cy := float64(x0+16), top+height/2
		fmt.Fprintf(w, `<text class="ylabel" x="%s" y="%s" font-size="%d" text-anchor="middle" transform="rotate(-90 %s %s)">%s</text>`+"\n",
			num(cx), num(cy), fontAxis, num(cx), num(cy), esc(p.Y.Label))
	}

	// Data, clipped to the frame.
	fmt.Fprintf(w, `<clipPath id="clip%d"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath>`+"\n",
		idx, num(left), num(top), num(width), num(height))
	drawn := make([]int, len(p.Series))
	for si := range p.Series {
		s := &p.Series[si]
		color := s.Color
		if color == "" {
			color = Palette[si%len(Palette)]
		}
		n := min(len(s.X), len(s.Y))
		switch s.Kind {
		case Scatter:
			fmt.Fprintf(w, `<g class="series scatter" data-name="%s" data-n="%d" fill="%s" fill-opacity="0.75" clip-path="url(#clip%d)">`+"\n",
				esc(s.Name), n, color, idx)
			seen := make(map[[2]int32]bool)
			for i := 0; i < n; i++ {
				if !finite(s.X[i]) || !finite(s.Y[i]) {
					continue
				}
				px, py := sx(s.X[i]), sy(s.Y[i])
				key := [2]int32{int32(math.Round(px)), int32(math.Round(py))}
				if seen[key] {
					continue
				}
				seen[key] = true
				drawn[si]++
				fmt.Fprintf(w, `<circle cx="%s" cy="%s" r="%s"/>`+"\n", num(px), num(py), num(dotR))
			}
			fmt.Fprintln(w, "</g>")
		case Line:
			var b strings.Builder
			pen := false
			for i := 0; i < n; i++ {
				if !finite(s.X[i]) || !finite(s.Y[i]) {
					pen = false
					continue
				}
				if pen {
					b.WriteString(" L")
				} else {
					b.WriteString(" M")
					pen = true
				}
				b.WriteString(num(sx(s.X[i])) + " " + num(sy(s.Y[i])))
				drawn[si]++
			}
			fmt.Fprintf(w, `<path class="series line" data-name="%s" data-n="%d" fill="none" stroke="%s" stroke-width="1.6" stroke-linejoin="round" clip-path="url(#clip%d)" d="%s"/>`+"\n",
				esc(s.Name), n, color, idx, strings.TrimSpace(b.String()))
		}
	}
	p.legend(w, left, top, width)
	fmt.Fprintln(w, "</g>")
	return drawn
}

// legend draws the series names in one row between the panel title and
// the frame, right-aligned, so it never hides data.
func (p *Panel) legend(w *bufio.Writer, left, top, width float64) {
	type item struct {
		i int
		w float64
	}
	var items []item
	total := 0.0
	for i, s := range p.Series {
		if s.Name != "" {
			iw := float64(len([]rune(s.Name)))*6.4 + 30
			items = append(items, item{i, iw})
			total += iw
		}
	}
	if len(items) == 0 {
		return
	}
	x := max(left, left+width-total)
	y := top - 9
	fmt.Fprintf(w, `<g class="legend" font-size="%d">`+"\n", fontAxis-1)
	for _, it := range items {
		s := p.Series[it.i]
		color := s.Color
		if color == "" {
			color = Palette[it.i%len(Palette)]
		}
		if s.Kind == Scatter {
			fmt.Fprintf(w, `<circle cx="%s" cy="%s" r="4" fill="%s"/>`, num(x+8), num(y-4), color)
		} else {
			fmt.Fprintf(w, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2.5"/>`, num(x), num(y-4), num(x+16), num(y-4), color)
		}
		fmt.Fprintf(w, `<text x="%s" y="%s">%s</text>`+"\n", num(x+22), num(y), esc(s.Name))
		x += it.w
	}
	fmt.Fprintln(w, "</g>")
}

// axisRange is a resolved axis: its limits and tick positions.
type axisRange struct {
	min, max, step float64
	ticks          []float64
}

func (a Axis) resolve(series []Series, get func(*Series) []float64) axisRange {
	lo, hi := a.Min, a.Max
	if lo == hi {
		lo, hi = math.Inf(1), math.Inf(-1)
		for i := range series {
			for _, v := range get(&series[i]) {
				if finite(v) {
					lo, hi = min(lo, v), max(hi, v)
				}
			}
		}
		if lo > hi {
			lo, hi = 0, 1
		}
		if lo == hi {
			lo, hi = lo-0.5, hi+0.5
			if lo > -0.5 && lo < 0 {
				lo, hi = 0, 1
			}
		}
		step := niceStep((hi - lo) / 5)
		lo = math.Floor(lo/step) * step
		hi = math.Ceil(hi/step) * step
	}
	r := axisRange{min: lo, max: hi, step: niceStep((hi - lo) / 5)}
	for t := math.Ceil(lo/r.step) * r.step; t <= hi+r.step*1e-9; t += r.step {
		r.ticks = append(r.ticks, t)
		if len(r.ticks) > 50 {
			break
		}
	}
	return r
}

// label formats a tick value with just enough decimals for the step.
func (r axisRange) label(v float64) string {
	if math.Abs(v) < r.step*1e-6 {
		v = 0
	}
	dec := 0
	for s := r.step; s < 1-1e-9 && dec < 6; s *= 10 {
		dec++
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(x)))
	switch f := x / e; {
	case f <= 1:
		return e
	case f <= 2:
		return 2 * e
	case f <= 5:
		return 5 * e
	}
	return 10 * e
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// num formats a coordinate with at most one decimal.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

var xmlEsc = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func esc(s string) string { return xmlEsc.Replace(s) }
