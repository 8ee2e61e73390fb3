package main

import "testing"

// TestParseAndSlowdown: the figures rbbench prints are read with their
// direction: a lower rate and a longer time are both slowdowns.
func TestParseAndSlowdown(t *testing.T) {
	for _, c := range []struct {
		measured string
		v        float64
		kind     string
	}{
		{"1,234 chains/s (best of 3: 1.2 s)", 1234, "rate"},
		{"850.5 ms for rboinc-retrieve -status (median of 5)", 0.8505, "time"},
		{"12.5 s (40 MB/s; client CPU 1.0 s)", 12.5, "time"},
		{"client 512 MB/s, server 480 MB/s", 512, "rate"},
		{"max RSS 48.0 MiB (900 chains/s)", 48, "size"},
		{"0 files, 0 bytes uploaded", 0, ""},
	} {
		f := parse(c.measured)
		if f.kind != c.kind || f.v != c.v {
			t.Errorf("%q: %v %s, want %v %s", c.measured, f.v, f.kind, c.v, c.kind)
		}
	}
	if s := slowdown(figure{v: 100, kind: "rate"}, figure{v: 80, kind: "rate"}); s != 1.25 {
		t.Errorf("rate 100 -> 80: slowdown %v, want 1.25", s)
	}
	if s := slowdown(figure{v: 2, kind: "time"}, figure{v: 1, kind: "time"}); s != 0.5 {
		t.Errorf("time 2 -> 1: slowdown %v, want 0.5", s)
	}
	old := [][]row{{{"a", "100 chains/s"}}, {{"a", "300 chains/s"}}, {{"a", "200 chains/s"}}}
	if got := report(old, [][]row{{{"a", "199 chains/s"}}}, 1.05); got != 0 {
		t.Errorf("199 against a median of 200 failed")
	}
	if got := report(old, [][]row{{{"a", "150 chains/s"}}}, 1.05); got != 1 {
		t.Errorf("150 against a median of 200 passed")
	}
}
