package report

import (
	"fmt"
	"strings"

	"github.com/rboinc/rboinc/internal/stats"
)

func strconvF(f float64) string { return fmt.Sprintf("%.1f", f) }

// human writes a size in bytes briefly: 512 B, 3.2 MB.
func human(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}

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
