package server

import (
	"errors"
	"fmt"
	"strings"
)

// An If header (RFC 4918 section 10.4): lists of conditions, each list
// either untagged (it applies to the Request-URI) or tagged with the
// resource it applies to. The header holds when any one list holds; a list
// holds when every condition in it does.
type ifHeader struct {
	lists []ifList
}

type ifList struct {
	tag   string // the resource tag's URL as sent; "" for an untagged list
	conds []ifCond
}

// ifCond is one condition: a state token (a lock token, or any other URI
// such as DAV:no-lock, which names no lock) or an entity tag, maybe negated.
type ifCond struct {
	not   bool
	token string // without its angle brackets
	etag  string // with its quotes (and W/ if weak), as sent
}

// maxIfHeader bounds the If header read; real clients send a few hundred
// bytes.
const maxIfHeader = 16 << 10

var errIfSyntax = errors.New("malformed If header")

// parseIf reads an If header. Untagged and tagged lists may not be mixed,
// and every list needs at least one condition, as the grammar says.
func parseIf(h string) (ifHeader, error) {
	if len(h) > maxIfHeader {
		return ifHeader{}, fmt.Errorf("If header is %d bytes long; at most %d are read", len(h), maxIfHeader)
	}
	p := ifParser{s: h}
	var out ifHeader
	tagged, tag, n := false, "", 0 // n: lists since the last tag
	for first := true; ; first = false {
		p.space()
		if p.done() {
			break
		}
		switch p.peek() {
		case '<':
			if !first && !tagged {
				return ifHeader{}, fmt.Errorf("%w: a resource tag after an untagged list", errIfSyntax)
			}
			if tagged && n == 0 {
				return ifHeader{}, fmt.Errorf("%w: resource tag <%s> has no list", errIfSyntax, tag)
			}
			t, err := p.coded()
			if err != nil {
				return ifHeader{}, err
			}
			if t == "" {
				return ifHeader{}, fmt.Errorf("%w: empty resource tag", errIfSyntax)
			}
			tagged, tag, n = true, t, 0
		case '(':
			l, err := p.list()
			if err != nil {
				return ifHeader{}, err
			}
			l.tag = tag
			out.lists = append(out.lists, l)
			n++
		default:
			return ifHeader{}, fmt.Errorf("%w: unexpected %q", errIfSyntax, p.rest())
		}
	}
	if len(out.lists) == 0 {
		return ifHeader{}, fmt.Errorf("%w: no list of conditions", errIfSyntax)
	}
	if tagged && n == 0 {
		return ifHeader{}, fmt.Errorf("%w: resource tag <%s> has no list", errIfSyntax, tag)
	}
	return out, nil
}

// ifParser walks an If header; pos is a byte offset into s.
type ifParser struct {
	s   string
	pos int
}

func (p *ifParser) done() bool   { return p.pos >= len(p.s) }
func (p *ifParser) peek() byte   { return p.s[p.pos] }
func (p *ifParser) rest() string { return p.s[p.pos:min(len(p.s), p.pos+40)] }

// space skips linear white space.
func (p *ifParser) space() {
	for !p.done() && strings.IndexByte(" \t\r\n", p.peek()) >= 0 {
		p.pos++
	}
}

// coded reads a Coded-URL, <...>, and returns what is inside.
func (p *ifParser) coded() (string, error) {
	end := strings.IndexByte(p.s[p.pos:], '>')
	if end < 0 {
		return "", fmt.Errorf("%w: unclosed <", errIfSyntax)
	}
	v := p.s[p.pos+1 : p.pos+end]
	if strings.ContainsAny(v, "< \t\r\n") {
		return "", fmt.Errorf("%w: white space or '<' inside <%s>", errIfSyntax, v)
	}
	p.pos += end + 1
	return v, nil
}

// list reads "(" 1*Condition ")".
func (p *ifParser) list() (ifList, error) {
	p.pos++ // (
	var l ifList
	for {
		p.space()
		if p.done() {
			return ifList{}, fmt.Errorf("%w: unclosed (", errIfSyntax)
		}
		if p.peek() == ')' {
			p.pos++
			if len(l.conds) == 0 {
				return ifList{}, fmt.Errorf("%w: empty list ()", errIfSyntax)
			}
			return l, nil
		}
		var c ifCond
		if len(p.s)-p.pos >= 3 && strings.EqualFold(p.s[p.pos:p.pos+3], "Not") {
			c.not = true
			p.pos += 3
			p.space()
			if p.done() {
				return ifList{}, fmt.Errorf("%w: Not without a condition", errIfSyntax)
			}
		}
		switch p.peek() {
		case '<':
			t, err := p.coded()
			if err != nil {
				return ifList{}, err
			}
			if t == "" {
				return ifList{}, fmt.Errorf("%w: empty state token <>", errIfSyntax)
			}
			c.token = t
		case '[':
			end := strings.IndexByte(p.s[p.pos:], ']')
			if end < 0 {
				return ifList{}, fmt.Errorf("%w: unclosed [", errIfSyntax)
			}
			e := p.s[p.pos+1 : p.pos+end]
			if !validETag(e) {
				return ifList{}, fmt.Errorf("%w: %q is not an entity tag", errIfSyntax, e)
			}
			c.etag = e
			p.pos += end + 1
		default:
			return ifList{}, fmt.Errorf("%w: unexpected %q in a list", errIfSyntax, p.rest())
		}
		l.conds = append(l.conds, c)
	}
}

// validETag: ["W/"] DQUOTE *etagc DQUOTE (RFC 7232).
func validETag(e string) bool {
	e = strings.TrimPrefix(e, "W/")
	if len(e) < 2 || e[0] != '"' || e[len(e)-1] != '"' {
		return false
	}
	for _, c := range []byte(e[1 : len(e)-1]) {
		if c == '"' || c < 0x21 || c == 0x7f {
			return false
		}
	}
	return true
}

// submitted lists the lock tokens the header submits: the positive state
// tokens of the lists that hold (hold[i] for list i). A token under Not, or
// in a list that fails, submits nothing.
func (h ifHeader) submitted(hold []bool) map[string]bool {
	out := map[string]bool{}
	for i, l := range h.lists {
		if !hold[i] {
			continue
		}
		for _, c := range l.conds {
			if !c.not && c.token != "" {
				out[c.token] = true
			}
		}
	}
	return out
}
