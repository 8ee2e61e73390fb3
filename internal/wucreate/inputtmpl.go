package wucreate

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rboinc/rboinc/internal/boinc"
)

// maxXMLString is BOINC's MAX_XML_STRING, the parse_string buffer.
const maxXMLString = 262144

// MaxBlob is the size limit of workunit.xml_doc (BLOB_SIZE - 1).
const MaxBlob = 65535

// InFile is a variable input given to create_work: a physical name, or a
// --remote_file description.
type InFile struct {
	Name   string
	Remote bool
	URL    string
	NBytes float64
	MD5    string
}

// templateRun carries what process_input_template needs besides the template.
type templateRun struct {
	p              *boinc.Project
	vars           []InFile
	cmdline        string // create_work's own command line (may be empty)
	additionalXML  string // e.g. <sub_appname>
	stdout, stderr io.Writer
	// sidecars: read inputs' MD5 and size from their .md5 sidecars
	// (native creation); staged, when not nil, remembers them by name.
	sidecars bool
	staged   map[string]stagedFile
}

// processInputTemplate turns an input template into workunit.xml_doc the way
// BOINC's process_input_template does, staging and hashing the inputs on the
// way, and copies the template's job parameters into wu. A non-zero result is
// the BOINC error code; the specific message has been printed already.
func (r *templateRun) processInputTemplate(tmpl string, wu *Row) (string, int) {
	var out strings.Builder
	var infiles []string // physical names of the file_infos seen so far
	nVar := 0
	foundWU := false
	x := newScanner(tmpl)
	for x.getTag() {
		if !x.isTag {
			continue
		}
		switch x.tag {
		case "file_info":
			name, code := r.processFileInfo(x, &out, &nVar)
			if code != 0 {
				return "", code
			}
			if name != "" {
				infiles = append(infiles, name)
			}
		case "workunit":
			foundWU = true
			if code := r.processWorkunit(x, &out, infiles, wu); code != 0 {
				return "", code
			}
		}
		// Anything else, <input_template> included, is skipped without
		// skipping its contents, as in BOINC.
	}
	if !foundWU {
		fmt.Fprintf(r.stderr, "process_input_template: bad WU template - no <workunit>\n")
		return "", errXMLParseCode
	}
	if nVar != len(r.vars) {
		fmt.Fprintf(r.stderr, "process_input_template: %d input files given, but template has %d\n", len(r.vars), nVar)
		return "", errXMLParseCode
	}
	if out.Len() > MaxBlob {
		fmt.Fprintf(r.stderr, "create_work: WU XML field is too long (%d bytes; max is %d)\n", out.Len(), MaxBlob)
		return "", errBufferOverflow
	}
	return out.String(), 0
}

// processFileInfo handles one <file_info>; it returns the file's physical
// name, or "" when the template ended inside the element.
func (r *templateRun) processFileInfo(x *xmlScanner, out *strings.Builder, nVar *int) (string, int) {
	var (
		gzip      bool
		physical  string
		remoteDef bool // <nbytes> > 0: a remote file described in the template
	)
	out.WriteString("<file_info>\n")
	for x.getTag() {
		if v, ok := x.parseBool("gzip"); ok {
			gzip = v
			continue
		}
		if v, ok := x.parseStr("physical_name", smallBufLen); ok {
			physical = v
			continue
		}
		if _, ok := x.parseStr("url", maxXMLString); ok {
			continue
		}
		if _, ok := x.parseInt("number"); ok {
			continue // ignored since 2017: binding is positional
		}
		if _, ok := x.parseStr("md5_cksum", maxXMLString); ok {
			continue
		}
		if v, ok := x.parseDouble("nbytes"); ok {
			remoteDef = v > 0
			continue
		}
		if _, ok := x.parseDouble("gzipped_nbytes"); ok {
			continue
		}
		if x.match("/file_info") {
			return r.finishFileInfo(out, nVar, physical, gzip, remoteDef)
		}
		el, err := x.copyElement()
		if err != nil {
			return "", errXMLParseCode
		}
		out.WriteString(el)
		out.WriteByte('\n')
	}
	return "", 0
}

func (r *templateRun) finishFileInfo(out *strings.Builder, nVar *int, physical string, gzip, remoteDef bool) (string, int) {
	var v InFile
	if physical == "" {
		if *nVar >= len(r.vars) {
			fmt.Fprintf(r.stderr, "Too few var input files given; need at least %d\n", *nVar+1)
			return "", errXMLParseCode
		}
		v = r.vars[*nVar]
	}
	if remoteDef || (physical == "" && v.Remote) {
		fmt.Fprintf(r.stderr, "process_input_template: remote input files (<nbytes> in the template, or --remote_file) are not supported by the BOINC stand-in\n")
		return "", errXMLParseCode
	}
	name := physical
	if name == "" {
		name = v.Name
	}
	if BadPhysicalName(name) {
		fmt.Fprintf(r.stderr, "process_input_template: bad physical file name '%s'\n", name)
		return "", errXMLParseCode
	}
	var (
		sf   stagedFile
		code int
	)
	if physical != "" {
		sf, code = stageConstInput(r.p, name, r.stderr)
	} else if s, ok := r.staged[name]; ok {
		sf = s
	} else {
		sf, code = stageVarInput(r.p, name, r.sidecars, r.stdout, r.stderr)
		if code == 0 && r.staged != nil {
			r.staged[name] = sf
		}
	}
	if code != 0 {
		return "", code
	}
	url := hierURL(r.p.DownloadURL, name, r.p.Fanout)
	fmt.Fprintf(out, "    <name>%s</name>\n    <url>%s</url>\n", name, url)
	if gzip && physical == "" {
		fi, err := statSize(sf.path + ".gz")
		if err != nil {
			fmt.Fprintf(r.stderr, "process_input_template: missing gzip file %s.gz\n", sf.path)
			return "", errFileMissing
		}
		fmt.Fprintf(out, "    <gzipped_url>%s.gz</gzipped_url>\n    <gzipped_nbytes>%d</gzipped_nbytes>\n", url, fi)
	}
	fmt.Fprintf(out, "    <md5_cksum>%s</md5_cksum>\n    <nbytes>%d</nbytes>\n</file_info>\n", sf.md5, sf.nbytes)
	if physical == "" {
		*nVar++
	}
	return name, 0
}

// processWorkunit handles the <workunit> element: file_refs bound by
// position, the command line, and job parameters that override the command
// line's.
func (r *templateRun) processWorkunit(x *xmlScanner, out *strings.Builder, infiles []string, wu *Row) int {
	out.WriteString("<workunit>\n<command_line>\n" + r.cmdline + "\n</command_line>\n")
	nRefs := 0
	for x.getTag() {
		if x.match("/workunit") {
			if r.additionalXML != "" {
				out.WriteString(r.additionalXML + "\n")
			}
			out.WriteString("</workunit>")
			break
		}
		if x.match("file_ref") {
			if nRefs >= len(infiles) {
				out.WriteString("<file_ref>\n")
				fmt.Fprintf(r.stderr, "too many <file_ref>s\n")
				return errXMLParseCode
			}
			if code := r.processFileRef(x, out, infiles[nRefs]); code != 0 {
				return code
			}
			nRefs++
			continue
		}
		if v, ok := x.parseStr("command_line", maxXMLString); ok {
			if r.cmdline != "" {
				fmt.Fprintf(r.stderr, "Can't specify command line %s; already specified as %s\n", v, r.cmdline)
				return errXMLParseCode
			}
			out.WriteString("<command_line>\n" + v + "\n</command_line>\n")
			continue
		}
		if wu.parseParam(x) {
			continue
		}
		el, err := x.copyElement()
		if err != nil {
			return errXMLParseCode
		}
		out.WriteString(el)
		out.WriteByte('\n')
	}
	// Fill in replication limits the template left too small.
	wu.MaxSuccessResults = max(wu.MaxSuccessResults, wu.TargetNResults)
	wu.MaxTotalResults = max(wu.MaxTotalResults, wu.TargetNResults)
	if nRefs != len(infiles) {
		fmt.Fprintf(r.stderr, "#file refs != #file infos\n")
		return errXMLParseCode
	}
	return 0
}

func (r *templateRun) processFileRef(x *xmlScanner, out *strings.Builder, name string) int {
	out.WriteString("<file_ref>\n    <file_name>" + name + "</file_name>\n")
	foundOpen, foundCopy := false, false
	for x.getTag() {
		if v, ok := x.parseStr("open_name", smallBufLen); ok {
			out.WriteString("    <open_name>" + v + "</open_name>\n")
			foundOpen = true
			continue
		}
		if _, ok := x.parseInt("file_number"); ok {
			continue // ignored: binding is positional
		}
		if x.match("copy_file/") {
			out.WriteString("    <copy_file/>\n")
			foundCopy = true
			continue
		}
		if x.match("/file_ref") {
			if !foundOpen && !foundCopy {
				fmt.Fprintf(r.stderr, "No open name found and copy_file not specified\n")
				return errXMLParseCode
			}
			if !foundOpen {
				out.WriteString("    <open_name>" + name + "</open_name>\n")
			}
			out.WriteString("</file_ref>\n")
			return 0
		}
		if _, ok := x.parseStr("file_name", maxXMLString); ok {
			fmt.Fprintf(r.stderr, "<file_name> ignored in <file_ref> element.\n")
			continue
		}
		el, err := x.copyElement()
		if err != nil {
			return errXMLParseCode
		}
		out.WriteString(el)
		out.WriteByte('\n')
	}
	return 0
}

// parseParam consumes a job parameter of the template's <workunit>.
func (wu *Row) parseParam(x *xmlScanner) bool {
	floats := []struct {
		tag string
		v   *float64
	}{
		{"rsc_fpops_est", &wu.RscFpopsEst}, {"rsc_fpops_bound", &wu.RscFpopsBound},
		{"rsc_memory_bound", &wu.RscMemoryBound}, {"rsc_bandwidth_bound", &wu.RscBandwidthBound},
		{"rsc_disk_bound", &wu.RscDiskBound},
	}
	for _, f := range floats {
		if v, ok := x.parseDouble(f.tag); ok {
			*f.v = v
			return true
		}
	}
	ints := []struct {
		tag string
		v   *int
	}{
		{"batch", &wu.Batch}, {"delay_bound", &wu.DelayBound}, {"min_quorum", &wu.MinQuorum},
		{"target_nresults", &wu.TargetNResults}, {"max_error_results", &wu.MaxErrorResults},
		{"max_total_results", &wu.MaxTotalResults}, {"max_success_results", &wu.MaxSuccessResults},
		{"size_class", &wu.SizeClass},
	}
	for _, f := range ints {
		if v, ok := x.parseInt(f.tag); ok {
			*f.v = v
			return true
		}
	}
	return false
}

// hierURL is BOINC's dir_hier_url.
func hierURL(base, name string, fanout int) string {
	if fanout <= 0 {
		return base + "/" + name
	}
	return base + "/" + boinc.FilenameHash(name, fanout) + "/" + name
}

func statSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
