package setup

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/templates"
)

// The two ways finished work units reach rboinc.
const (
	AssimHook   = "hook"   // BOINC's script_assimilator runs rboinc's hook per work unit
	AssimNative = "native" // rboinc's assimilator daemon reads BOINC's database
)

// NativeDaemonName names the native assimilator's log and pid files in
// the project's log_<host>/ and pid_<host>/.
const NativeDaemonName = "rboinc_assimilator"

// nativeCmd is the daemon's command: rboinc-server is found in the
// project's bin/ (a link init puts there), which bin/start puts first in
// PATH.
func nativeCmd(root string, apps []string, extra string) string {
	var b strings.Builder
	b.WriteString("rboinc-server assimilator --root " + root + " -d 3")
	for _, a := range apps {
		b.WriteString(" --app " + a)
	}
	return b.String() + extra
}

// StandinAssimilatorCmd is the native assimilator the stand-in runs: every
// app of rboinc's queues, looking often (the stand-in computes in seconds).
func StandinAssimilatorCmd(root string) string {
	return nativeCmd(root, nil, " --sleep_interval 0.2")
}

// NativeDaemonLine is the config.xml entry of the native assimilator for
// the apps of rboinc's queues.
func NativeDaemonLine(root string, p *boinc.Project, qs []*templates.Queue) DaemonLine {
	seen := map[string]bool{}
	var apps []string
	for _, q := range qs {
		if !seen[q.Application] {
			seen[q.Application] = true
			apps = append(apps, q.Application)
		}
	}
	sort.Strings(apps)
	if len(apps) == 0 {
		apps = []string{"APP"}
	}
	line := "<daemon><cmd>" + nativeCmd(root, apps, "") + "</cmd><output>" + NativeDaemonName + ".log</output><pid_file>" + NativeDaemonName + ".pid</pid_file></daemon>"
	d := DaemonLine{App: strings.Join(apps, ","), Line: line}
	have := p.NativeAssimilatorApps()
	d.Present = len(apps) > 0
	for _, a := range apps {
		d.Present = d.Present && have.Covers(a)
	}
	return d
}

// installServerLink puts rboinc-server into the project's bin/ (a
// symbolic link), where bin/start finds the native assimilator's program.
func installServerLink(proj, exe string) error {
	dst := filepath.Join(proj, "bin", "rboinc-server")
	if target, err := os.Readlink(dst); err == nil && target == exe {
		return nil
	}
	tmp := dst + ".rboinc-new"
	os.Remove(tmp)
	if err := os.Symlink(exe, tmp); err != nil {
		return fmt.Errorf("linking rboinc-server into %s: %w", filepath.Dir(dst), err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("linking rboinc-server into %s: %w", filepath.Dir(dst), err)
	}
	return nil
}
