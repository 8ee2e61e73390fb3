// Package words words counts and sizes for people: "1 chain", "3 chains",
// never "1 chain(s)"; "512 B", "3.2 MB"; and wraps their paragraphs.
package words

import (
	"fmt"
	"strconv"
)

// Count is n with the singular or the plural noun.
func Count(n int, one, many string) string {
	if n == 1 || n == -1 {
		return strconv.Itoa(n) + " " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Count64 is Count for an int64.
func Count64(n int64, one, many string) string {
	if n == 1 || n == -1 {
		return strconv.FormatInt(n, 10) + " " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

// Bytes writes a size in bytes briefly: 512 B, 3.2 MB (powers of 1000).
func Bytes(n int64) string {
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
