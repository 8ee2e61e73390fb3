package standin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
)

func TestInitProject(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj")
	if err := InitProject(dir, InitOptions{ServerExe: "relative/rboinc-server"}); err == nil {
		t.Error("relative server path accepted")
	}
	if err := InitProject(dir, InitOptions{ServerExe: "/opt/it's/rboinc-server", Host: "h1", URLBase: "http://u:1"}); err != nil {
		t.Fatal(err)
	}
	p, err := boinc.LoadProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.DownloadDir != filepath.Join(dir, "download") || p.UploadDir != filepath.Join(dir, "upload") || p.Fanout != 1024 ||
		!p.CacheMD5 || p.Host != "h1" || p.DownloadURL != "http://u:1/download" || p.StandinScript != "rboinc_hook" ||
		len(p.Daemons) != 3 || !boinc.IsProjectDir(dir) {
		t.Errorf("project %+v", p)
	}
	for _, d := range []string{"cgi-bin", "templates", "download", "upload", "apps", "tmp_h1", "bin", dbFile} {
		if !fileExists(filepath.Join(dir, d)) {
			t.Errorf("%s missing", d)
		}
	}
	wrapper, _ := os.ReadFile(filepath.Join(dir, "bin", "create_work"))
	if string(wrapper) != "#!/bin/sh\nexec '/opt/it'\\''s/rboinc-server' standin create_work \"$@\"\n" {
		t.Errorf("wrapper %q", wrapper)
	}
	// Again: config.xml and templates are kept, the wrapper follows the binary.
	cfg := filepath.Join(dir, "config.xml")
	custom := strings.Replace(string(mustRead(t, cfg)), "<host>h1</host>", "<host>h2</host>", 1)
	os.WriteFile(cfg, []byte(custom), 0o644)
	os.WriteFile(filepath.Join(dir, "templates", "x_in"), []byte("mine"), 0o644)
	if err := InitProject(dir, InitOptions{ServerExe: "/new/rboinc-server"}); err != nil {
		t.Fatal(err)
	}
	if string(mustRead(t, cfg)) != custom || string(mustRead(t, filepath.Join(dir, "templates", "x_in"))) != "mine" {
		t.Error("existing files clobbered")
	}
	if !strings.Contains(string(mustRead(t, filepath.Join(dir, "bin", "create_work"))), "'/new/rboinc-server'") || !fileExists(filepath.Join(dir, "tmp_h2")) {
		t.Error("wrapper not rewritten or tmp_<host> not made")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestVolunteerAppTimeout(t *testing.T) {
	t.Parallel()
	tp := setupCompute(t)
	tp.write("apps/rbtest/run", "#!/bin/sh\nsleep 30 &\nsleep 30\n", 0o755)
	tp.stage("a_in1.coor", "c\n")
	tp.stage("a_in1.psf", "p\n")
	if _, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", "slow", "a_in1.coor", "a_in1.psf"); code != 0 {
		t.Fatal(errs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- (&Volunteer{ProjectDir: tp.dir, Poll: 20 * time.Millisecond, AppTimeout: 300 * time.Millisecond}).Run(ctx)
	}()
	start := time.Now()
	tp.waitIdle()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 10*time.Second || !strings.Contains(tp.read("hook.log"), "|--error 8 slow ") {
		t.Errorf("after %v, hook log %q", time.Since(start), tp.read("hook.log"))
	}
}
