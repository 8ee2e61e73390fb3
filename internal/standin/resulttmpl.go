package standin

import (
	"fmt"
	"strings"
)

// processResultTemplate does what the transitioner's process_result_template
// does to a result template when it creates a result: <OUTFILE_k/> becomes
// base+k, <UPLOAD_URL/> the upload URL, an <output_template> wrapper is cut
// off, and the whole is trimmed. Upload certificates are never generated (the
// stand-in's config has dont_generate_upload_certificates). On a malformed
// OUTFILE macro BOINC logs an error and keeps the partly processed text, so
// the text is returned together with the error.
func processResultTemplate(tmpl, base, uploadURL string) (string, error) {
	const (
		outMacro = "<OUTFILE_"
		urlMacro = "<UPLOAD_URL/>"
	)
	s := tmpl
	// Like BOINC, search again from the start after every substitution. The
	// bound only stops names that would make BOINC itself loop for ever.
	for n := 0; ; n++ {
		if n > len(tmpl)+1 || len(s) > 4*maxBlob {
			return s, fmt.Errorf("result template macros do not stop expanding")
		}
		if p := strings.Index(s, outMacro); p >= 0 {
			q := s[p+len(outMacro):]
			end := strings.Index(q, "/>")
			if end < 0 || strings.IndexByte(q, '>') != end+1 {
				return s, fmt.Errorf("malformed %s.../> macro in result template", outMacro)
			}
			s = s[:p] + base + q[:end] + q[end+2:]
			continue
		}
		if p := strings.Index(s, urlMacro); p >= 0 {
			s = s[:p] + uploadURL + s[p+len(urlMacro):]
			continue
		}
		break
	}
	if strings.Contains(s, "<output_template>") {
		// BOINC drops as many leading bytes as the tag is long, wherever the
		// tag stands, and cuts at the first end tag.
		s = s[len("<output_template>"):]
		if i := strings.Index(s, "</output_template>"); i >= 0 {
			s = s[:i]
		}
	}
	return stripWS(s), nil
}

// outFile is one output of a result, in <result> file_ref order.
type outFile struct {
	name      string // physical name <result>_r<R>_<k>
	openName  string
	maxNBytes float64 // <max_nbytes>; 0 when absent or not a number, as BOINC's client reads it (FILE_INFO's default)
	optional  bool
	uploadURL string // the file_info's <url>
	gzip      bool   // the file_info's <gzip_when_done/>: the client compresses it before upload
}

// parseResultDoc reads the outputs of result.xml_doc_in. Like BOINC's
// get_output_file_infos it wants <file_name> and <open_name> in every
// <file_ref> of <result>; the outputs found are returned with that error.
// An output is optional only by an <optional/> in its <file_ref>: the
// client reads it there alone (FILE_REF::parse), and fails a result whose
// output is absent though its <file_info> says <optional/>.
func parseResultDoc(doc string) ([]outFile, error) {
	root := parseTree(doc)
	infos := map[string]*xnode{}
	for _, fi := range root.all("file_info") {
		if n := fi.value("name"); n != "" {
			infos[n] = fi
		}
	}
	var outs []outFile
	var err error
	for _, r := range root.all("result") {
		for _, fr := range r.all("file_ref") {
			o := outFile{name: fr.value("file_name"), openName: fr.value("open_name"), optional: fr.has("optional")}
			if o.name == "" || o.openName == "" {
				err = fmt.Errorf("result template: a <file_ref> lacks <file_name> or <open_name>")
			}
			if fi := infos[o.name]; fi != nil {
				if v, ok := cStrtod(fi.value("max_nbytes")); ok {
					o.maxNBytes = v
				}
				o.uploadURL = fi.value("url")
				o.gzip = fi.has("gzip_when_done")
			}
			outs = append(outs, o)
		}
	}
	return outs, err
}
