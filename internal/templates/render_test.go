package templates

import (
	"bytes"
	"strings"
	"testing"
)

func mustParse(t *testing.T, wu, res string) *Queue {
	t.Helper()
	q, err := Parse("t", []byte(wu), []byte(res), wuPath, resPath)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// The reference sample, exactly: annotation lines gone, <no_delete/> added
// on its own line, dropped <workunit> children gone, the rest untouched.
func TestWUTemplateSampleGolden(t *testing.T) {
	q := parseTestdata(t, "uc2")
	want := `<file_info>
    <no_delete/>
    <number>0</number>
</file_info>
<workunit>
    <file_ref>
        <file_number>0</file_number>
        <open_name>in</open_name>
        <copy_file/>
    </file_ref>
    <command_line>--cpu_time 3</command_line>
    <rsc_fpops_bound>1e14</rsc_fpops_bound>
    <rsc_memory_bound>100000000</rsc_memory_bound>
    <rsc_disk_bound>100000000</rsc_disk_bound>
    <delay_bound>3600</delay_bound>
    <min_quorum>1</min_quorum>
</workunit>
`
	if got := string(q.WUTemplate("rsc_fpops_est", "target_nresults")); got != want {
		t.Errorf("WUTemplate:\n%s\nwant:\n%s", got, want)
	}
	if got := string(q.WUTemplate()); !strings.Contains(got, "<rsc_fpops_est>1e10</rsc_fpops_est>") || !strings.Contains(got, "<target_nresults>1</target_nresults>") {
		t.Errorf("WUTemplate() without drop lost elements:\n%s", got)
	}
}

func TestResultTemplateSampleGolden(t *testing.T) {
	q := parseTestdata(t, "uc2")
	_, res := readPair(t, "testdata", "uc2")
	want := strings.Replace(string(res), "    <rboinc aliases=\".coor .coor.gz\" chain=\"0\"/>\n", "", 1)
	if got := string(q.ResultTemplate()); got != want {
		t.Errorf("ResultTemplate:\n%s\nwant:\n%s", got, want)
	}
}

func TestTemplatesMetabeta(t *testing.T) {
	q := parseTestdata(t, "metabeta")
	wu := q.WUTemplate("rsc_fpops_est", "target_nresults")
	res := q.ResultTemplate()
	for _, b := range [][]byte{wu, res} {
		if bytes.Contains(b, []byte("rboinc")) {
			t.Errorf("still mentions rboinc:\n%s", b)
		}
	}
	for _, s := range []string{`<?xml version="1.0"?>` + "\n", "<!-- metabeta", "<rsc_fpops_bound>12.5e15</rsc_fpops_bound>", "<delay_bound>432000</delay_bound>"} {
		if !bytes.Contains(wu, []byte(s)) {
			t.Errorf("WU template lost %q", s)
		}
	}
	if bytes.Contains(wu, []byte("rsc_fpops_est")) {
		t.Error("rsc_fpops_est not dropped")
	}
	if n := bytes.Count(wu, []byte("<no_delete/>")); n != 11 {
		t.Errorf("%d <no_delete/>, want 11", n)
	}
	if n := bytes.Count(wu, []byte("<file_info>\n")); n != 11 {
		t.Errorf("%d <file_info> at line ends, want 11", n)
	}
	for _, s := range []string{"<OUTFILE_0/>", "<OUTFILE_7/>", "<UPLOAD_URL/>", "<result>\n", "<file_info>\n", "<output_template>\n", "<gzip_when_done/>"} {
		if !bytes.Contains(res, []byte(s)) {
			t.Errorf("result template lost %q", s)
		}
	}
	if n := bytes.Count(res, []byte("<file_info>\n")); n != 8 {
		t.Errorf("%d <file_info> at line ends in result, want 8", n)
	}
	checkCleanWU(t, wu, len(q.Inputs))
	checkCleanResult(t, res)
}

func TestWUTemplateEdits(t *testing.T) {
	wu := "<?xml version='1.0' encoding='UTF-8'?>\n" +
		"<input_template>\n" +
		"<rboinc application='app'>text &amp; more</rboinc>\n" +
		"<file_info/>\n" +
		"<file_info  />\n" +
		"<file_info>\n    <no_delete/>\n</file_info>\n" +
		"<file_info><sticky/></file_info>\n" +
		"<file_info>\r\n\t<sticky/>\r\n</file_info>\n" +
		"<workunit>\n" +
		"  <file_ref><open_name>a</open_name><rboinc parameter_name='a'/></file_ref>\n" +
		"  <file_ref><open_name>b</open_name>   <rboinc parameter_name='b'/>   </file_ref>\n" +
		"  <file_ref>\n    <open_name>c</open_name>\n    <rboinc parameter_name='c'>\n      described\n    </rboinc>\n  </file_ref>\n" +
		"  <file_ref><open_name>d</open_name>\n\t<rboinc parameter_name='d'/>\r\n  </file_ref>\n" +
		"  <file_ref><open_name>e</open_name><rboinc parameter_name='e'/></file_ref>\n" +
		"  <command_line>-x &quot;a b&quot; &lt;in&gt;</command_line>\n" +
		"  <rsc_fpops_est>1</rsc_fpops_est><rsc_fpops_bound>2</rsc_fpops_bound>\n" +
		"  <target_nresults>\n    <rboinc/>\n  </target_nresults>\n" +
		"</workunit>\n" +
		"</input_template>\n"
	res := "<file_info>\n<name><OUTFILE_0/></name>\n</file_info>\n<result>\n<file_ref><file_name><OUTFILE_0/></file_name><open_name>o</open_name></file_ref>\n</result>\n"
	// The <rboinc/> inside <target_nresults> is refused by Parse, so
	// exercise the editor on the parse of a variant without it, then
	// check that an edit inside a dropped element is harmless.
	q := mustParse(t, strings.Replace(wu, "    <rboinc/>\n", "", 1), res)
	want := "<?xml version='1.0' encoding='UTF-8'?>\n" +
		"<input_template>\n" +
		"<file_info><no_delete/></file_info>\n" +
		"<file_info><no_delete/></file_info>\n" +
		"<file_info>\n    <no_delete/>\n</file_info>\n" +
		"<file_info><no_delete/><sticky/></file_info>\n" +
		"<file_info>\r\n\t<no_delete/>\r\n\t<sticky/>\r\n</file_info>\n" +
		"<workunit>\n" +
		"  <file_ref><open_name>a</open_name></file_ref>\n" +
		"  <file_ref><open_name>b</open_name>      </file_ref>\n" +
		"  <file_ref>\n    <open_name>c</open_name>\n  </file_ref>\n" +
		"  <file_ref><open_name>d</open_name>\n  </file_ref>\n" +
		"  <file_ref><open_name>e</open_name></file_ref>\n" +
		"  <command_line>-x &quot;a b&quot; &lt;in&gt;</command_line>\n" +
		"  <rsc_fpops_bound>2</rsc_fpops_bound>\n" +
		"</workunit>\n" +
		"</input_template>\n"
	if got := string(q.WUTemplate("rsc_fpops_est", "target_nresults")); got != want {
		t.Errorf("WUTemplate:\n%q\nwant:\n%q", got, want)
	}
	checkCleanWU(t, q.WUTemplate(), len(q.Inputs))

	// Nested edits inside a dropped element are swallowed by the drop.
	text := []byte(wu)
	i := strings.Index(wu, "  <target_nresults>")
	j := strings.Index(wu, "</target_nresults>\n") + len("</target_nresults>\n")
	k := strings.Index(wu, "    <rboinc/>")
	got := applyEdits(text, []edit{{k, k + len("    <rboinc/>\n"), ""}, {i, j, ""}})
	if want := wu[:i] + wu[j:]; string(got) != want {
		t.Errorf("nested edits:\n%q\nwant\n%q", got, want)
	}
}

// checkCleanWU re-reads a WUTemplate output: still XML, no <rboinc>, one
// <no_delete/> in each of n <file_info>s.
func checkCleanWU(t *testing.T, wu []byte, n int) {
	t.Helper()
	d, err := loadDoc("WUTemplate output", wu)
	if err != nil {
		t.Fatalf("%v\n%s", err, wu)
	}
	if got := d.root.FindElements("//rboinc"); len(got) != 0 {
		t.Errorf("%d <rboinc> left:\n%s", len(got), wu)
	}
	infos := 0
	for _, e := range d.top("input_template") {
		if e.FullTag() != "file_info" {
			continue
		}
		infos++
		if len(children(e, "no_delete")) == 0 {
			t.Errorf("<file_info> #%d has %d <no_delete/>:\n%s", infos-1, len(children(e, "no_delete")), wu)
		}
		if d.spans[e].selfClosing() {
			t.Errorf("self-closing <file_info/> left:\n%s", wu)
		}
	}
	if infos != n {
		t.Errorf("%d <file_info>s, want %d:\n%s", infos, n, wu)
	}
}

func checkCleanResult(t *testing.T, res []byte) {
	t.Helper()
	d, err := loadDoc("ResultTemplate output", res)
	if err != nil {
		t.Fatalf("%v\n%s", err, res)
	}
	if got := d.root.FindElements("//rboinc"); len(got) != 0 {
		t.Errorf("%d <rboinc> left:\n%s", len(got), res)
	}
}

func TestCommandLine(t *testing.T) {
	if got, ok := parseTestdata(t, "uc2").CommandLine(); !ok || got != "--cpu_time 3" {
		t.Errorf("uc2: %q %v", got, ok)
	}
	if got, ok := parseTestdata(t, "metabeta").CommandLine(); ok {
		t.Errorf("metabeta has no command line, got %q", got)
	}
	if got := string(parseTestdata(t, "uc2").WUTemplate("command_line")); strings.Contains(got, "command_line") {
		t.Errorf("dropping the command line left it:\n%s", got)
	}
}

func TestWorkunitInt(t *testing.T) {
	q := parseTestdata(t, "uc2")
	if n, ok := q.WorkunitInt("delay_bound"); !ok || n != 3600 {
		t.Errorf("delay_bound: %d %v", n, ok)
	}
	if n, ok := q.WorkunitInt("max_error_results"); ok {
		t.Errorf("uc2 has no max_error_results, got %d", n)
	}
	if n, ok := q.WorkunitInt("rsc_fpops_est"); ok {
		t.Errorf("1e10 is no integer, got %d", n)
	}
}
