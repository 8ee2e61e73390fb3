package gahp

import "strings"

// Split cuts a request line into its words: words are separated by spaces
// (runs of them count as one), and a backslash makes the next character
// part of the word, so "a\ b" is one word "a b" and "\\" a backslash. A
// backslash ending the line stands for itself.
func Split(line string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
			inWord = true
		case c == ' ':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// Escape makes s one word of a reply line: spaces and backslashes get a
// backslash before them; line breaks, which would end the reply, become
// escaped spaces.
func Escape(s string) string {
	if !strings.ContainsAny(s, " \\\r\n") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\r', '\n':
			b.WriteString(`\ `)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
