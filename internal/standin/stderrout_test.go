package standin

import (
	"strings"
	"testing"
)

// TestStderrOut: result.stderr_out as a real client reports it (seen on a
// real server: the client's version, then the app's stderr in
// <stderr_txt>), non-ASCII bytes as BOINC's non_ascii_escape writes them,
// the client's message after the app's stderr, and the whole within its
// bound, the app's stderr losing its beginning, never half an entity.
func TestStderrOut(t *testing.T) {
	const head = "\n<core_client_version>7.20.5</core_client_version>\n"
	for _, c := range []struct {
		stderr, pre, msg string
		ran              bool
		want             string
	}{
		{"", "", "", true, head + "<![CDATA[\n<stderr_txt>\n\n</stderr_txt>\n]]>\n"},
		{"done\n", "", "", true, head + "<![CDATA[\n<stderr_txt>\ndone\n\n</stderr_txt>\n]]>\n"},
		{"café", "", "<message>\nupload failure: x</message>\n", true,
			head + "<![CDATA[\n<stderr_txt>\ncaf&#195;&#169;\n</stderr_txt>\n<message>\nupload failure: x</message>\n]]>\n"},
		{"", "", "<message>\nWU download error</message>\n", false, head + "<![CDATA[\n<message>\nWU download error</message>\n]]>\n"},
	} {
		if got := stderrOut(c.stderr, c.ran, c.pre, c.msg, 1000); got != c.want {
			t.Errorf("stderrOut(%q, %v, %q):\n%q\nwant\n%q", c.stderr, c.ran, c.msg, got, c.want)
		}
	}
	// An app that exited with 1, as a real client reported it.
	if got, want := stderrOut("fails on purpose\n", true, "<message>\nprocess exited with code 1 (0x1, -255)</message>\n", "", 1000),
		head+"<![CDATA[\n<message>\nprocess exited with code 1 (0x1, -255)</message>\n<stderr_txt>\nfails on purpose\n\n</stderr_txt>\n]]>\n"; got != want {
		t.Errorf("exit 1:\n%q\nwant\n%q", got, want)
	}
	long := strings.Repeat("é", 2000) // 4,000 bytes, 18,000 escaped
	for _, max := range []int{500, 501, 502, 503, 504, 505} {
		got := stderrOut(long, true, "", "<message>\nm</message>\n", max)
		if len(got) > max {
			t.Errorf("max %d: %d bytes", max, len(got))
		}
		txt := got[strings.Index(got, "<stderr_txt>\n")+len("<stderr_txt>\n") : strings.Index(got, "\n</stderr_txt>")]
		if txt == "" || !strings.HasPrefix(txt, "&#") || !strings.HasSuffix(got, "<message>\nm</message>\n]]>\n") {
			t.Errorf("max %d: %q", max, got)
		}
	}
}
