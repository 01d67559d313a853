// Command amdahl projects how gofsck's passes would scale on more CPUs,
// from the per-pass times of its JSON reports (-E json=FILE).
//
// Usage:
//
//	amdahl [-cpus 8,32,64] REPORT.json...
//
// For each report (named after its file) and each pass it prints a
// markdown row: the wall time, the CPU time of all threads, the serial
// part's CPU time (serial_seconds: the check's own goroutine), how many
// CPUs the pass kept busy (cpu/real), the cap on its speed-up however
// many CPUs are added (cpu/serial), and Amdahl's projection of the pass's
// time on each CPU count, serial + (cpu - serial)/n. A last row per
// report sums the passes and the time outside them (opening, the journal,
// orphans and the end of the run: duration_seconds less the passes' wall
// time), which the projection counts as serial.
//
// The projection assumes what a warm cache gives: the parallel part is
// CPU-bound and divides evenly among the CPUs (no I/O, memory-bandwidth
// or lock limit), and the serial part stays serial. A pass whose cap is
// under 10 is flagged: it cannot run 10x faster on 32 CPUs than on one.
// bench/parallel.sh runs gofsck on the workload images and calls it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

type pass struct {
	Name          string  `json:"name"`
	RealSeconds   float64 `json:"real_seconds"`
	UserSeconds   float64 `json:"user_seconds"`
	SysSeconds    float64 `json:"sys_seconds"`
	SerialSeconds float64 `json:"serial_seconds"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("amdahl", flag.ContinueOnError)
	fl.SetOutput(stderr)
	cpuList := fl.String("cpus", "8,32,64", "CPU counts to project to, comma separated")
	if err := fl.Parse(args); err != nil || fl.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: amdahl [-cpus 8,32,64] REPORT.json...")
		return 2
	}
	var cpus []int
	for _, f := range strings.Split(*cpuList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintf(stderr, "amdahl: bad CPU count %q\n", f)
			return 2
		}
		cpus = append(cpus, n)
	}
	fmt.Fprint(stdout, "| report | pass | real s | cpu s | serial s | busy CPUs | cap |")
	for _, n := range cpus {
		fmt.Fprintf(stdout, " %d CPUs s |", n)
	}
	fmt.Fprint(stdout, "\n|---|---|--:|--:|--:|--:|--:|")
	for range cpus {
		fmt.Fprint(stdout, "--:|")
	}
	fmt.Fprintln(stdout)
	for _, path := range fl.Args() {
		passes, duration, err := load(path)
		if err != nil {
			fmt.Fprintf(stderr, "amdahl: %s: %v\n", path, err)
			return 1
		}
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		var total pass
		for _, p := range passes {
			row(stdout, name, p, cpus)
			total.RealSeconds += p.RealSeconds
			total.UserSeconds += p.UserSeconds
			total.SysSeconds += p.SysSeconds
			total.SerialSeconds += p.SerialSeconds
		}
		if rest := duration - total.RealSeconds; rest > 0 {
			outside := pass{Name: "outside the passes", RealSeconds: rest, UserSeconds: rest, SerialSeconds: rest}
			row(stdout, name, outside, cpus)
			total.RealSeconds += rest
			total.UserSeconds += rest
			total.SerialSeconds += rest
		}
		total.Name = "whole run"
		row(stdout, name, total, cpus)
	}
	return 0
}

// load reads a report's passes and its duration_seconds.
func load(path string) ([]pass, float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	var r struct {
		Duration float64 `json:"duration_seconds"`
		Passes   []pass  `json:"passes"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, 0, err
	}
	if len(r.Passes) == 0 {
		return nil, 0, fmt.Errorf("no passes in the report")
	}
	return r.Passes, r.Duration, nil
}

// row prints one pass's measured times and its projection.
func row(w io.Writer, report string, p pass, cpus []int) {
	cpu := p.UserSeconds + p.SysSeconds
	serial := min(p.SerialSeconds, cpu)
	busy, capText := 0.0, "-"
	if p.RealSeconds > 0 {
		busy = cpu / p.RealSeconds
	}
	if serial > 0 {
		c := cpu / serial
		capText = fmt.Sprintf("%.1f", c)
		if c < 10 {
			capText += " (<10)"
		}
	}
	fmt.Fprintf(w, "| %s | %s | %.3f | %.3f | %.3f | %.2f | %s |", report, p.Name, p.RealSeconds, cpu, serial, busy, capText)
	for _, n := range cpus {
		fmt.Fprintf(w, " %.3f |", serial+(cpu-serial)/float64(n))
	}
	fmt.Fprintln(w)
}
