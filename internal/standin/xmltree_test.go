package standin

import "testing"

// FuzzXMLTree reads arbitrary text as a work unit's xml_doc: the
// tolerant reader must never panic.
func FuzzXMLTree(f *testing.F) {
	f.Add(tmplIn3a)
	f.Add(`<a><![CDATA[x]]><!-- y --><b c="/"/></a>`)
	f.Fuzz(func(t *testing.T, s string) {
		parseTree(s)
		parseWUDoc(s)
	})
}
