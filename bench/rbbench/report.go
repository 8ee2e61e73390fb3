package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// row is one line of the results: a target, what was measured, the
// baseline measured in the same run, and how to reproduce it.
type row struct {
	Target   string `json:"target"`
	Measured string `json:"measured"`
	Baseline string `json:"baseline"`
	Ratio    string `json:"ratio"`
	Verdict  string `json:"verdict"` // meets, misses, or info
	Command  string `json:"command"`
}

func verdict(ok bool) string {
	if ok {
		return "meets"
	}
	return "misses"
}

func (b *bench) add(r row) {
	b.rows = append(b.rows, r)
	fmt.Printf("  %-7s %s\n          measured %s\n          baseline %s\n          ratio    %s\n", r.Verdict, r.Target, r.Measured, r.Baseline, r.Ratio)
}

func (b *bench) note(format string, a ...any) {
	s := fmt.Sprintf(format, a...)
	b.notes = append(b.notes, s)
	fmt.Println("  note:", s)
}

// writeReport writes results.md (a table for BENCHMARKS.md) and
// results.json into the working directory and prints where.
func (b *bench) writeReport() error {
	var md strings.Builder
	md.WriteString("| target | measured | baseline (same run) | ratio | verdict | command |\n|---|---|---|---|---|---|\n")
	esc := func(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
	for _, r := range b.rows {
		fmt.Fprintf(&md, "| %s | %s | %s | %s | %s | `%s` |\n", esc(r.Target), esc(r.Measured), esc(r.Baseline), esc(r.Ratio), r.Verdict, esc(r.Command))
	}
	md.WriteString("\n")
	for _, n := range b.notes {
		fmt.Fprintf(&md, "- %s\n", n)
	}
	mdPath := filepath.Join(b.work, "results.md")
	if err := os.WriteFile(mdPath, []byte(md.String()), 0o644); err != nil {
		return err
	}
	js, _ := json.MarshalIndent(struct {
		Rows  []row    `json:"rows"`
		Notes []string `json:"notes"`
	}{b.rows, b.notes}, "", "  ")
	if err := os.WriteFile(filepath.Join(b.work, "results.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	met, missed := 0, 0
	for _, r := range b.rows {
		switch r.Verdict {
		case "meets":
			met++
		case "misses":
			missed++
		}
	}
	fmt.Printf("== summary: %d targets met, %d missed (no timing is asserted); table in %s\n", met, missed, mdPath)
	return nil
}

// Formatting helpers.

func ms(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	default:
		return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
	}
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

func mbps(bytes int64, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f MB/s", float64(bytes)/1e6/d.Seconds())
}

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", float64(a)/float64(b))
}

func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// count formats n with thousands separators.
func count(n int) string {
	s := fmt.Sprint(n)
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
