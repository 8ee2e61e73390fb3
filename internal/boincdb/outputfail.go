package boincdb

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/beevik/etree"
)

// BOINC's client errors for an output of a finished task
// (lib/error_numbers.h; client/cs_apps.cpp app_finished): absent (the
// error of file_size) or over its <max_nbytes>.
const (
	ErrNotFound   = -161
	ErrFileTooBig = -131
)

// OutputFailure is an output a volunteer's client found absent or too big
// when its task ended. The client reports it in the result's stderr_out
// only, after "upload failure:" (report_result_error), as a
// <file_xfer_error> with the file's physical name and error code; the
// result's exit_status stays the application's, often 0.
type OutputFailure struct {
	Name     string // physical name
	OpenName string // the name the application wrote, from the result's xml_doc_in ("" if not there)
	Code     int
	// MaxNBytes is the file's <max_nbytes> in the result's xml_doc_in
	// (from the queue's output template), 0 when not known.
	MaxNBytes float64
	// NoLimit: the file's <file_info> in xml_doc_in has no <max_nbytes>
	// above 0, so BOINC's client took every nonempty output for too big.
	NoLimit bool
}

// Text says what went wrong with the output, for the scientist.
func (f OutputFailure) Text() string {
	name := f.OpenName
	if name == "" {
		name = f.Name
	}
	switch f.Code {
	case ErrFileTooBig:
		if f.NoLimit {
			return "output file " + name + " was nonempty while the queue's result template gives it no <max_nbytes> above 0 (BOINC's client then fails every nonempty output): the server's administrator must add one (`rboinc-server doctor` names it)"
		}
		if f.MaxNBytes > 0 {
			return "output file " + name + " was bigger than its limit (max_nbytes " + strconv.FormatFloat(f.MaxNBytes, 'f', -1, 64) + " bytes)"
		}
		return "output file " + name + " was bigger than its limit (max_nbytes)"
	case ErrNotFound:
		return "output file " + name + " was absent"
	}
	return "output file " + name + " failed (BOINC error " + strconv.Itoa(f.Code) + ")"
}

var (
	uploadFailureRE = regexp.MustCompile(`(?s)<message>\s*upload failure:(.*?)</message>`)
	fileXferErrorRE = regexp.MustCompile(`(?s)<file_xfer_error>\s*<file_name>([^<]*)</file_name>\s*<error_code>\s*(-?[0-9]+)`)
)

// outputFailures reads the outputs a client reported as failed from a
// result's stderr_out, with their open names and limits from its
// xml_doc_in.
func outputFailures(stderrOut, xmlDocIn string) []OutputFailure {
	var out []OutputFailure
	for _, m := range uploadFailureRE.FindAllStringSubmatch(stderrOut, -1) {
		for _, f := range fileXferErrorRE.FindAllStringSubmatch(m[1], -1) {
			code, err := strconv.Atoi(f[2])
			if err != nil {
				continue
			}
			out = append(out, OutputFailure{Name: strings.TrimSpace(f[1]), Code: code})
		}
	}
	if len(out) == 0 || xmlDocIn == "" {
		return out
	}
	doc := etree.NewDocument()
	doc.ReadSettings.Permissive = true
	if doc.ReadFromString("<doc>"+xmlDocIn+"</doc>") != nil {
		return out
	}
	limit := map[string]float64{}
	info := map[string]bool{}
	for _, fi := range doc.FindElements("//file_info") {
		n, m := fi.SelectElement("name"), fi.SelectElement("max_nbytes")
		if n != nil {
			info[strings.TrimSpace(n.Text())] = true
		}
		if n != nil && m != nil {
			if v, err := strconv.ParseFloat(strings.TrimSpace(m.Text()), 64); err == nil {
				limit[strings.TrimSpace(n.Text())] = v
			}
		}
	}
	open := map[string]string{}
	for _, fr := range doc.FindElements("//file_ref") {
		n, o := fr.SelectElement("file_name"), fr.SelectElement("open_name")
		if n != nil && o != nil {
			open[strings.TrimSpace(n.Text())] = strings.TrimSpace(o.Text())
		}
	}
	for i := range out {
		out[i].OpenName, out[i].MaxNBytes = open[out[i].Name], limit[out[i].Name]
		out[i].NoLimit = info[out[i].Name] && out[i].MaxNBytes <= 0
	}
	return out
}

// clientMessages strips the client's own <message>s that follow an
// application's stderr when the client did not wrap it in <stderr_txt>
// (the stand-in's results).
func clientMessages(s string) string {
	for {
		t := strings.TrimRight(s, "\n")
		if !strings.HasSuffix(t, "</message>") {
			return s
		}
		i := strings.LastIndex(t, "<message>")
		if i < 0 {
			return s
		}
		s = t[:i]
	}
}
