package legacy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrappedTemplateAnswer: a queue whose templates are wrapped in
// <input_template> and <output_template> (BOINC accepts both, and its PHP
// submission needs them) is answered to get_wu_template as the same queue
// unwrapped: the original clients read WuTemplate/rboinc/@application and
// WuTemplate/workunit/file_ref, and found neither under the wrapper ("Not a
// remote-enabled application").
func TestWrappedTemplateAnswer(t *testing.T) {
	w := newWorld(t)
	for _, kind := range []struct{ suffix, wrapper string }{{"wu", "input_template"}, {"result", "output_template"}} {
		b, err := os.ReadFile(filepath.Join("testdata", "templates", "rboinc_metabeta_"+kind.suffix))
		if err != nil {
			t.Fatal(err)
		}
		wrapped := "<" + kind.wrapper + ">\n" + string(b) + "</" + kind.wrapper + ">\n"
		write(t, filepath.Join(w.e.Proj.Dir, "templates", "rboinc_metawrap_"+kind.suffix), wrapped, 0o644)
	}
	plain := w.post("toni", ret, "application=metabeta&action=get_wu_template")
	got := w.post("toni", ret, "application=metawrap&action=get_wu_template")
	if got != plain {
		t.Errorf("wrapped queue answered\n%s\nwant the unwrapped queue's answer\n%s", got, plain)
	}
	if strings.Contains(got, "input_template") || strings.Contains(got, "output_template") {
		t.Errorf("the wrappers are in the answer:\n%s", got)
	}
}
