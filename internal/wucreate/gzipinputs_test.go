package wucreate

import (
	"reflect"
	"testing"
)

// TestGzipInputs: which of a template's variable inputs (constants left
// out, as create_work gives them no name) BOINC serves compressed, read
// as process_input_template reads <gzip/>.
func TestGzipInputs(t *testing.T) {
	for tmpl, want := range map[string][]bool{
		`<file_info><gzip/></file_info><file_info></file_info><workunit/>`: {true, false},
		`<input_template><file_info><number>0</number><sticky/></file_info>
<file_info><physical_name>c.dat</physical_name><gzip/></file_info>
<file_info><gzip>1</gzip><no_delete/></file_info><file_info><gzip>0</gzip></file_info><workunit/></input_template>`: {false, true, false},
		`<workunit/>`: nil,
	} {
		if got := GzipInputs(tmpl); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", tmpl, got, want)
		}
	}
}
