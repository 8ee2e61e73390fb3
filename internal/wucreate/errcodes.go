package wucreate

import "strconv"

// BOINC error numbers (lib/error_numbers.h) that create_work reports.
const (
	errFopen          = -108
	errXMLParseCode   = -112
	errBufferOverflow = -118
	errFileMissing    = -163
	errInvalidParam   = -178
	errNoOption       = -191
)

// BoincError is BOINC's boincerror(): the text create_work prints for a code.
func BoincError(code int) string {
	switch code {
	case errFopen:
		return "fopen() failed"
	case errXMLParseCode:
		return "unexpected XML tag or syntax"
	case errBufferOverflow:
		return "buffer overflow"
	case errFileMissing:
		return "file missing"
	case errInvalidParam:
		return "invalid parameter"
	case errNoOption:
		return "no option"
	}
	return "Error " + strconv.Itoa(code)
}
