// Command iowatch plots block I/O traces the way seekwatcher does: disk
// offset against time, throughput and seeks per second, for one run or two
// (overlaid, or side by side with -s) on the same axes.
//
//	iowatch [-s] [-o out.svg] [-t title] [-b bin_ms] [-d device] trace1 [trace2]
//	iowatch [-s] [-o out.svg] [-w saved.iotrace] [-d device] -r "e2fsck -fn img" [trace2]
//
// A trace is an iotrace file (written by iotrace.Recorder, e.g. gofsck -E
// trace=FILE), blkparse's default text output (`blkparse -i dev`), or
// strace output made with iotrace.StraceArgs (then -d names the device).
// -r runs a command under strace and records its pread64/pwrite64 calls on
// the device (-d, or the command's last argument naming an existing file);
// -w saves that recording in the iotrace format.
package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gofsck/internal/getopt"
	"gofsck/internal/iotrace"
	"gofsck/internal/plot"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

const usageText = `Usage: %s [-s] [-o out.svg] [-t title] [-b bin_ms] [-d device] [-w saved.iotrace] [-r "command"] [trace ...]
  -o file     SVG to write (default iowatch.svg)
  -t title    figure title
  -s          two runs side by side instead of overlaid
  -b ms       width of the throughput and seek bins (default: 1/60 of the run, at least 50 ms)
  -r command  run the command under strace and record its I/O on the device
  -d device   the device or image whose I/O is traced (-r, strace files)
  -w file     save the -r recording as an iotrace file
`

type options struct {
	out, title, cmd, device, save string
	side                          bool
	bin                           time.Duration
	traces                        []string
}

func run(args []string, stdout, stderr io.Writer) int {
	prog := filepath.Base(args[0])
	opts, operands, err := getopt.Parse(prog, args[1:], "o:t:sb:r:d:w:h")
	if err != nil {
		fmt.Fprintln(stderr, err)
		fmt.Fprintf(stderr, usageText, prog)
		return 2
	}
	o := options{out: "iowatch.svg", traces: operands}
	for _, op := range opts {
		switch op.Name {
		case 'o':
			o.out = op.Arg
		case 't':
			o.title = op.Arg
		case 's':
			o.side = true
		case 'b':
			ms, err := strconv.ParseFloat(op.Arg, 64)
			if err != nil || !(ms > 0) || ms > 3.6e6 {
				fmt.Fprintf(stderr, "%s: bad bin width '%s'\n", prog, op.Arg)
				return 2
			}
			o.bin = time.Duration(ms * float64(time.Millisecond))
		case 'r':
			o.cmd = op.Arg
		case 'd':
			o.device = op.Arg
		case 'w':
			o.save = op.Arg
		case 'h':
			fmt.Fprintf(stdout, usageText, prog)
			return 0
		}
	}
	var traces []*iotrace.Trace
	if o.cmd != "" {
		t, err := record(o, stdout, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return 1
		}
		if o.save != "" {
			if err := t.Save(o.save); err != nil {
				fmt.Fprintf(stderr, "%s: %v\n", prog, err)
				return 1
			}
		}
		traces = append(traces, t)
	}
	for _, p := range o.traces {
		t, err := load(p, o.device)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prog, err)
			return 1
		}
		traces = append(traces, t)
	}
	if len(traces) == 0 || len(traces) > 2 {
		fmt.Fprintf(stderr, "%s: give one or two traces (or -r and at most one trace)\n", prog)
		fmt.Fprintf(stderr, usageText, prog)
		return 2
	}
	fig := Figure(traces, o.title, o.side, o.bin)
	f, err := os.Create(o.out)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	if _, err := fig.WriteSVG(f); err != nil {
		f.Close()
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	if err := f.Close(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	for _, t := range traces {
		b, n := t.Totals()
		fmt.Fprintf(stdout, "%s: %d I/Os, %.1f MiB, %d seeks, %.3f s\n", t.Name, n, float64(b)/(1<<20),
			iotrace.Seeks(t.Events), t.Duration().Seconds())
	}
	return 0
}

// load reads a trace file of any supported format.
func load(path, device string) (*iotrace.Trace, error) {
	t, err := iotrace.Load(path)
	if err == nil || !errors.Is(err, iotrace.ErrFormat) {
		return t, err
	}
	f, ferr := os.Open(path)
	if ferr != nil {
		return nil, ferr
	}
	defer f.Close()
	dev := ""
	if device != "" {
		dev = canonical(device)
	}
	st, serr := iotrace.ParseStrace(f, dev)
	if serr != nil {
		return nil, fmt.Errorf("%s: not an iotrace, blkparse or strace trace", path)
	}
	st.Name = filepath.Base(path)
	return st, nil
}

func canonical(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}

// record runs o.cmd under strace and returns its I/O on the device.
func record(o options, stdout, stderr io.Writer) (*iotrace.Trace, error) {
	words := strings.Fields(o.cmd)
	if len(words) == 0 {
		return nil, errors.New("empty command")
	}
	device := o.device
	if device == "" {
		for i := len(words) - 1; i > 0; i-- {
			if fi, err := os.Stat(words[i]); err == nil && !fi.IsDir() {
				device = words[i]
				break
			}
		}
		if device == "" {
			return nil, errors.New("cannot tell which argument is the device; use -d")
		}
	}
	strace, err := exec.LookPath("strace")
	if err != nil {
		return nil, errors.New("-r needs strace (apt-get install strace)")
	}
	tmp, err := os.CreateTemp("", "iowatch-*.strace")
	if err != nil {
		return nil, err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	args := append(append([]string{}, iotrace.StraceArgs...), "-o", tmp.Name(), "--")
	args = append(args, words...)
	c := exec.Command(strace, args...)
	c.Stdout, c.Stderr = stdout, stderr
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return nil, err
		}
		fmt.Fprintf(stderr, "iowatch: %s: %v\n", words[0], err)
	}
	f, err := os.Open(tmp.Name())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := iotrace.ParseStrace(f, canonical(device))
	if err != nil {
		return nil, err
	}
	t.Name = o.cmd
	if fi, err := os.Stat(device); err == nil && fi.Mode().IsRegular() {
		t.DeviceSize = fi.Size()
	}
	return t, nil
}

// Figure builds the three seekwatcher views of the traces.
func Figure(traces []*iotrace.Trace, title string, side bool, bin time.Duration) *plot.Figure {
	var dur time.Duration
	var maxOff int64
	minOff := int64(math.MaxInt64)
	for _, t := range traces {
		dur = max(dur, t.Duration())
		for _, e := range t.Events {
			maxOff = max(maxOff, e.Off+int64(e.Len))
			minOff = min(minOff, e.Off)
		}
	}
	if minOff > maxOff {
		minOff = 0
	}
	if bin <= 0 {
		bin = defaultBin(dur)
	}
	unit, unitName := float64(1<<20), "MiB"
	if maxOff >= 4<<30 {
		unit, unitName = 1<<30, "GiB"
	}
	// Time in seconds, or milliseconds for runs shorter than 2 s.
	tunit, tname := 1.0, "s"
	if dur < 2*time.Second {
		tunit, tname = 1e-3, "ms"
	}
	secs := dur.Seconds() / tunit
	tx := plot.Axis{Label: "time (" + tname + ")", Min: 0, Max: max(secs, 1e-3) * 1.02}
	// The offset axis spans the offsets touched (as seekwatcher's does),
	// not the whole device, so clustered I/O stays readable.
	offAxis := plot.Axis{Label: "disk offset (" + unitName + ")"}
	span := float64(maxOff-minOff) / unit
	offAxis.Min = max(0, float64(minOff)/unit-span*0.03)
	offAxis.Max = float64(maxOff)/unit + span*0.03
	if offAxis.Max <= offAxis.Min {
		offAxis.Max = offAxis.Min + 1
	}
	type series struct{ off, tput, seeks plot.Series }
	var ss []series
	var maxTput, maxSeeks float64
	for i, t := range traces {
		color := plot.Palette[i%len(plot.Palette)]
		bytes, n := t.Totals()
		name := fmt.Sprintf("%s (%d I/Os, %s)", shortName(t.Name), n, sizeText(bytes))
		s := series{
			off:   plot.Series{Name: name, Kind: plot.Scatter, Color: color},
			tput:  plot.Series{Name: shortName(t.Name), Kind: plot.Line, Color: color},
			seeks: plot.Series{Name: shortName(t.Name), Kind: plot.Line, Color: color},
		}
		for _, e := range t.Events {
			s.off.X = append(s.off.X, e.Start.Seconds()/tunit)
			s.off.Y = append(s.off.Y, float64(e.Off)/unit)
		}
		b := t.Bin(bin, 4000)
		w := b.Width.Seconds()
		for k := range b.Bytes {
			// Step plot: each bin's value held across the bin.
			x0, x1 := float64(k)*w/tunit, float64(k+1)*w/tunit
			mbps := float64(b.Bytes[k]) / (1 << 20) / w
			sps := float64(b.Seeks[k]) / w
			s.tput.X = append(s.tput.X, x0, x1)
			s.tput.Y = append(s.tput.Y, mbps, mbps)
			s.seeks.X = append(s.seeks.X, x0, x1)
			s.seeks.Y = append(s.seeks.Y, sps, sps)
			maxTput, maxSeeks = max(maxTput, mbps), max(maxSeeks, sps)
		}
		ss = append(ss, s)
	}
	binLabel := fmt.Sprintf(" (per %s)", bin)
	tputAxis := plot.Axis{Label: "throughput (MiB/s)", Min: 0, Max: niceMax(maxTput)}
	seekAxis := plot.Axis{Label: "seeks per second", Min: 0, Max: niceMax(maxSeeks)}
	fig := &plot.Figure{Title: title, PanelW: 760, PanelH: 270}
	if side && len(traces) == 2 {
		fig.Cols, fig.PanelW = 2, 620
		for _, row := range []string{"off", "tput", "seeks"} {
			for i, s := range ss {
				p := plot.Panel{X: tx}
				label := shortName(traces[i].Name)
				switch row {
				case "off":
					p.Title, p.Y, p.Series = label+": disk offset", offAxis, []plot.Series{s.off}
				case "tput":
					p.Title, p.Y, p.Series = label+": throughput"+binLabel, tputAxis, []plot.Series{s.tput}
				case "seeks":
					p.Title, p.Y, p.Series = label+": seeks"+binLabel, seekAxis, []plot.Series{s.seeks}
				}
				fig.Panels = append(fig.Panels, p)
			}
		}
		return fig
	}
	off := plot.Panel{Title: "Disk offset of each I/O", X: tx, Y: offAxis}
	tput := plot.Panel{Title: "Throughput" + binLabel, X: tx, Y: tputAxis}
	seeks := plot.Panel{Title: "Seeks" + binLabel, X: tx, Y: seekAxis}
	for _, s := range ss {
		off.Series = append(off.Series, s.off)
		tput.Series = append(tput.Series, s.tput)
		seeks.Series = append(seeks.Series, s.seeks)
	}
	fig.Panels = []plot.Panel{off, tput, seeks}
	return fig
}

func shortName(s string) string {
	if len(s) > 48 {
		return s[:45] + "..."
	}
	return s
}

// defaultBin is the width of the throughput and seek bins for a run of
// dur: about 1/60 of the run, and never under 50 ms unless the run is
// shorter than a second (then 1/20 of it). Bins of 1/120 of a run were
// 10 ms for a one-second check, and a bin that short holds zero or one
// burst of read-ahead, so the panels were a comb of spikes.
func defaultBin(dur time.Duration) time.Duration {
	return max(niceDuration(dur/60), min(50*time.Millisecond, niceDuration(dur/20)))
}

// sizeText is a byte count for the legend: KiB under 1 MiB, one decimal
// under 10 MiB (1.3 MiB, which %.0f made "1 MiB"), whole MiB above.
func sizeText(b int64) string {
	switch m := float64(b) / (1 << 20); {
	case b < 1<<20:
		return fmt.Sprintf("%.0f KiB", float64(b)/(1<<10))
	case m < 10:
		return fmt.Sprintf("%.1f MiB", m)
	default:
		return fmt.Sprintf("%.0f MiB", m)
	}
}

// niceDuration rounds d to 1, 2 or 5 times a power of ten (at least 1 µs).
func niceDuration(d time.Duration) time.Duration {
	if d < time.Microsecond {
		return time.Microsecond
	}
	p := time.Duration(1)
	for p*10 <= d {
		p *= 10
	}
	switch {
	case d >= 5*p:
		return 5 * p
	case d >= 2*p:
		return 2 * p
	}
	return p
}

// niceMax leaves headroom above the largest value.
func niceMax(v float64) float64 {
	if !(v > 0) || math.IsInf(v, 0) {
		return 1
	}
	return v * 1.08
}
