package client

import (
	"html"
	"strings"
)

// htmlReason turns an HTML error page (Apache's, a proxy's) into one line
// worth reading: its title and the first paragraph that says more than the
// title, tags and entities removed. It returns "" for a body that is not
// HTML.
func htmlReason(body string) string {
	trimmed := strings.TrimSpace(body)
	lower := strings.ToLower(trimmed)
	if !strings.HasPrefix(lower, "<!doctype html") && !strings.HasPrefix(lower, "<html") && !strings.HasPrefix(lower, "<?xml") && !strings.HasPrefix(lower, "<") {
		return ""
	}
	title := textOf(between(trimmed, "title"))
	var parts []string
	if title != "" {
		parts = append(parts, title)
	}
	rest := trimmed
	for len(parts) < 2 {
		p, after, ok := element(rest, "p")
		if !ok {
			break
		}
		rest = after
		if t := textOf(p); t != "" && !strings.EqualFold(t, title) && !generic(t) {
			parts = append(parts, t)
		}
	}
	if len(parts) < 2 {
		// mod_dav's XML error bodies: <D:error>...<m:human-readable>text
		for _, tag := range []string{"m:human-readable", "m:responsedescription"} {
			if d := textOf(between(trimmed, tag)); d != "" {
				parts = append(parts, d)
				break
			}
		}
	}
	line := strings.Join(parts, ": ")
	if len(line) > 300 {
		line = line[:300] + "..."
	}
	return line
}

// generic tells Apache's boilerplate sentences from a reason.
func generic(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "the server encountered an internal error") || strings.HasPrefix(l, "please contact the server administrator") ||
		strings.HasPrefix(l, "more information about this error")
}

// between is the inside of the first <tag ...>...</tag>, case-insensitive.
func between(s, tag string) string {
	inner, _, _ := element(s, tag)
	return inner
}

// element finds the first <tag>...</tag> (or <tag attrs>...</tag>) in s and
// returns its inside and what follows it.
func element(s, tag string) (inner, after string, ok bool) {
	lower := asciiLower(s) // byte for byte: indexes into it are indexes into s
	open := "<" + tag
	for from := 0; ; {
		i := strings.Index(lower[from:], open)
		if i < 0 {
			return "", "", false
		}
		i += from
		j := i + len(open)
		if j < len(lower) && (lower[j] == '>' || lower[j] == ' ' || lower[j] == '\t' || lower[j] == '\n') {
			gt := strings.IndexByte(lower[j:], '>')
			if gt < 0 {
				return "", "", false
			}
			start := j + gt + 1
			end := strings.Index(lower[start:], "</"+tag)
			if end < 0 {
				return s[start:], "", true
			}
			return s[start : start+end], s[start+end:], true
		}
		from = j
	}
}

// textOf strips tags and entities and folds white space into single spaces.
func textOf(s string) string {
	var b strings.Builder
	inTag := false
	for _, r := range s {
		switch {
		case r == '<':
			inTag = true
			b.WriteByte(' ')
		case r == '>':
			inTag = false
		case !inTag:
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(html.UnescapeString(b.String())), " ")
}

// asciiLower lower-cases ASCII letters only, keeping every byte's offset
// (strings.ToLower may change the length of other characters).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
