package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	plat := runtime.GOOS + "/" + runtime.GOARCH
	for _, tc := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "63626aa0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
		}}, "rboinc-submit (devel) rev 63626aa01234 (modified) of 2026-01-02T03:04:05Z, go1.26.0 " + plat},
		{debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"},
		}}, "rboinc-submit v1.2.3 rev abc, go1.26.0 " + plat},
		{debug.BuildInfo{GoVersion: "go1.26.0"}, "rboinc-submit (devel), go1.26.0 " + plat},
	} {
		if got := Format("rboinc-submit", &tc.bi); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

func TestVersionOfThisBinary(t *testing.T) {
	if v := Version("x"); !strings.HasPrefix(v, "x ") || !strings.Contains(v, runtime.Version()) {
		t.Errorf("Version = %q", v)
	}
}
