package words

import (
	"strings"
	"unicode/utf8"
)

// Wrap breaks text into lines of at most width characters at spaces. A
// word longer than width gets a line of its own, unbroken: a file name or
// URL cut in two could not be copied. Runs of white space, line breaks
// included, count as one space. Empty text is no line.
func Wrap(text string, width int) []string {
	var lines []string
	line, n := "", 0
	for _, w := range strings.Fields(text) {
		wn := utf8.RuneCountInString(w)
		if n > 0 && n+1+wn > width {
			lines = append(lines, line)
			line, n = "", 0
		}
		if n > 0 {
			line, n = line+" ", n+1
		}
		line, n = line+w, n+wn
	}
	if n > 0 {
		lines = append(lines, line)
	}
	return lines
}

// Indent is text wrapped as Wrap does to width columns, its first line
// after first (counted in the width) and the others after as many
// spaces, each line ended by a line break.
func Indent(first, text string, width int) string {
	pad := utf8.RuneCountInString(first)
	lines := Wrap(text, max(width-pad, 1))
	if len(lines) == 0 {
		return strings.TrimRight(first, " ") + "\n"
	}
	var b strings.Builder
	for i, l := range lines {
		if i == 0 {
			b.WriteString(first)
		} else {
			b.WriteString(strings.Repeat(" ", pad))
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}
