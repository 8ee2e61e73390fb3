package templates

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"

	"github.com/beevik/etree"
)

// MaxTemplateSize bounds a template file; BOINC itself refuses XML documents
// over 64 KiB, so anything near this is a mistake or an attack.
const MaxTemplateSize = 1 << 20

// rootTag wraps a template: BOINC templates may have several top-level
// elements, which is not a well-formed XML document on its own.
const rootTag = "rboinc-synthetic-root"

var (
	rootOpen  = []byte("<" + rootTag + ">")
	rootClose = []byte("</" + rootTag + ">")
)

// span locates one element in the original template text (byte offsets).
type span struct {
	start, startTagEnd int // the start tag is text[start:startTagEnd]
	endTagStart, end   int // the end tag; empty (both == startTagEnd) when self-closing
}

func (s span) selfClosing() bool { return s.end == s.startTagEnd }

// xmlDoc is a parsed template: the etree for reading it, and the byte
// position of every element so edits can leave all other bytes untouched
// (etree would re-serialise quoting, spacing and entities).
type xmlDoc struct {
	file  string
	text  []byte
	root  *etree.Element
	spans map[*etree.Element]span
}

// loadDoc parses one template. The span scan runs first because it also
// refuses directives (<!DOCTYPE, <!ENTITY) before etree sees them.
func loadDoc(file string, text []byte) (*xmlDoc, error) {
	if len(text) > MaxTemplateSize {
		return nil, fmt.Errorf("%s: template is %d bytes, more than the %d allowed", file, len(text), MaxTemplateSize)
	}
	wrapped := make([]byte, 0, len(rootOpen)+len(text)+len(rootClose))
	wrapped = append(append(append(wrapped, rootOpen...), text...), rootClose...)
	spans, err := scanSpans(wrapped, len(rootOpen))
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable XML template: %w", file, err)
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(wrapped); err != nil {
		return nil, fmt.Errorf("%s: not a readable XML template: %w", file, err)
	}
	root := doc.SelectElement(rootTag)
	if root == nil || len(doc.ChildElements()) != 1 {
		return nil, fmt.Errorf("%s: not a readable XML template: stray %s", file, rootClose)
	}
	d := &xmlDoc{file: file, text: text, root: root, spans: make(map[*etree.Element]span, len(spans))}
	i := 0
	var walk func(e *etree.Element) error
	walk = func(e *etree.Element) error {
		if i >= len(spans) || spans[i].tag != e.FullTag() {
			return errors.New("element positions disagree between parsers")
		}
		d.spans[e] = spans[i].span
		i++
		for _, c := range e.ChildElements() {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root); err != nil || i != len(spans) {
		return nil, fmt.Errorf("%s: not a readable XML template: element positions disagree between parsers", file)
	}
	return d, nil
}

type taggedSpan struct {
	tag string
	span
}

// scanSpans lists the elements of wrapped in document order with their byte
// spans, shifted by -shift so they index the unwrapped text. It uses the
// same encoding/xml tokenizer etree does, so both see the same elements.
func scanSpans(wrapped []byte, shift int) ([]taggedSpan, error) {
	dec := xml.NewDecoder(bytes.NewReader(wrapped))
	dec.Strict = true
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil } // as etree does
	var out []taggedSpan
	var open []int
	for {
		off := int(dec.InputOffset()) - shift
		tok, err := dec.RawToken()
		if err == io.EOF {
			if len(open) != 0 {
				return nil, errors.New("unexpected end of text: an element is not closed")
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		now := int(dec.InputOffset()) - shift
		switch t := tok.(type) {
		case xml.StartElement:
			open = append(open, len(out))
			out = append(out, taggedSpan{tag: fullTag(t.Name), span: span{start: off, startTagEnd: now}})
		case xml.EndElement:
			if len(open) == 0 {
				return nil, fmt.Errorf("closing tag </%s> without an opening tag", fullTag(t.Name))
			}
			s := &out[open[len(open)-1]]
			if t.Name.Local == rootTag && s.tag != rootTag {
				return nil, fmt.Errorf("<%s> is never closed", s.tag)
			}
			if s.tag != fullTag(t.Name) {
				return nil, fmt.Errorf("<%s> is closed by </%s>", s.tag, fullTag(t.Name))
			}
			s.endTagStart, s.end = off, now
			open = open[:len(open)-1]
		case xml.Directive:
			return nil, errors.New("<!DOCTYPE>, <!ENTITY> and other <!...> declarations are not allowed in templates")
		}
	}
}

func fullTag(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// top returns the template's top-level elements; the optional wrapper
// (<input_template> or <output_template>) is looked through, as BOINC does.
func (d *xmlDoc) top(wrapper string) []*etree.Element {
	var out []*etree.Element
	for _, e := range d.root.ChildElements() {
		if e.FullTag() == wrapper {
			out = append(out, e.ChildElements()...)
		} else {
			out = append(out, e)
		}
	}
	return out
}

// where names the element holding e, for messages.
func where(e *etree.Element) string {
	p := e.Parent()
	if p == nil || p.FullTag() == rootTag {
		return "top level"
	}
	return "<" + p.FullTag() + ">"
}

// raw returns the element's bytes as written in the template.
func (d *xmlDoc) raw(e *etree.Element) []byte {
	s := d.spans[e]
	return d.text[s.start:s.end]
}

// children returns e's child elements named tag.
func children(e *etree.Element, tag string) []*etree.Element {
	var out []*etree.Element
	for _, c := range e.ChildElements() {
		if c.FullTag() == tag {
			out = append(out, c)
		}
	}
	return out
}

// single returns e's only child named tag, nil if there is none, and an
// error if there are several (which one BOINC would use is not obvious).
func single(e *etree.Element, tag string) (*etree.Element, error) {
	cs := children(e, tag)
	switch len(cs) {
	case 0:
		return nil, nil
	case 1:
		return cs[0], nil
	}
	return nil, fmt.Errorf("has %d <%s> elements, expected at most one", len(cs), tag)
}

// leafText returns the text of an element that must hold text only.
func leafText(e *etree.Element) (string, error) {
	if len(e.ChildElements()) > 0 {
		return "", fmt.Errorf("<%s> must hold plain text, not elements", e.FullTag())
	}
	var b bytes.Buffer
	for _, t := range e.Child {
		if c, ok := t.(*etree.CharData); ok {
			b.WriteString(c.Data)
		}
	}
	return string(bytes.TrimSpace(b.Bytes())), nil
}
