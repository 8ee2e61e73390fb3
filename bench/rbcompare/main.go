// Command rbcompare sets the results of rbbench runs of two revisions
// side by side: for every target both measured, the median of each
// revision's runs and how much slower the new one is. bench/compare.sh
// builds both revisions, runs rbbench for them interleaved and calls it.
//
// Usage: rbcompare -old A.json,B.json -new C.json,D.json [-max 1.05]
//
// A target's figure is the first number of its "measured" column: a rate
// (a unit ending in /s: higher is better), a time (s, ms: lower is
// better), a size (MiB, MB: memory, lower is better). The slowdown is
// new time over old time, or old rate over new rate: 1.05 is 5% slower.
// It exits 1 when a target is slower than -max allows, 2 on bad input.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

type row struct {
	Target   string `json:"target"`
	Measured string `json:"measured"`
}

// figure is a target's first number and what kind it is.
type figure struct {
	v    float64
	unit string
	kind string // "rate", "time", "size"; "" when none was found
}

var number = regexp.MustCompile(`(\d[\d,]*(?:\.\d+)?)\s*(chains/s|MB/s|ms|s|MiB|KiB|GiB|MB)\b`)

// parse reads a measured column's first figure with a unit it knows.
func parse(measured string) figure {
	m := number.FindStringSubmatch(measured)
	if m == nil {
		return figure{}
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
	if err != nil {
		return figure{}
	}
	f := figure{v: v, unit: m[2]}
	switch m[2] {
	case "chains/s", "MB/s":
		f.kind = "rate"
	case "ms":
		f.v /= 1000
		f.unit, f.kind = "s", "time"
	case "s":
		f.kind = "time"
	case "KiB":
		f.v /= 1024
		f.unit, f.kind = "MiB", "size"
	case "GiB":
		f.v *= 1024
		f.unit, f.kind = "MiB", "size"
	default:
		f.kind = "size"
	}
	return f
}

// slowdown is how many times slower (or larger) new is than old.
func slowdown(old, new figure) float64 {
	if old.v == 0 || new.v == 0 {
		return 0
	}
	if old.kind == "rate" {
		return old.v / new.v
	}
	return new.v / old.v
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// runs reads the rows of each results.json of files, in order.
func runs(files string) ([][]row, error) {
	var all [][]row
	for _, f := range strings.Split(files, ",") {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var res struct {
			Rows []row `json:"rows"`
		}
		if err := json.Unmarshal(b, &res); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		all = append(all, res.Rows)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no results given")
	}
	return all, nil
}

// medians is every target's median figure over the runs, and the targets
// in the order of the first run.
func medians(rs [][]row) (map[string]figure, []string) {
	vals := map[string][]float64{}
	first := map[string]figure{}
	var order []string
	for _, r := range rs {
		for _, x := range r {
			f := parse(x.Measured)
			if f.kind == "" {
				continue
			}
			if _, ok := first[x.Target]; !ok {
				first[x.Target] = f
				order = append(order, x.Target)
			}
			vals[x.Target] = append(vals[x.Target], f.v)
		}
	}
	out := map[string]figure{}
	for t, f := range first {
		f.v = median(vals[t])
		out[t] = f
	}
	return out, order
}

func main() {
	oldFiles := flag.String("old", "", "comma-separated results.json of the old revision's runs")
	newFiles := flag.String("new", "", "comma-separated results.json of the new revision's runs")
	max := flag.Float64("max", 1.05, "the largest slowdown (new/old) that passes")
	flag.Parse()
	oldRuns, err := runs(*oldFiles)
	if err == nil {
		var newRuns [][]row
		newRuns, err = runs(*newFiles)
		if err == nil {
			os.Exit(report(oldRuns, newRuns, *max))
		}
	}
	fmt.Fprintln(os.Stderr, "rbcompare:", err)
	os.Exit(2)
}

// report prints the table and says whether every target passed (0) or
// not (1).
func report(oldRuns, newRuns [][]row, max float64) int {
	olds, oldOrder := medians(oldRuns)
	news, order := medians(newRuns)
	fmt.Printf("medians of %d old and %d new runs; slowdown = new/old time (old/new rate); over %.2f fails\n\n", len(oldRuns), len(newRuns), max)
	fmt.Printf("%-9s %12s %12s  %-8s %s\n", "slowdown", "old", "new", "unit", "target")
	code := 0
	for _, t := range order {
		n := news[t]
		o, ok := olds[t]
		if !ok || o.kind != n.kind {
			fmt.Printf("%-9s %12s %12.4g  %-8s %s\n", "new", "-", n.v, n.unit, short(t))
			continue
		}
		s := slowdown(o, n)
		mark := ""
		if s > max {
			mark, code = "  <- slower", 1
		}
		fmt.Printf("%-9.3f %12.4g %12.4g  %-8s %s%s\n", s, o.v, n.v, n.unit, short(t), mark)
	}
	// A target only the old revision measured (renamed, or its stage
	// gone): shown, for the reader to match by hand.
	for _, t := range oldOrder {
		if _, ok := news[t]; !ok {
			fmt.Printf("%-9s %12.4g %12s  %-8s %s\n", "gone", olds[t].v, "-", olds[t].unit, short(t))
		}
	}
	return code
}

// short cuts a target's description to one line of a terminal.
func short(t string) string {
	if r := []rune(t); len(r) > 90 {
		return string(r[:87]) + "..."
	}
	return t
}
