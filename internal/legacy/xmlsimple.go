package legacy

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

// The original CGIs and clients exchange XML through Perl's XML::Simple
// (2.25, default options plus AttrIndent on output and ForceArray on
// input). Its data model is Perl's: a scalar, a hash or an array. The Perl
// clients read our answers with XML::Simple too, and what they find depends
// on every detail of that mapping (a scalar becomes an attribute, a hash an
// element, an array repeated elements), so both directions are emulated
// here rule for rule rather than approximated with encoding/xml's
// marshalling.

// hash is a Perl hash; its values are string, hash or list.
type hash map[string]any

// list is a Perl array; its elements are string, hash or list.
type list []any

// keyAttrs is XML::Simple's default KeyAttr: list elements carrying one
// of these as a scalar are folded into a hash keyed by it on input, and
// hashes of hashes are unfolded back on output.
var keyAttrs = []string{"name", "key", "id"}

// contentKey holds an element's text when it also has attributes or
// children.
const contentKey = "content"

// xmlOut renders v as XMLout(v, RootName => root, AttrIndent => 1) does.
func xmlOut(root string, v hash) []byte {
	var b strings.Builder
	writeValue(&b, v, root, "")
	return []byte(b.String())
}

// writeValue is XML::Simple's value_to_xml. An empty indent marks the root
// (the library's own test), which is never unfolded.
func writeValue(b *strings.Builder, v any, name, indent string) {
	switch x := v.(type) {
	case string:
		b.WriteString(indent + "<" + name + ">" + escapeValue(x) + "</" + name + ">\n")
	case hash:
		if len(x) > 0 && indent != "" {
			if l, ok := unfold(x); ok {
				writeList(b, l, name, indent)
				return
			}
		}
		writeHash(b, x, name, indent)
	case list:
		writeList(b, x, name, indent)
	}
}

func writeHash(b *strings.Builder, h hash, name, indent string) {
	b.WriteString(indent + "<" + name)
	var nested []string
	var text *string
	if len(h) == 0 {
		empty := ""
		text = &empty
	}
	first := true
	for _, k := range sortedKeys(h) {
		if strings.HasPrefix(k, "-") {
			continue
		}
		s, scalar := h[k].(string)
		switch {
		case !scalar:
			var nb strings.Builder
			writeValue(&nb, h[k], k, indent+"  ")
			nested = append(nested, nb.String()) // even when empty, as Perl pushes ''
		case k == contentKey:
			t := escapeValue(s)
			text = &t
		default:
			if !first {
				b.WriteString("\n" + indent + " " + strings.Repeat(" ", utf8.RuneCountInString(name)))
			}
			b.WriteString(" " + k + `="` + escapeValue(s) + `"`)
			first = false
		}
	}
	if len(nested) == 0 && text == nil {
		b.WriteString(" />\n")
		return
	}
	b.WriteString(">")
	if text != nil {
		b.WriteString(*text)
		if len(nested) > 0 {
			nested[0] = strings.TrimLeft(nested[0], " \t\n\r\f\v")
		}
	} else {
		b.WriteString("\n")
	}
	if len(nested) > 0 {
		for _, n := range nested {
			b.WriteString(n)
		}
		b.WriteString(indent)
	}
	b.WriteString("</" + name + ">\n")
}

func writeList(b *strings.Builder, l list, name, indent string) {
	for _, v := range l {
		switch x := v.(type) {
		case string:
			b.WriteString(indent + "<" + name + ">" + escapeValue(x) + "</" + name + ">\n")
		case hash:
			writeValue(b, x, name, indent)
		case list:
			b.WriteString(indent + "<" + name + ">\n")
			writeValue(b, x, "anon", indent+"  ")
			b.WriteString(indent + "</" + name + ">\n")
		}
	}
}

// sortedKeys is XML::Simple's order: the first key attribute present, then
// the other keys sorted.
func sortedKeys(h hash) []string {
	var first string
	for _, k := range keyAttrs {
		if _, ok := h[k]; ok {
			first = k
			break
		}
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		if k != first {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if first != "" {
		keys = append([]string{first}, keys...)
	}
	return keys
}

// unfold is hash_to_array: a hash whose values are all hashes becomes a
// list of those hashes, each given its key as a "name" entry.
func unfold(h hash) (list, bool) {
	keys := make([]string, 0, len(h))
	for k, v := range h {
		if _, ok := v.(hash); !ok {
			return nil, false
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(list, 0, len(keys))
	for _, k := range keys {
		e := hash{keyAttrs[0]: k}
		for ik, iv := range h[k].(hash) {
			e[ik] = iv
		}
		out = append(out, e)
	}
	return out, true
}

// escapeValue escapes as XML::Simple does: &, <, > and ", nothing else
// (newlines stay raw, also inside attributes).
func escapeValue(s string) string {
	s = strings.ReplaceAll(s, "&", "&amp;")
	s = strings.ReplaceAll(s, "<", "&lt;")
	s = strings.ReplaceAll(s, ">", "&gt;")
	return strings.ReplaceAll(s, `"`, "&quot;")
}

// maxDepth bounds element nesting in documents we read.
const maxDepth = 64

// xmlIn reads a document as XMLin(text, ForceArray => force) does and
// returns the collapsed root (a string or a hash). DOCTYPE and entity
// declarations are refused; only XML's predefined and numeric character
// references are expanded.
func xmlIn(data []byte, force ...string) (any, error) {
	forced := map[string]bool{}
	for _, f := range force {
		forced[f] = true
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	var stack []*frame
	var root any
	done := false
	for {
		tok, err := dec.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if done {
				return nil, errors.New("more than one root element")
			}
			if len(stack) >= maxDepth {
				return nil, fmt.Errorf("elements nested more than %d deep", maxDepth)
			}
			f := &frame{name: qname(t.Name), attrs: hash{}}
			for _, a := range t.Attr {
				k := qname(a.Name)
				if _, dup := f.attrs[k]; dup {
					return nil, fmt.Errorf("<%s> has attribute %s twice", f.name, k)
				}
				// An XML parser normalises whitespace in attribute values
				// (XML 1.0, 3.3.3); encoding/xml leaves it.
				f.attrs[k] = attrSpace.Replace(a.Value)
			}
			stack = append(stack, f)
		case xml.EndElement:
			if len(stack) == 0 || stack[len(stack)-1].name != qname(t.Name) {
				return nil, fmt.Errorf("unexpected </%s>", qname(t.Name))
			}
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			v := f.collapse(forced)
			if len(stack) == 0 {
				root, done = v, true
			} else {
				stack[len(stack)-1].add(f.name, v)
			}
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text(string(t))
			} else if len(bytes.TrimSpace(t)) > 0 {
				return nil, errors.New("text outside the root element")
			}
		case xml.Directive:
			return nil, errors.New("<!DOCTYPE>, <!ENTITY> and other declarations are not allowed")
		}
	}
	if !done || len(stack) > 0 {
		return nil, errors.New("unexpected end of document")
	}
	return root, nil
}

var attrSpace = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")

func qname(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// frame is an element being read: its attributes and, in document order,
// its children and text runs (text on both sides of a comment is one run,
// as XML::Simple's SAX handler merges adjacent character data).
type frame struct {
	name  string
	attrs hash
	items []item
}

type item struct {
	key   string // "" for text
	value any
}

func (f *frame) add(key string, v any) { f.items = append(f.items, item{key, v}) }

func (f *frame) text(s string) {
	if n := len(f.items); n > 0 && f.items[n-1].key == "" {
		f.items[n-1].value = f.items[n-1].value.(string) + s
		return
	}
	f.items = append(f.items, item{"", s})
}

// collapse is XML::Simple's collapse: attributes and children in one hash,
// repeated (or forced) children as lists, lists folded on key attributes,
// a text-only element as its text, an empty one as an empty hash.
func (f *frame) collapse(forced map[string]bool) any {
	h := f.attrs
	for _, it := range f.items {
		key, v := it.key, it.value
		if key == "" {
			if strings.TrimLeft(v.(string), " \t\n\r\f\v") == "" {
				continue
			}
			key = contentKey
		}
		switch old, exists := h[key]; {
		case exists:
			if l, ok := old.(list); ok {
				h[key] = append(l, v)
			} else {
				h[key] = list{old, v}
			}
		case isList(v):
			h[key] = list{v}
		case key != contentKey && forced[key]:
			h[key] = list{v}
		default:
			h[key] = v
		}
	}
	for k, v := range h {
		if l, ok := v.(list); ok {
			h[k] = fold(l)
		}
	}
	if c, ok := h[contentKey]; ok && len(h) == 1 {
		return c
	}
	return h
}

func isList(v any) bool { _, ok := v.(list); return ok }

// fold is array_to_hash with the default key attributes: when every
// element is a hash holding one of them as a scalar, the list becomes a
// hash keyed by that value (later duplicates win, as in Perl).
func fold(l list) any {
	out := hash{}
	for _, e := range l {
		h, ok := e.(hash)
		if !ok {
			return l
		}
		matched := false
		for _, k := range keyAttrs {
			kv, present := h[k]
			if !present {
				continue
			}
			s, scalar := kv.(string)
			if !scalar {
				return l
			}
			c := hash{}
			for ck, cv := range h {
				if ck != k {
					c[ck] = cv
				}
			}
			out[s] = c
			matched = true
			break
		}
		if !matched {
			return l
		}
	}
	return out
}
