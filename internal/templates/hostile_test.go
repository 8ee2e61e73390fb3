package templates

import (
	"strings"
	"testing"
)

// TestHostileXML: templates are read from the project, but a hostile or
// broken one must be refused with a message, never expanded,
// followed outside, or allowed to exhaust the server.
func TestHostileXML(t *testing.T) {
	laughs := `<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>`
	deep := strings.Repeat("<a>", 100000) + strings.Repeat("</a>", 100000)
	cases := []struct {
		name, old, new string
		want           string
	}{
		{"billion laughs", "<rboinc", laughs + "<rboinc", "declarations are not allowed"},
		{"laughs used", "1e9", "&d;", "not a readable XML template"},
		{"external entity", "<rboinc", `<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><rboinc`, "declarations are not allowed"},
		{"parameter entity", "<rboinc", `<!DOCTYPE r [<!ENTITY % x SYSTEM "http://127.0.0.1:1/x"> %x;]><rboinc`, "declarations are not allowed"},
		{"entity in open_name", "<open_name>LICENSE</open_name>", "<open_name>&passwd;</open_name>", "not a readable XML template"},
		{"deep nesting", "<rsc_fpops_est>", deep + "<rsc_fpops_est>", ""},
		{"deep unclosed", "<rsc_fpops_est>", strings.Repeat("<a>", 100000) + "<rsc_fpops_est>", "not a readable XML template"},
		{"many attributes", `<rboinc application="app"`, `<rboinc application="app"` + strings.Repeat(` x="1"`, 20000), "unknown attribute"},
		{"huge attribute", `description="d"`, `description="` + strings.Repeat("d", 900000) + `"`, ""},
		{"CDATA open_name", "<open_name>LICENSE</open_name>", "<open_name><![CDATA[../../etc/passwd]]></open_name>", "contains '/'"},
		{"processing instruction", "<rboinc", `<?xml-stylesheet href="http://127.0.0.1:1/x"?><rboinc`, ""},
	}
	for _, c := range cases {
		wu := strings.Replace(baseWU, c.old, c.new, 1)
		if wu == baseWU {
			t.Fatalf("%s: %q not in the base template", c.name, c.old)
		}
		_, err := Parse("t", []byte(wu), []byte(baseResult), wuPath, resPath)
		switch {
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		case err != nil && len(err.Error()) > 2000:
			t.Errorf("%s: the message is %d bytes long", c.name, len(err.Error()))
		}
		msg := "accepted"
		if err != nil {
			msg = err.Error()
		}
		t.Logf("%-22s -> %.150s", c.name, msg)
		if err != nil && strings.Contains(err.Error(), "root:") {
			t.Errorf("%s: something was expanded: %.200v", c.name, err)
		}
	}
}
