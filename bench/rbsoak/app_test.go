package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildApp compiles bench/langevin/langevin.c as bench/soak.sh does.
func buildApp(t *testing.T) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no cc: bench/soak.sh runs the shipped script then")
	}
	bin := filepath.Join(t.TempDir(), "langevin")
	if out, err := exec.Command(cc, "-std=c11", "-O2", "-Wall", "-Werror", "-o", bin, "../langevin/langevin.c", "-lm").CombinedOutput(); err != nil {
		t.Fatalf("cc: %v: %s", err, out)
	}
	return bin
}

// runIn runs the app in dir; its exit code and stderr.
func runIn(t *testing.T, app, dir string) (int, string) {
	t.Helper()
	cmd := exec.Command(app)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSoakAppComputesAStep: the soak's app does the shipped script's work
// on its inputs: a step moves the particles (so that a chain's outputs,
// fed back as its next inputs, change from step to step and a lost or
// swapped step shows in the MD5s), the same inputs give the same outputs
// (a replica agrees), and the configuration's steps, failures and retries
// act as the script's, with its exit codes.
func TestSoakAppComputesAStep(t *testing.T) {
	app := buildApp(t)
	in := map[string]string{"LICENSE": "x\n", "input.coor": coords, "input.vel": "0 0 0\n0 0 0\n0 0 0\n0 0 0\n", "input.conf": "steps 20\n"}
	step := func(files map[string]string) map[string]string {
		dir := t.TempDir()
		writeFiles(t, dir, files)
		if code, stderr := runIn(t, app, dir); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		out := map[string]string{}
		for _, f := range []string{"output.coor", "output.vel", "progress.log"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			out[f] = string(b)
		}
		return out
	}
	first := step(in)
	if lines := strings.Count(first["output.coor"], "\n"); lines != 4 || strings.Count(first["output.vel"], "\n") != 4 {
		t.Fatalf("outputs of 4 particles: %q %q", first["output.coor"], first["output.vel"])
	}
	if first["output.coor"] == coords || !strings.HasPrefix(first["progress.log"], "step 10 kinetic_energy ") || !strings.Contains(first["progress.log"], "\nstep 20 kinetic_energy ") {
		t.Fatalf("a step did no work: coordinates %q, progress %q", first["output.coor"], first["progress.log"])
	}
	if again := step(in); again["output.coor"] != first["output.coor"] || again["output.vel"] != first["output.vel"] {
		t.Fatal("the same inputs gave other outputs: replicas would disagree")
	}
	next := map[string]string{"LICENSE": "x\n", "input.coor": first["output.coor"], "input.vel": first["output.vel"], "input.conf": "steps 20\n"}
	if second := step(next); second["output.coor"] == first["output.coor"] {
		t.Fatal("the next step's outputs are its inputs: the chain does not move")
	}

	for _, c := range []struct {
		name  string
		files map[string]string
		drop  string
		code  int
	}{
		{"no LICENSE", nil, "LICENSE", 3},
		{"no coordinates", nil, "input.coor", 2},
		{"fail", map[string]string{"input.conf": "steps 5\nfail 1\n"}, "", 4},
		{"disagreeing counts", map[string]string{"input.vel": "0 0 0\n"}, "", 2},
	} {
		dir := t.TempDir()
		writeFiles(t, dir, in)
		writeFiles(t, dir, c.files)
		if c.drop != "" {
			os.Remove(filepath.Join(dir, c.drop))
		}
		if code, stderr := runIn(t, app, dir); code != c.code || stderr == "" {
			t.Errorf("%s: exit %d (%q), want %d with a message", c.name, code, stderr, c.code)
		}
	}

	dir := t.TempDir()
	writeFiles(t, dir, in)
	writeFiles(t, dir, map[string]string{"input.conf": "steps 2\nfailtimes 2 runs.count\n"})
	for run, want := range []int{4, 4, 0, 0} {
		if code, stderr := runIn(t, app, dir); code != want {
			t.Fatalf("failtimes 2, run %d: exit %d (%s), want %d", run+1, code, stderr, want)
		}
	}
}

// TestInstallApp: the app replaces the langevin queue's run, executable,
// and a missing queue is an error rather than a new one.
func TestInstallApp(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "app")
	writeFiles(t, dir, map[string]string{"app": "#!/bin/true\n"})
	dst := filepath.Join(dir, "apps", "langevin", "run")
	if err := installApp(dst, src); err == nil {
		t.Fatal("installed into a project without the langevin queue")
	}
	os.MkdirAll(filepath.Dir(dst), 0o755)
	writeFiles(t, filepath.Dir(dst), map[string]string{"run": "old"})
	if err := installApp(dst, src); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dst)
	if b, _ := os.ReadFile(dst); err != nil || string(b) != "#!/bin/true\n" || fi.Mode().Perm()&0o111 == 0 {
		t.Fatalf("installed run: %q, mode %v, %v", b, fi.Mode(), err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(dst)); len(ents) != 1 {
		t.Fatalf("left beside run: %v", ents)
	}
}
