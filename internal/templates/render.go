package templates

import (
	"bytes"
	"slices"
	"strings"
)

// WUTemplate returns the copy create_work gets: every <rboinc> element
// removed (top-level and nested, self-closing or with content), <no_delete/>
// added to every <file_info> that lacks it (rboinc shares inputs between
// steps and collects them itself; a real BOINC deletes inputs without
// <no_delete/> seconds after a WU is assimilated), a self-closing
// <file_info/> rewritten as an open/close pair, and the <workunit> children
// whose tag names are in drop removed (e.g. "rsc_fpops_est",
// "target_nresults": so the values on create_work's command line apply,
// since BOINC lets template values win). Everything else is kept byte for
// byte.
func (q *Queue) WUTemplate(drop ...string) []byte {
	text := q.wuText
	var edits []edit
	for _, s := range q.wuEdits.cuts {
		edits = append(edits, cutLine(text, s))
	}
	for _, k := range q.wuEdits.wuKids {
		if slices.Contains(drop, k.tag) {
			edits = append(edits, cutLine(text, k.span))
		}
	}
	for _, fi := range q.wuEdits.fileInfos {
		switch {
		case fi.selfClosing():
			// BOINC's parser reads <file_info/> as another tag and skips it.
			tag := strings.TrimRight(strings.TrimSuffix(string(text[fi.start:fi.end]), "/>"), " \t\r\n")
			edits = append(edits, edit{fi.start, fi.end, tag + "><no_delete/></file_info>"})
		case !fi.hasNoDelete:
			edits = append(edits, insertAfterStartTag(text, fi.span, "<no_delete/>"))
		}
	}
	return applyEdits(text, edits)
}

// ResultTemplate returns the result template with every <rboinc> element
// removed, everything else byte for byte.
func (q *Queue) ResultTemplate() []byte {
	edits := make([]edit, 0, len(q.resultCuts))
	for _, s := range q.resultCuts {
		edits = append(edits, cutLine(q.resultText, s))
	}
	return applyEdits(q.resultText, edits)
}

// edit replaces text[start:end] with repl.
type edit struct {
	start, end int
	repl       string
}

// cutLine removes an element, and its whole line when nothing else is on
// it, so no blank line is left behind.
func cutLine(text []byte, s span) edit {
	a, b := s.start, s.end
	for a > 0 && (text[a-1] == ' ' || text[a-1] == '\t') {
		a--
	}
	for b < len(text) && (text[b] == ' ' || text[b] == '\t' || text[b] == '\r') {
		b++
	}
	if (a == 0 || text[a-1] == '\n') && (b == len(text) || text[b] == '\n') {
		if b < len(text) {
			b++
		}
		return edit{a, b, ""}
	}
	return edit{s.start, s.end, ""}
}

// insertAfterStartTag adds elem as the element's first child: on its own
// line, indented like the next line, when the start tag ends a line (this
// keeps "<file_info>" + newline, which BOINC looks for), else right after
// the tag.
func insertAfterStartTag(text []byte, s span, elem string) edit {
	p := s.startTagEnd
	nl := ""
	switch {
	case bytes.HasPrefix(text[p:], []byte("\r\n")):
		nl = "\r\n"
	case bytes.HasPrefix(text[p:], []byte("\n")):
		nl = "\n"
	default:
		return edit{p, p, elem}
	}
	p += len(nl)
	i := p
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	return edit{p, p, string(text[p:i]) + elem + nl}
}

// applyEdits applies non-overlapping edits; an edit inside a region that
// another edit removes is dropped (e.g. an <rboinc> in a dropped element).
func applyEdits(text []byte, edits []edit) []byte {
	slices.SortStableFunc(edits, func(x, y edit) int {
		if x.start != y.start {
			return x.start - y.start
		}
		return x.end - y.end
	})
	var b bytes.Buffer
	b.Grow(len(text) + 16*len(edits))
	pos := 0
	for _, e := range edits {
		if e.start < pos {
			continue
		}
		b.Write(text[pos:e.start])
		b.WriteString(e.repl)
		pos = e.end
	}
	b.Write(text[pos:])
	return b.Bytes()
}

// CommandLine returns the text of the WU template's <workunit><command_line>
// (the application's fixed arguments), and whether it has one. A job with
// arguments of its own gets this text followed by them, on create_work's
// command line, and a WU template without the element (BOINC takes the
// command line from one place only).
func (q *Queue) CommandLine() (string, bool) {
	for _, k := range q.wuEdits.wuKids {
		if k.tag == "command_line" {
			return strings.Join(strings.Fields(string(q.wuText[k.startTagEnd:k.endTagStart])), " "), true
		}
	}
	return "", false
}
