package wucreate

// GzipInputs tells, for each variable input of an input template (a
// <file_info> without <physical_name>: the files create_work is given, in
// order), whether BOINC serves it compressed (<gzip/>): create_work then
// wants a .gz copy of it beside it in the download hierarchy. The template
// is read as process_input_template reads it.
func GzipInputs(tmpl string) []bool {
	var out []bool
	x := newScanner(tmpl)
	for x.getTag() {
		if !x.isTag || x.tag != "file_info" {
			continue
		}
		gzip, constant := false, false
	info:
		for x.getTag() {
			if v, ok := x.parseBool("gzip"); ok {
				gzip = v
				continue
			}
			if v, ok := x.parseStr("physical_name", smallBufLen); ok {
				constant = v != ""
				continue
			}
			if x.match("/file_info") {
				if !constant {
					out = append(out, gzip)
				}
				break info
			}
			if _, err := x.copyElement(); err != nil {
				return out
			}
		}
	}
	return out
}
