package standin

import (
	"fmt"
	"strings"
)

// clientVersion is the BOINC client the stand-in's volunteers report as
// (the version a real server was seen to record).
const clientVersion = "7.20.5"

// stderrOut is result.stderr_out as a real BOINC client reports it and the
// scheduler stores it (the raw contents of the report's <stderr_out>,
// client/result.cpp RESULT::write): the client's version, then in a CDATA
// section the client's messages of the app's exit (pre), the app's stderr
// in <stderr_txt> (read_stderr_file: its last bytes, each non-ASCII byte as
// &#N;) when the task ran, and the client's later messages (msg). The whole
// is at most max bytes: the app's stderr loses its beginning first.
func stderrOut(stderr string, ran bool, pre, msg string, max int) string {
	head := "\n<core_client_version>" + clientVersion + "</core_client_version>\n"
	msg = pre + msg
	if !ran && msg == "" {
		return head
	}
	const open, end = "<![CDATA[\n", "]]>\n"
	if !ran {
		return head + open + withNewline(msg) + end
	}
	const txtOpen, txtEnd = "<stderr_txt>\n", "\n</stderr_txt>\n"
	budget := max - len(head) - len(open) - len(txtOpen) - len(txtEnd) - len(msg) - len(end) - 1
	txt := keepTail(nonASCIIEscape(stderr), budget)
	return head + open + withNewline(pre+txtOpen+txt+txtEnd+msg[len(pre):]) + end
}

func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// nonASCIIEscape is BOINC's non_ascii_escape: each byte over 127 as &#N;.
func nonASCIIEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c > 127 {
			fmt.Fprintf(&b, "&#%d;", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// keepTail is the last n bytes of an escaped text (none if n <= 0), not
// starting within an entity.
func keepTail(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, ';'); i >= 0 && i < 6 && !strings.Contains(s[:i], "&") {
		s = s[i+1:] // the rest of an entity cut in two
	}
	return s
}
