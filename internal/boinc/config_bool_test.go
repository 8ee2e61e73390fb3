package boinc

import (
	"os"
	"path/filepath"
	"testing"
)

// TestParseBoolAsBOINC: flags read as BOINC's XML_PARSER::parse_bool reads
// them, so that what rboinc (doctor, the stand-in) believes of
// <enable_assignment> is what BOINC's scheduler does.
func TestParseBoolAsBOINC(t *testing.T) {
	for v, want := range map[string]bool{
		"": true, "1": true, "2": true, "-1": true, "+1": true, "0x10": true, "010": true, "007": true,
		"0": false, "00": false, "0x0": false, "-0": false,
		"true": false, "yes": false, "0x": false, "08": false, "1.0": false, "1 2": false, "+": false, "0b1": false, "1_0": false,
	} {
		if got := parseBool(v); got != want {
			t.Errorf("parseBool(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestLoadProjectAssignmentFlags(t *testing.T) {
	for cfg, want := range map[string][2]bool{
		"": {false, false},
		"<enable_assignment>1</enable_assignment>":    {true, false},
		"<enable_assignment/>":                        {true, false},
		"<enable_assignment>true</enable_assignment>": {false, false},
		"<enable_assignment> 1 </enable_assignment><enable_assignment_multi>1</enable_assignment_multi>": {true, true},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "config.xml"), []byte("<boinc><config><download_dir>/d</download_dir><upload_dir>/u</upload_dir>"+cfg+"</config></boinc>\n"), 0o644)
		p, err := LoadProject(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := [2]bool{p.EnableAssignment, p.EnableAssignmentMulti}; got != want {
			t.Errorf("%s: got %v, want %v", cfg, got, want)
		}
	}
}
