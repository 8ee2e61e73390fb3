package report

import (
	"fmt"
	"strings"

	"github.com/rboinc/rboinc/internal/stats"
)

func strconvF(f float64) string { return fmt.Sprintf("%.1f", f) }

// bar draws n of most as up to width '#'.
func bar(n, most, width int) string {
	if most <= 0 || n <= 0 {
		return ""
	}
	return strings.Repeat("#", max(1, n*width/most))
}

func maxOf(bins []stats.Bin) int {
	m := 0
	for _, b := range bins {
		m = max(m, b.Count)
	}
	return m
}
