package boinc

import (
	"strings"
	"testing"
)

// writes records each Write it is given.
type writes [][]byte

func (w *writes) Write(p []byte) (int, error) {
	*w = append(*w, append([]byte(nil), p...))
	return len(p), nil
}

// Every write a lineFeed makes holds whole lines and fits in PIPE_BUF, the
// longest line create_work takes included, and together they are the lines
// in order.
func TestLineFeedWritesWholeLinesWithinPipeBuf(t *testing.T) {
	var lines []string
	for i := range 400 {
		lines = append(lines, strings.Repeat(string(rune('a'+i%26)), 1+(i*37)%300))
		if i%50 == 0 {
			lines = append(lines, strings.Repeat("L", maxLine-1)) // the longest checkedLine allows
		}
	}
	var w writes
	f := newLineFeed(&w)
	for i, l := range lines {
		if err := f.add(l); err != nil {
			t.Fatal(err)
		}
		if i%97 == 0 { // Flush at any point
			if err := f.flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.flush(); err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for i, p := range w {
		if len(p) == 0 || len(p) > pipeBuf || p[len(p)-1] != '\n' {
			t.Fatalf("write %d of %d bytes: want 1 to %d bytes ending a line", i, len(p), pipeBuf)
		}
		all.Write(p)
	}
	if want := strings.Join(lines, "\n") + "\n"; all.String() != want {
		t.Fatal("the lines written are not the lines added, in order")
	}
}

// A line that cannot go in one atomic write is refused, not cut.
func TestLineFeedRefusesLineOverPipeBuf(t *testing.T) {
	var w writes
	f := newLineFeed(&w)
	if err := f.add(strings.Repeat("x", pipeBuf)); err == nil {
		t.Fatal("a line of PIPE_BUF bytes and a newline was taken")
	}
	if err := f.flush(); err != nil || len(w) != 0 {
		t.Fatalf("%d writes (%v) after a refused line", len(w), err)
	}
}
