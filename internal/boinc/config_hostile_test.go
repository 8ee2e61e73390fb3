package boinc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileConfigXML: a config.xml with entities or absurd nesting is
// refused with a message; nothing is expanded or read from elsewhere.
func TestHostileConfigXML(t *testing.T) {
	good := "<boinc><config><download_dir>download</download_dir><upload_dir>upload</upload_dir></config></boinc>"
	cases := map[string]string{
		"internal entity":  `<!DOCTYPE boinc [<!ENTITY d "/etc">]><boinc><config><download_dir>&d;</download_dir><upload_dir>u</upload_dir></config></boinc>`,
		"external entity":  `<!DOCTYPE boinc [<!ENTITY d SYSTEM "file:///etc/hostname">]><boinc><config><download_dir>&d;</download_dir><upload_dir>u</upload_dir></config></boinc>`,
		"billion laughs":   `<!DOCTYPE boinc [<!ENTITY a "aaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;">]><boinc><config><download_dir>&c;</download_dir><upload_dir>u</upload_dir></config></boinc>`,
		"deep nesting":     "<boinc>" + strings.Repeat("<x>", 200000) + strings.Repeat("</x>", 200000) + "<config/></boinc>",
		"malformed":        "<boinc><config><download_dir>d</upload_dir></config></boinc>",
		"not boinc":        "<html><config/></html>",
		"bad fanout":       "<boinc><config><download_dir>d</download_dir><upload_dir>u</upload_dir><uldl_dir_fanout>-1; rm -rf /</uldl_dir_fanout></config></boinc>",
		"trailing garbage": good + "<boinc>",
		"zero slots":       "<boinc><config><download_dir>d</download_dir><upload_dir>u</upload_dir><rboinc_standin_slots>0</rboinc_standin_slots></config></boinc>",
		"bad slots":        "<boinc><config><download_dir>d</download_dir><upload_dir>u</upload_dir><rboinc_standin_slots>many</rboinc_standin_slots></config></boinc>",
		"too many slots":   "<boinc><config><download_dir>d</download_dir><upload_dir>u</upload_dir><rboinc_standin_slots>100000</rboinc_standin_slots></config></boinc>",
	}
	for name, xml := range cases {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "config.xml"), []byte(xml), 0o644)
		p, err := LoadProject(dir)
		if err == nil {
			t.Errorf("%s: accepted: %+v", name, p)
			continue
		}
		if !strings.Contains(err.Error(), "config") {
			t.Errorf("%s: the message does not name the file: %v", name, err)
		}
		t.Logf("%-16s -> %.160v", name, err)
	}
}
