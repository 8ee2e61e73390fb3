// Package words words counts for people: "1 chain", "3 chains", never
// "1 chain(s)".
package words

import "strconv"

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
