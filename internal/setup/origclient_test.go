package setup

import (
	"path/filepath"
	"strings"
	"testing"
)

// The checks note a queue parameter that the original boinc_submit takes
// for one of its own options (-v for -verbose: "Mandatory file for
// parameter -v is missing"; -App for -app_name, the file then taken for
// the queue's name), and no other (-A is ambiguous, so the client passes
// it through to the parameters).
func TestOriginalClientParameterNotes(t *testing.T) {
	proj := fakeProject(t, t.TempDir())
	wu := `<rboinc application="app" description="d"/>
<file_info>
</file_info>
<file_info>
</file_info>
<file_info>
</file_info>
<file_info>
</file_info>
<workunit>
    <file_ref>
        <open_name>v.dat</open_name>
        <rboinc parameter_name="v"/>
    </file_ref>
    <file_ref>
        <open_name>a.dat</open_name>
        <rboinc parameter_name="A"/>
    </file_ref>
    <file_ref>
        <open_name>vel.dat</open_name>
        <rboinc parameter_name="vel_file"/>
    </file_ref>
    <file_ref>
        <open_name>app.dat</open_name>
        <rboinc parameter_name="App"/>
    </file_ref>
</workunit>
`
	res := `<file_info>
    <name><OUTFILE_0/></name>
    <url><UPLOAD_URL/></url>
    <max_nbytes>1000</max_nbytes>
</file_info>
<result>
    <file_ref>
        <file_name><OUTFILE_0/></file_name>
        <open_name>out</open_name>
    </file_ref>
</result>
`
	write(t, filepath.Join(proj, "templates", "rboinc_short_wu"), wu, 0o644)
	write(t, filepath.Join(proj, "templates", "rboinc_short_result"), res, 0o644)
	var notes []string
	for _, x := range CheckProject(proj, false).Findings {
		if x.Severity == Note && strings.Contains(x.Msg, "original Perl boinc_submit") {
			notes = append(notes, x.Msg)
		}
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "queue short: the original Perl boinc_submit cannot be given parameter -v: its option parser takes it for its own -verbose.") ||
		!strings.Contains(notes[1], "parameter -App: its option parser takes it for its own -app_name. rboinc-submit and the GAHP are not affected; for the original client rename the parameter in "+filepath.Join(proj, "templates", "rboinc_short_wu")) {
		t.Fatalf("notes:\n%s", strings.Join(notes, "\n"))
	}
}
