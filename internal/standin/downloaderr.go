package standin

import "strconv"

// What a volunteer's client reports when it cannot get a work unit's input
// (lib/error_numbers.h; client/client_state.cpp report_result_error): the
// result's exit_status is ERR_RESULT_DOWNLOAD and its client_state stays
// RESULT_FILES_DOWNLOADING; the file's own error is ERR_HTTP_PERMANENT for
// a file the web server does not have (404), ERR_MD5_FAILED for one whose
// content does not match the work unit's <md5_cksum>.
const (
	errResultDownload = -186
	errMD5Failed      = -119
	errHTTPPermanent  = -224
)

// downloadError is an input a volunteer could not download.
type downloadError struct {
	file string
	code int
}

func (e *downloadError) Error() string {
	return "download of input " + e.file + " failed: " + transferError(e.code)
}

// clientMessage is the stderr_out the client reports for the result:
// report_result_error's <message> around WORKUNIT::get_file_errors and
// FILE_INFO::failure_message.
func (e *downloadError) clientMessage() string {
	return "<message>\nWU download error: couldn't get input files:\n<file_xfer_error>\n  <file_name>" + e.file +
		"</file_name>\n  <error_code>" + strconv.Itoa(e.code) + " (" + transferError(e.code) + ")</error_code>\n</file_xfer_error>\n</message>\n"
}

// transferError is boincerror() for the transfer errors above.
func transferError(code int) string {
	switch code {
	case errMD5Failed:
		return "md5 checksum failed for file"
	case errHTTPPermanent:
		return "permanent HTTP error"
	}
	return "Error " + strconv.Itoa(code)
}
