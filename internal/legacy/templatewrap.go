package legacy

import (
	"bytes"
	"encoding/xml"
)

// unwrapTemplate removes the start and end tags of the top-level
// <input_template> and <output_template> wrappers of a template, leaving
// their children at the top, where BOINC's create_work and transitioner and
// rboinc's own template parser read them, and where the original clients
// look for WuTemplate/rboinc and WuTemplate/workunit/file_ref. A template
// that does not parse is returned as it is (its errors are xmlIn's).
func unwrapTemplate(data []byte) []byte {
	const open = "<rboinc_unwrap>"
	doc := append(append([]byte(open), data...), "</rboinc_unwrap>"...)
	d := xml.NewDecoder(bytes.NewReader(doc))
	type cut struct{ start, end int64 }
	var cuts []cut
	depth, inWrapper := 0, 0
	for {
		at := d.InputOffset()
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 2 && t.Name.Space == "" && (t.Name.Local == "input_template" || t.Name.Local == "output_template") {
				cuts = append(cuts, cut{at, d.InputOffset()})
				inWrapper = depth
			}
		case xml.EndElement:
			if depth == inWrapper {
				cuts = append(cuts, cut{at, d.InputOffset()})
				inWrapper = 0
			}
			depth--
		}
	}
	if len(cuts) == 0 {
		return data
	}
	var b bytes.Buffer
	pos := int64(len(open))
	for _, c := range cuts {
		b.Write(doc[pos:c.start])
		pos = c.end
	}
	b.Write(doc[pos : int64(len(doc))-int64(len("</rboinc_unwrap>"))])
	return b.Bytes()
}
