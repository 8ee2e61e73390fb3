package wucreate

import (
	"math"
	"strings"
	"testing"
)

// scanTagByBytes is scanTag as it was, a byte at a time into a builder:
// the reference the copy-free scan must agree with.
func (x *xmlScanner) scanTagByBytes(limit int) (string, tokKind) {
	var b strings.Builder
	room := limit
	if room <= 0 {
		room = math.MaxInt
	}
	foundSpace := false
	for n := 0; ; n++ {
		if x.i >= len(x.s) {
			return "", tokEOF
		}
		c := x.s[x.i]
		x.i++
		switch {
		case c == '>':
			return b.String(), tokTag
		case IsCSpace(c):
			foundSpace = true
		case c == '/' || !foundSpace:
			room--
			if room <= 0 {
				return "", tokEOF
			}
			b.WriteByte(c)
		}
		if n == 2 && strings.HasPrefix(b.String(), "!--") {
			return x.scanComment()
		}
		if n == 7 && strings.HasPrefix(b.String(), "![CDATA[") {
			return x.scanCDATA()
		}
	}
}

// FuzzScanTag checks scanTag against the byte-at-a-time scan, from every
// '<' of the input and at several buffer limits.
func FuzzScanTag(f *testing.F) {
	f.Add(tmplIn3a)
	f.Add(`<a b="/c/"><![CDATA[x]]><!-- y --><! -- z --><d/ ><e	f/>`)
	f.Add("<abcdefg/>< ![CDATA[q]]>")
	f.Fuzz(func(t *testing.T, s string) {
		for i := 0; i < len(s); i++ {
			if s[i] != '<' {
				continue
			}
			for _, limit := range []int{0, 3, 9, smallBufLen, tagBufLen} {
				a, b := &xmlScanner{s: s, i: i + 1}, &xmlScanner{s: s, i: i + 1}
				ta, ka := a.scanTag(limit)
				tb, kb := b.scanTagByBytes(limit)
				if ta != tb || ka != kb || a.i != b.i {
					t.Fatalf("at %d, limit %d: scanTag = %q, %d, next %d; byte by byte %q, %d, next %d", i, limit, ta, ka, a.i, tb, kb, b.i)
				}
			}
		}
	})
}

// TestScanTagAllocations: a tag without attributes is the template's own
// bytes, not a copy.
func TestScanTagAllocations(t *testing.T) {
	x := &xmlScanner{}
	n := testing.AllocsPerRun(100, func() {
		x.s, x.i = "<file_info>", 1
		if tag, k := x.scanTag(tagBufLen); tag != "file_info" || k != tokTag {
			t.Fatalf("scanTag = %q, %d", tag, k)
		}
	})
	if n != 0 {
		t.Errorf("scanTag of a plain tag made %v allocations, want 0", n)
	}
}
