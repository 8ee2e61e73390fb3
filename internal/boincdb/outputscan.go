package boincdb

import (
	"errors"
	"strings"
)

// errNoFileName is OutputFiles' error for a <file_ref> without <file_name>.
var errNoFileName = errors.New("result XML: a <file_ref> without <file_name>")

// scanOutputFiles is OutputFiles for the documents BOINC writes: ASCII
// elements with plain quoted attributes or none, without comments, CDATA,
// entities, processing instructions or carriage returns, properly nested. ok is false for any
// other document, which the full parser then reads: the native
// assimilator reads one per work unit, and the XML parser was a third of
// taking a work unit's outputs. FuzzOutputFiles checks that where it
// answers it answers as the full parser does.
func scanOutputFiles(doc string) (out []OutputFile, err error, ok bool) {
	type fileInfo struct {
		name            string
		named, optional bool
	}
	type elem struct {
		name   string
		info   int // index in infos when the element is a <file_info>, else -1
		ref    int // index in out when the element is a <file_ref>, else -1
		text   *string
		gotRef bool // a <file_ref>: file_name seen (the first counts)
		gotOpn bool // a <file_ref>: open_name seen
	}
	var infos []fileInfo
	var stack []elem
	var text *string // where the current element's text goes, when it matters
	textStart := 0   // where that text begins: it ends at the next '<'
	if strings.Contains(doc, "]]>") {
		return nil, nil, false // not allowed outside CDATA: the parser says so
	}
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		if !plainByte(c) {
			return nil, nil, false
		}
		if c != '<' {
			continue
		}
		lt := i
		// A tag: <name>, <name/> or </name>, spaces allowed before its end.
		closing := i+1 < len(doc) && doc[i+1] == '/'
		j := i + 1
		if closing {
			j++
		}
		k := j
		for k < len(doc) && isNameByte(doc[k], k == j) {
			k++
		}
		if k == j {
			return nil, nil, false // <!, <?, or not a name
		}
		name := doc[j:k]
		k = skipSpace(doc, k)
		if !closing {
			// Attributes (BOINC's templates carry <rboinc aliases="..."/>):
			// skipped, as OutputFiles reads none.
			var ok bool
			if k, ok = skipAttributes(doc, k); !ok {
				return nil, nil, false
			}
		}
		selfClosing := !closing && k+1 < len(doc) && doc[k] == '/' && doc[k+1] == '>'
		if selfClosing {
			k++
		}
		if k >= len(doc) || doc[k] != '>' {
			return nil, nil, false // attributes, or no end
		}
		i = k
		if closing {
			if len(stack) == 0 || stack[len(stack)-1].name != name {
				return nil, nil, false
			}
		} else {
			if text != nil {
				return nil, nil, false // an element in a name: its text is what comes before it
			}
			e := elem{name: name, info: -1, ref: -1}
			if n := len(stack); n > 0 {
				p := &stack[n-1]
				switch {
				case name == "optional" && p.info >= 0:
					infos[p.info].optional = true
				case name == "optional" && p.ref >= 0:
					out[p.ref].Optional = true
				case name == "name" && p.info >= 0 && !infos[p.info].named:
					infos[p.info].named = true
					e.text = &infos[p.info].name
				case name == "file_name" && p.ref >= 0 && !p.gotRef:
					p.gotRef = true
					e.text = &out[p.ref].Name
				case name == "open_name" && p.ref >= 0 && !p.gotOpn:
					p.gotOpn = true
					e.text = &out[p.ref].OpenName
				}
			}
			switch name {
			case "file_info":
				e.info = len(infos)
				infos = append(infos, fileInfo{})
			case "file_ref":
				e.ref = len(out)
				out = append(out, OutputFile{})
			}
			stack = append(stack, e)
			text = e.text
			textStart = i + 1
			if !selfClosing {
				continue
			}
		}
		// The element ends: its text, when it matters, is kept (no element
		// came inside it, so it is the document's bytes up to this tag).
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if e.text != nil {
			*e.text = ""
			if !selfClosing {
				*e.text = strings.TrimSpace(doc[textStart:lt])
			}
		}
		text = nil
	}
	if len(stack) > 0 {
		return nil, nil, false
	}
	optional := map[string]bool{}
	for _, fi := range infos {
		if fi.named && fi.optional {
			optional[fi.name] = true
		}
	}
	for i := range out {
		if out[i].Name == "" {
			return nil, errNoFileName, true
		}
		out[i].Optional = out[i].Optional || optional[out[i].Name]
	}
	return out, nil, true
}

// plainByte tells the bytes the scan reads as the parser would: ASCII
// without control characters but tab and newline, no carriage return
// (which the parser turns into a newline) and no '&' (a reference).
func plainByte(c byte) bool {
	return c < 0x80 && c != '\r' && c != '&' && (c >= 0x20 || c == '\t' || c == '\n')
}

// isNameByte tells the bytes of the element names the scan reads: ASCII
// letters, and after the first digits, '_', '-' and '.'.
func isNameByte(c byte, first bool) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '_':
		return true
	case '0' <= c && c <= '9', c == '-', c == '.':
		return !first
	}
	return false
}

// skipSpace is the index of the first byte at or after k that is not a
// space, tab or newline.
func skipSpace(doc string, k int) int {
	for k < len(doc) && (doc[k] == ' ' || doc[k] == '\t' || doc[k] == '\n') {
		k++
	}
	return k
}

// skipAttributes passes over a tag's attributes from k (after its name and
// the spaces after it): name="value" or name='value', a space before each
// next one, no '<' in a value. ok is false for anything else.
func skipAttributes(doc string, k int) (int, bool) {
	for k < len(doc) && isNameByte(doc[k], true) {
		a := k
		for k < len(doc) && isNameByte(doc[k], k == a) {
			k++
		}
		k = skipSpace(doc, k)
		if k >= len(doc) || doc[k] != '=' {
			return k, false
		}
		k = skipSpace(doc, k+1)
		if k >= len(doc) || (doc[k] != '"' && doc[k] != '\'') {
			return k, false
		}
		q := doc[k]
		end := strings.IndexByte(doc[k+1:], q)
		if end < 0 || strings.IndexByte(doc[k+1:k+1+end], '<') >= 0 {
			return k, false
		}
		// The parser checks a value's characters and references too.
		for _, c := range []byte(doc[k+1 : k+1+end]) {
			if !plainByte(c) {
				return k, false
			}
		}
		k += end + 2
		s := skipSpace(doc, k)
		if s == k && s < len(doc) && doc[s] != '/' && doc[s] != '>' {
			return k, false // the next attribute without a space before it
		}
		k = s
	}
	return k, true
}
