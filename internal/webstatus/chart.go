package webstatus

import (
	"fmt"

	"github.com/rboinc/rboinc/internal/stats"
)

// Chart is a bar chart laid out for an inline SVG: the template draws
// what is computed here, so that it holds no arithmetic.
type Chart struct {
	ID, Title string
	W, H      int // the viewBox
	Bars      []Bar
	Max       int
	BaseY     int // the axis
}

// Bar is one bar with its place and its label.
type Bar struct {
	X, Y, W, H float64
	LX         float64 // the label's centre
	Label      string
	ShowLabel  bool
	Count      int
	Tip        string
}

// Chart geometry: bars stand on an axis above a row of labels.
const (
	chartW   = 600
	chartH   = 180
	chartTop = 16
	labelH   = 22
)

// barChart lays out bins; every labelEvery-th bin is labelled.
func barChart(id, title string, bins []stats.Bin, labelEvery int, unit string) Chart {
	c := Chart{ID: id, Title: title, W: chartW, H: chartH, BaseY: chartH - labelH}
	for _, b := range bins {
		c.Max = max(c.Max, b.Count)
	}
	n := len(bins)
	if n == 0 {
		return c
	}
	slot := float64(chartW) / float64(n)
	avail := float64(c.BaseY - chartTop)
	for i, b := range bins {
		h := 0.0
		if c.Max > 0 {
			h = avail * float64(b.Count) / float64(c.Max)
		}
		// A bar of a non-empty bin is at least visible.
		if b.Count > 0 && h < 1 {
			h = 1
		}
		c.Bars = append(c.Bars, Bar{
			X: float64(i)*slot + slot*0.1, W: slot * 0.8,
			Y: float64(c.BaseY) - h, H: h,
			LX: float64(i)*slot + slot/2, Label: b.Label, ShowLabel: i%labelEvery == 0 || labelEvery <= 1,
			Count: b.Count, Tip: fmt.Sprintf("%s: %d %s", b.Label, b.Count, unit),
		})
	}
	return c
}
