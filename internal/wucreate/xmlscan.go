package wucreate

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// BOINC's XML_PARSER buffer sizes (lib/parse.h).
const (
	tagBufLen     = 4096
	elementBufLen = 65536
	smallBufLen   = 256 // parse_int/parse_double/parse_bool and open_name buffers
)

type tokKind int

const (
	tokEOF tokKind = iota // end of input, or a buffer overflow (BOINC treats both alike)
	tokTag
	tokData
	tokCDATA
	tokComment
)

// errXMLParse is BOINC's ERR_XML_PARSE from copy_element.
var errXMLParse = errors.New("unexpected XML tag or syntax")

// xmlScanner tokenises text the way BOINC's XML_PARSER does, because templates
// must be accepted, rejected and rewritten exactly as create_work would:
// attributes are dropped, every '/' inside the brackets joins the tag name,
// text is whitespace-trimmed, and a NUL ends the input.
type xmlScanner struct {
	s     string
	i     int
	tag   string // parsed_tag: the last token read by getTag
	isTag bool
}

func newScanner(s string) *xmlScanner {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i] // the C code sees a NUL-terminated string
	}
	return &xmlScanner{s: s}
}

func IsCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func StripWS(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r < 0x80 && IsCSpace(byte(r)) })
}

// get reads the next token; limit is the C buffer size (0: unlimited).
func (x *xmlScanner) get(limit int) (string, tokKind) {
	for {
		for x.i < len(x.s) && IsCSpace(x.s[x.i]) {
			x.i++
		}
		if x.i >= len(x.s) {
			return "", tokEOF
		}
		if x.s[x.i] == '<' {
			x.i++
			t, k := x.scanTag(limit)
			if k == tokComment {
				continue
			}
			return StripWS(t), k
		}
		// Text runs to the next '<'; text at the very end is lost, as in BOINC.
		j := strings.IndexByte(x.s[x.i:], '<')
		if j < 0 {
			x.i = len(x.s)
			return "", tokEOF
		}
		if limit > 0 && j >= limit {
			return "", tokEOF
		}
		t := x.s[x.i : x.i+j]
		x.i += j
		return StripWS(t), tokData
	}
}

// scanTag reads after a '<' up to '>': the name up to the first space, plus
// every '/' found anywhere (also inside attribute values). Until a space,
// that is the template's own bytes, returned without a copy: templates are
// scanned once per work unit, and most tags have no attributes.
func (x *xmlScanner) scanTag(limit int) (string, tokKind) {
	room := limit
	if room <= 0 {
		room = math.MaxInt
	}
	start := x.i
	var b []byte // the name once a space was found; before, x.s[start:x.i]
	foundSpace := false
	for n := 0; ; n++ {
		if x.i >= len(x.s) {
			return "", tokEOF
		}
		c := x.s[x.i]
		x.i++
		switch {
		case c == '>':
			if !foundSpace {
				return x.s[start : x.i-1], tokTag
			}
			return string(b), tokTag
		case IsCSpace(c):
			if !foundSpace {
				foundSpace = true
				b = append(b, x.s[start:x.i-1]...)
			}
		case c == '/' || !foundSpace:
			room--
			if room <= 0 {
				return "", tokEOF
			}
			if foundSpace {
				b = append(b, c)
			}
		}
		if n == 2 && x.scannedPrefix(start, foundSpace, b, "!--") {
			return x.scanComment()
		}
		if n == 7 && x.scannedPrefix(start, foundSpace, b, "![CDATA[") {
			return x.scanCDATA()
		}
	}
}

// scannedPrefix tells whether the tag scanTag has read so far begins with p.
func (x *xmlScanner) scannedPrefix(start int, foundSpace bool, b []byte, p string) bool {
	if foundSpace {
		return len(b) >= len(p) && string(b[:len(p)]) == p
	}
	return strings.HasPrefix(x.s[start:x.i], p)
}

func (x *xmlScanner) scanComment() (string, tokKind) {
	j := strings.Index(x.s[x.i:], "-->")
	if j < 0 {
		x.i = len(x.s)
		return "", tokEOF
	}
	x.i += j + 3
	return "", tokComment
}

func (x *xmlScanner) scanCDATA() (string, tokKind) {
	j := strings.Index(x.s[x.i:], "]]>")
	if j < 0 {
		x.i = len(x.s)
		return "", tokEOF
	}
	t := x.s[x.i : x.i+j]
	x.i += j + 3
	return t, tokCDATA
}

// getTag is XML_PARSER::get_tag; it returns false at the end of input.
func (x *xmlScanner) getTag() bool {
	t, k := x.get(tagBufLen)
	if k == tokEOF {
		return false
	}
	if len(t) > tagBufLen-10 {
		t = t[:tagBufLen-10]
	}
	x.tag, x.isTag = t, k == tokTag
	return true
}

func (x *xmlScanner) match(tag string) bool { return x.tag == tag }

// parseStr is XML_PARSER::parse_str / parse_string: <tag>text</tag>, <tag></tag>
// or <tag/>, the text unescaped. Like BOINC it may consume tokens and still fail.
func (x *xmlScanner) parseStr(tag string, limit int) (string, bool) {
	if x.tag == tag+"/" {
		return "", true
	}
	if x.tag != tag {
		return "", false
	}
	t, k := x.get(limit)
	switch k {
	case tokEOF:
		return "", false
	case tokTag:
		return "", t == "/"+tag
	}
	t2, k2 := x.get(tagBufLen)
	if k2 != tokTag || t2 != "/"+tag {
		return "", false
	}
	if k == tokCDATA {
		return t, true
	}
	return XMLUnescape(t), true
}

// parseNumber is the shared body of parse_int and parse_double.
func (x *xmlScanner) parseNumber(tag string, conv func(string) (float64, bool)) (float64, bool) {
	if x.tag != tag {
		return 0, false
	}
	t, k := x.get(smallBufLen)
	if k == tokEOF {
		return 0, false
	}
	if k == tokTag {
		return 0, t == "/"+tag // <foo></foo> counts as 0
	}
	v, ok := conv(t)
	if !ok {
		return 0, false
	}
	t2, k2 := x.get(tagBufLen)
	if k2 != tokTag || t2 != "/"+tag {
		return 0, false
	}
	return v, true
}

func (x *xmlScanner) parseInt(tag string) (int, bool) {
	v, ok := x.parseNumber(tag, func(s string) (float64, bool) {
		n, ok := cStrtol(s)
		return float64(int32(n)), ok // C stores the long in an int
	})
	return int(v), ok
}

func (x *xmlScanner) parseDouble(tag string) (float64, bool) {
	return x.parseNumber(tag, CStrtod)
}

// parseBool is XML_PARSER::parse_bool: <tag/> or <tag>int</tag>.
func (x *xmlScanner) parseBool(tag string) (bool, bool) {
	if x.tag == tag+"/" {
		return true, true
	}
	if x.tag != tag {
		return false, false
	}
	t, k := x.get(smallBufLen)
	if k != tokData && k != tokCDATA {
		return false, false
	}
	n, ok := cStrtol(t)
	if !ok {
		return false, false
	}
	t2, k2 := x.get(tagBufLen)
	if k2 != tokTag || t2 != "/"+tag {
		return false, false
	}
	return n != 0, true
}

// copyElement is XML_PARSER::copy_element: the element just read, with its
// attributes lost and its raw inner text kept.
func (x *xmlScanner) copyElement() (string, error) {
	tag := x.tag
	if strings.HasSuffix(tag, "/") {
		return "<" + tag + ">", nil
	}
	if strings.Contains(tag, "/") {
		return "", errXMLParse
	}
	name := tag
	if len(name) > 256 {
		name = name[:256]
	}
	end := "</" + name + ">"
	j := strings.Index(x.s[x.i:], end)
	if j < 0 || j+len(end) > elementBufLen-1 {
		x.i = len(x.s)
		return "", errXMLParse
	}
	inner := StripWS(x.s[x.i : x.i+j])
	x.i += j + len(end)
	return "<" + tag + ">" + inner + end, nil
}

// cStrtol parses a whole string as C's strtol(s, &end, 0) must for BOINC to
// accept it: optional sign, 0x hex, 0 octal or decimal, nothing left over.
func cStrtol(s string) (int64, bool) {
	t := s
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	base := 10
	switch {
	case len(t) > 2 && (t[:2] == "0x" || t[:2] == "0X"):
		base, t = 16, t[2:]
	case len(t) > 1 && t[0] == '0':
		base, t = 8, t[1:]
	}
	if t == "" {
		return 0, s == "" // strtol("") consumes nothing and "succeeds"
	}
	for i := 0; i < len(t); i++ {
		if !isDigitBase(t[i], base) {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(t, base, 64)
	if err != nil {
		return 0, false // ERANGE
	}
	if neg {
		n = -n
	}
	return n, true
}

func isDigitBase(c byte, base int) bool {
	switch base {
	case 8:
		return c >= '0' && c <= '7'
	case 16:
		return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
	}
	return c >= '0' && c <= '9'
}

// CStrtod parses a whole string as a C double.
func CStrtod(s string) (float64, bool) {
	if strings.ContainsRune(s, '_') {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// XMLUnescape is BOINC's xml_unescape.
func XMLUnescape(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '&' {
			b.WriteByte(s[i])
			i++
			continue
		}
		rest := s[i:]
		matched := false
		for _, e := range xmlEntities {
			if strings.HasPrefix(rest, e.from) {
				b.WriteByte(e.to)
				i += len(e.from)
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		if strings.HasPrefix(rest, "&#") {
			j := 2
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
			if j > 2 && j < len(rest) && rest[j] == ';' {
				if n, err := strconv.Atoi(rest[2:j]); err == nil && n < 256 {
					b.WriteByte(byte(n))
					i += j + 1
					continue
				}
			}
			b.WriteString("&#")
			i += 2
			continue
		}
		b.WriteByte('&')
		i++
	}
	return b.String()
}

var xmlEntities = []struct {
	from string
	to   byte
}{
	{"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}, {"&amp;", '&'},
	{"&#xD;", '\r'}, {"&#xd;", '\r'}, {"&#xA;", '\n'}, {"&#xa;", '\n'},
}

// TokKind is the kind of a token from Tokens.
type TokKind = tokKind

// The token kinds readers outside this package see.
const (
	TokEOF   = tokEOF
	TokTag   = tokTag
	TokData  = tokData
	TokCDATA = tokCDATA
)

// Tokens is the same tokeniser for readers of BOINC documents outside
// this package (the stand-in reads xml_doc with it).
type Tokens struct{ x *xmlScanner }

// NewTokens tokenises doc.
func NewTokens(doc string) *Tokens { return &Tokens{newScanner(doc)} }

// Next returns the next token, comments included, without a length limit.
func (t *Tokens) Next() (string, TokKind) { return t.x.get(0) }
