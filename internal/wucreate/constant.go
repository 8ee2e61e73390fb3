package wucreate

import (
	"errors"
	"fmt"
	"os"

	"github.com/rboinc/rboinc/internal/boinc"
)

// ConstantStaged tells why create_work would refuse a constant input
// (<physical_name> name in the WU template) of the project, nil when it
// would take it: the file must be at its place in the download hierarchy
// with a valid .md5 sidecar beside it ("missing MD5 info file"), as BOINC's
// bin/stage_file leaves it. It only looks.
func ConstantStaged(p *boinc.Project, name string) error {
	if BadPhysicalName(name) {
		return fmt.Errorf("constant input %q: not a name BOINC takes", name)
	}
	path := p.DownloadPath(name)
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("constant input %s is not staged: %s does not exist (stage it as BOINC's bin/stage_file does, with its .md5 sidecar)", name, path)
		}
		return fmt.Errorf("constant input %s: %w", name, err)
	}
	if _, _, ok := boinc.ReadSidecar(path); !ok {
		return fmt.Errorf("constant input %s has no valid .md5 sidecar (%s.md5), which create_work wants of a constant file: stage it as BOINC's bin/stage_file does", name, path)
	}
	return nil
}
