package standin

import (
	"fmt"
	"strconv"
	"strings"
)

// What a volunteer's client does with a finished task whose output is
// absent or over its <max_nbytes> (client/cs_apps.cpp app_finished): the
// file's status becomes ERR_NOT_FOUND (file_size's error) or
// ERR_FILE_TOO_BIG (the file is deleted), the result COMPUTE_ERROR with the
// app's exit_status kept, and garbage_collect reports it through
// report_result_error: "upload failure: " and each such file's
// FILE_INFO::failure_message in a <message> appended to stderr_out.
const (
	errNotFound   = -161
	errFileTooBig = -131
)

// outputFailure is one output the client found wrong.
type outputFailure struct {
	name     string // physical name
	openName string
	code     int
	size     int64   // errFileTooBig: the file's size
	max      float64 // errFileTooBig: its max_nbytes
}

// outputsError is every output of a finished task that was absent or too
// big: the client checks them all before reporting.
type outputsError []outputFailure

func (e outputsError) Error() string {
	var parts []string
	for _, f := range e {
		switch {
		case f.code == errFileTooBig && f.max <= 0:
			parts = append(parts, fmt.Sprintf("output file %s (%s) is %d bytes, over its max_nbytes %.0f: its <file_info> has no <max_nbytes> above 0, and BOINC's client then takes every nonempty output for too big", f.openName, f.name, f.size, f.max))
		case f.code == errFileTooBig:
			parts = append(parts, fmt.Sprintf("output file %s (%s) is %d bytes, over its max_nbytes %.0f", f.openName, f.name, f.size, f.max))
		default:
			parts = append(parts, fmt.Sprintf("output file %s (%s) absent", f.openName, f.name))
		}
	}
	return strings.Join(parts, "; ")
}

// clientMessage is what the client appends to the result's stderr_out.
func (e outputsError) clientMessage() string {
	var b strings.Builder
	b.WriteString("<message>\nupload failure: ")
	for _, f := range e {
		b.WriteString("<file_xfer_error>\n  <file_name>" + f.name + "</file_name>\n  <error_code>" +
			strconv.Itoa(f.code) + " (" + fileError(f.code) + ")</error_code>\n</file_xfer_error>\n")
	}
	b.WriteString("</message>\n")
	return b.String()
}

// fileError is boincerror() for the output errors above.
func fileError(code int) string {
	switch code {
	case errNotFound:
		return "not found"
	case errFileTooBig:
		return "file size too big"
	}
	return "Error " + strconv.Itoa(code)
}
