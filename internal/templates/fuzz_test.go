package templates

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: Parse must never panic, and an accepted pair must give
// templates that are still XML, free of <rboinc>, with one <file_info>
// (each with one <no_delete/>) per input.
func FuzzParse(f *testing.F) {
	f.Add([]byte(baseWU), []byte(baseResult))
	for _, name := range []string{"uc2", "metabeta"} {
		wu, _ := os.ReadFile(filepath.Join("testdata", "rboinc_"+name+"_wu"))
		res, _ := os.ReadFile(filepath.Join("testdata", "rboinc_"+name+"_result"))
		f.Add(wu, res)
	}
	f.Add([]byte("<rboinc application='a'/><file_info/><workunit><file_ref><copy_file/><rboinc immutable='1'/></file_ref></workunit>"),
		[]byte("<result>\n</result>"))
	f.Fuzz(func(t *testing.T, wu, res []byte) {
		q, err := Parse("f", wu, res, "wu", "result")
		if err != nil {
			return
		}
		checkCleanWU(t, q.WUTemplate("rsc_fpops_est", "target_nresults"), len(q.Inputs))
		checkCleanResult(t, q.ResultTemplate())
	})
}
