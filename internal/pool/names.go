package pool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rboinc/rboinc/internal/boinc"
)

// rboinc's names for contents in BOINC's download hierarchy.
//
// Work units made now name an input rboinc_<md5>: a namespace no other
// BOINC tool uses. Before, rboinc used jf_<md5>, which is exactly the name
// BOINC's own job-file staging (html/user/job_file.php, lib/boinc_submit.py,
// the HTCondor GAHP) gives a content: BOINC's side then treats rboinc's
// file as its own, and its file deleter removes it when one of its batches
// ends, under rboinc's work units. Work units created with jf_ names stay in
// BOINC until they end, so both prefixes are rboinc's: their links are
// checked and linked again (see the engine's input check), collected
// (Unstage) and their temporary names swept.
const (
	physicalPrefix = "rboinc_"
	legacyPrefix   = "jf_"
)

// PhysicalName is the immutable BOINC name of a content in new work units.
func PhysicalName(sum string) string { return physicalPrefix + sum }

// LegacyPhysicalName is the name work units made before rboinc had a
// namespace of its own gave content sum.
func LegacyPhysicalName(sum string) string { return legacyPrefix + sum }

// ParsePhysicalName gives the content a download name of rboinc's stands
// for (either prefix); ok is false for any other name.
func ParsePhysicalName(name string) (sum string, ok bool) {
	for _, p := range []string{physicalPrefix, legacyPrefix} {
		if s, found := strings.CutPrefix(name, p); found && ValidMD5(s) {
			return s, true
		}
	}
	return "", false
}

// IsDownloadTempName tells whether name is a temporary name rboinc's
// atomic writes leave beside one of its download names (either prefix)
// when a crash cuts them short.
func IsDownloadTempName(name string) bool {
	return (strings.HasPrefix(name, "."+physicalPrefix) || strings.HasPrefix(name, "."+legacyPrefix)) && IsTempName(name)
}

// Restage puts content sum back at download name (one of rboinc's, either
// prefix) after it went missing or was replaced: a hard link (a copy across
// file systems) through a temporary name and a rename, so that a download
// in progress sees the old file or the new one whole, then its sidecar.
func (p *Pool) Restage(proj *boinc.Project, name, sum string, size int64) error {
	if got, ok := ParsePhysicalName(name); !ok || got != sum {
		return fmt.Errorf("%s is not rboinc's download name of content %s", name, sum)
	}
	dst := proj.DownloadPath(name)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("linking %s again: %w", name, err)
	}
	if err := linkOrCopy(p.Path(sum), dst); err != nil {
		return fmt.Errorf("linking %s again from the pool: %w", name, err)
	}
	if err := boinc.WriteSidecar(dst, sum, size); err != nil {
		return fmt.Errorf("writing the sidecar of %s: %w", name, err)
	}
	return nil
}
