package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rboinc/rboinc/internal/mariadbtest"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/client"
)

// withUmask runs the test under the usual umask (022), with which files
// made without an explicit mode are readable by everyone.
func withUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
}

// runServer runs rboinc-server in this process with stdin as its
// standard input, and returns its exit code and what it wrote to stderr.
func runServer(t *testing.T, stdin string, args ...string) (int, string) {
	t.Helper()
	in, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	in.WriteString(stdin)
	in.Seek(0, io.SeekStart)
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	oldIn, oldErr := os.Stdin, os.Stderr
	os.Stdin, os.Stderr = in, errW
	var stderr bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&stderr, errR); close(done) }()
	code := runContext(context.Background(), app(slog.New(slog.NewTextHandler(io.Discard, nil))), append([]string{"rboinc-server"}, args...))
	os.Stdin, os.Stderr = oldIn, oldErr
	errW.Close()
	<-done
	in.Close()
	return code, stderr.String()
}

func wantMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s has mode %04o, want %04o", path, got, want)
	}
}

// wantStateModes checks state.db and, while a connection holds them open,
// its -wal and -shm.
func wantStateModes(t *testing.T, root string, want fs.FileMode) {
	t.Helper()
	path := filepath.Join(root, "state.db")
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Users(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		wantMode(t, p, want)
	}
}

// TestInitAndNotifyFileModes: under umask 022, init makes the root 0750
// and rboinc.json, state.db and its -wal and -shm 0600; `user notify`,
// which puts a webhook signing secret into the state, leaves them so.
func TestInitAndNotifyFileModes(t *testing.T) {
	withUmask(t)
	root := filepath.Join(t.TempDir(), "root")
	if code, stderr := runServer(t, "", "init", "--root", root, "--url", "http://127.0.0.1:1"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	wantMode(t, root, 0o750)
	wantMode(t, filepath.Join(root, "rboinc.json"), 0o600)
	wantStateModes(t, root, 0o600)
	if code, stderr := runServer(t, "", "user", "add", "--root", root, "alice"); code != 0 {
		t.Fatalf("user add: exit %d: %s", code, stderr)
	}
	wantMode(t, filepath.Join(root, setup.DAVPasswdFile), 0o600)
	os.Remove(filepath.Join(root, "state.db-wal"))
	os.Remove(filepath.Join(root, "state.db-shm"))
	if code, stderr := runServer(t, "", "user", "notify", "--root", root, "--secret", "alice"); code != 0 {
		t.Fatalf("user notify: exit %d: %s", code, stderr)
	}
	wantStateModes(t, root, 0o600)
}

// TestInitTightensAnOldRoot: a root an older rboinc left readable by
// everyone is closed by init; a group read the administrator gave
// rboinc.json stays (BOINC's daemons may read it as the project's group).
func TestInitTightensAnOldRoot(t *testing.T) {
	withUmask(t)
	root := filepath.Join(t.TempDir(), "root")
	if code, stderr := runServer(t, "", "init", "--root", root, "--url", "http://127.0.0.1:1"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	os.Chmod(root, 0o755)
	os.Chmod(filepath.Join(root, "rboinc.json"), 0o640)
	for _, n := range []string{"state.db", "state.db-wal", "state.db-shm", setup.DAVPasswdFile} {
		os.WriteFile(filepath.Join(root, n), nil, 0o644) // made if missing
		os.Chmod(filepath.Join(root, n), 0o644)
	}
	os.Remove(filepath.Join(root, "state.db")) // an empty state.db: init makes it anew
	if code, stderr := runServer(t, "", "init", "--root", root); code != 0 {
		t.Fatalf("init again: exit %d: %s", code, stderr)
	}
	wantMode(t, root, 0o750)
	wantMode(t, filepath.Join(root, "rboinc.json"), 0o640)
	for _, n := range []string{"state.db-wal", "state.db-shm", setup.DAVPasswdFile} {
		if _, err := os.Stat(filepath.Join(root, n)); err == nil {
			wantMode(t, filepath.Join(root, n), 0o600)
		}
	}
	os.Chmod(filepath.Join(root, "state.db"), 0o644)
	os.Chmod(root, 0o755)
	if code, stderr := runServer(t, "", "migrate", "--root", root); code != 0 {
		t.Fatalf("migrate: exit %d: %s", code, stderr)
	}
	wantMode(t, root, 0o750)
	wantMode(t, filepath.Join(root, "state.db"), 0o600)
}

// TestPasswordNotOnCommandLine: an address with a password is refused on
// the command line (exit 2, saying how to pass it), and taken from a
// file, the environment or standard input.
func TestPasswordNotOnCommandLine(t *testing.T) {
	withUmask(t)
	secret := "mysql://u:s3cret@tcp(127.0.0.1:1)/db"
	for _, args := range [][]string{
		{"init", "--root", filepath.Join(t.TempDir(), "r"), "--state-db", secret},
		{"init", "--root", filepath.Join(t.TempDir(), "r"), "--boinc-db", secret},
		{"migrate", "--root", filepath.Join(t.TempDir(), "r"), "--to", secret},
	} {
		if args[0] == "migrate" {
			if code, stderr := runServer(t, "", "init", "--root", args[2], "--url", "http://127.0.0.1:1"); code != 0 {
				t.Fatalf("init: %s", stderr)
			}
		}
		code, stderr := runServer(t, "", args...)
		flag := strings.TrimPrefix(args[3], "--")
		if code != client.ExitUsage || !strings.Contains(stderr, "--"+flag+"-file FILE") || !strings.Contains(stderr, "--"+flag+" -") || strings.Contains(stderr, "s3cret") {
			t.Errorf("%s %s with a password: exit %d, %q; want %d saying how to pass it, without the password", args[0], args[3], code, stderr, client.ExitUsage)
		}
		if args[0] == "init" {
			if _, err := os.Stat(filepath.Join(args[2], "rboinc.json")); err == nil {
				t.Errorf("init %s with a password on the command line made a root", args[3])
			}
		}
	}
	// Without a password (socket authentication) the flag takes it.
	bad := filepath.Join(t.TempDir(), "x.db")
	if code, stderr := runServer(t, "", "init", "--root", filepath.Join(t.TempDir(), "r"), "--state-db", "sqlite://"+bad); code != client.ExitFailure || !strings.Contains(stderr, "only mysql://") {
		t.Errorf("--state-db without a password: exit %d, %q; want the address itself refused (1), not as a password", code, stderr)
	}
	if _, err := os.Stat(bad); err == nil {
		t.Errorf("init --state-db sqlite://FILE made %s", bad)
	}

	mariadbtest.Shared(t)
	for _, how := range []string{"file", "env", "stdin"} {
		t.Run(how, func(t *testing.T) {
			url := "mysql://" + mariadbtest.NewDB(t)
			root := filepath.Join(t.TempDir(), "root")
			args := []string{"init", "--root", root, "--url", "http://127.0.0.1:1"}
			stdin := ""
			switch how {
			case "file":
				f := filepath.Join(t.TempDir(), "dsn")
				os.WriteFile(f, []byte(url+"\n"), 0o600)
				args = append(args, "--state-db-file", f)
			case "env":
				t.Setenv("RBOINC_STATE_DB", url)
			case "stdin":
				stdin = url + "\n"
				args = append(args, "--state-db", "-")
			}
			if code, stderr := runServer(t, stdin, args...); code != 0 {
				t.Fatalf("init with the address from %s: exit %d: %s", how, code, stderr)
			}
			b, _ := os.ReadFile(filepath.Join(root, "rboinc.json"))
			var cfg struct {
				StateDB string `json:"state_db"`
			}
			json.Unmarshal(b, &cfg)
			if cfg.StateDB != url {
				t.Fatalf("rboinc.json's state_db %q, want the address given by %s", cfg.StateDB, how)
			}
			wantMode(t, filepath.Join(root, "rboinc.json"), 0o600)
			if _, err := os.Stat(filepath.Join(root, "state.db")); err == nil {
				t.Errorf("a root with its state in MariaDB has a state.db")
			}
		})
	}
}

// TestBoincDBFromFile: --boinc-db-file gives the stand-in its MariaDB
// address; the stand-in's config.xml, which then holds its password, is
// private.
func TestBoincDBFromFile(t *testing.T) {
	withUmask(t)
	mariadbtest.Shared(t)
	url := "mysql://" + mariadbtest.NewDB(t)
	root := filepath.Join(t.TempDir(), "root")
	f := filepath.Join(t.TempDir(), "dsn")
	os.WriteFile(f, []byte(url+"\n"), 0o600)
	if code, stderr := runServer(t, "", "init", "--root", root, "--url", "http://127.0.0.1:1", "--boinc-db-file", f); code != 0 {
		t.Fatalf("init --boinc-db-file: exit %d: %s", code, stderr)
	}
	conf := filepath.Join(root, "boinc", "config.xml")
	if b, _ := os.ReadFile(conf); !strings.Contains(string(b), "<rboinc_db_url>") {
		t.Fatalf("the stand-in's config.xml names no database:\n%s", b)
	}
	wantMode(t, conf, 0o600)
	for _, x := range setup.Doctor(context.Background(), root) {
		if x.Severity == setup.Problem && strings.Contains(x.Msg, "mode") {
			t.Errorf("doctor: %s", x.Msg)
		}
	}
}

// TestMigrateToFileModes: `migrate --to-file` switches rboinc.json to a
// MariaDB address with a password, and leaves it (and the state.db kept
// as a backup) private, even when they were readable by everyone before.
func TestMigrateToFileModes(t *testing.T) {
	withUmask(t)
	mariadbtest.Shared(t)
	url := "mysql://" + mariadbtest.NewDB(t)
	root := filepath.Join(t.TempDir(), "root")
	if code, stderr := runServer(t, "", "init", "--root", root, "--url", "http://127.0.0.1:1"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	os.Chmod(filepath.Join(root, "rboinc.json"), 0o644)
	os.Chmod(filepath.Join(root, "state.db"), 0o644)
	f := filepath.Join(t.TempDir(), "dsn")
	os.WriteFile(f, []byte(url), 0o600)
	if code, stderr := runServer(t, "", "migrate", "--root", root, "--to-file", f); code != 0 {
		t.Fatalf("migrate --to-file: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(root, "rboinc.json"))
	if !strings.Contains(string(b), "mysql://") {
		t.Fatalf("rboinc.json was not switched: %s", b)
	}
	wantMode(t, filepath.Join(root, "rboinc.json"), 0o600)
	wantMode(t, filepath.Join(root, "state.db"), 0o600)
}

// TestDoctorFlagsReadableSecrets: doctor reports an rboinc.json holding a
// password that every user may read, and a root open to them.
func TestDoctorFlagsReadableSecrets(t *testing.T) {
	withUmask(t)
	root := filepath.Join(t.TempDir(), "root")
	if code, stderr := runServer(t, "", "init", "--root", root, "--url", "http://127.0.0.1:1"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	doctor := func() string {
		t.Helper()
		var out strings.Builder
		for _, x := range setup.Doctor(context.Background(), root) {
			if x.Severity == setup.Problem {
				out.WriteString(x.Msg + "\n")
			}
		}
		return out.String()
	}
	if p := doctor(); strings.Contains(p, "mode") {
		t.Fatalf("doctor on a fresh root reports modes: %s", p)
	}
	cfgPath := filepath.Join(root, "rboinc.json")
	b, _ := os.ReadFile(cfgPath)
	var cfg map[string]any
	json.Unmarshal(b, &cfg)
	cfg["smtp"] = map[string]any{"host": "127.0.0.1", "from": "rboinc@example.org", "username": "u", "password": "s3cret"}
	b, _ = json.Marshal(cfg)
	os.WriteFile(cfgPath, b, 0o644)
	os.Chmod(cfgPath, 0o644)
	os.Chmod(root, 0o755)
	p := doctor()
	if !strings.Contains(p, cfgPath+" holds the password of smtp and is readable by every user") {
		t.Errorf("doctor does not flag a 0644 rboinc.json holding a password:\n%s", p)
	}
	if !strings.Contains(p, "the server root "+root+" is open to every user") {
		t.Errorf("doctor does not flag a root open to every user:\n%s", p)
	}
	if strings.Contains(p, "s3cret") {
		t.Errorf("doctor shows the password:\n%s", p)
	}
	os.Chmod(cfgPath, 0o640)
	os.Chmod(root, 0o750)
	if p := doctor(); strings.Contains(p, "mode") {
		t.Errorf("doctor reports a 0640 rboinc.json in a 0750 root:\n%s", p)
	}
}

// TestInitAsRootKeepsSecretsReadable: init run as root (sudo) in a root
// that belongs to the project's owner leaves rboinc.json and state.db
// (and its -wal and -shm) to that owner: private files root kept would be
// unreadable to the server, the hook and Apache.
func TestInitAsRootKeepsSecretsReadable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	withUmask(t)
	root := filepath.Join(t.TempDir(), "root")
	if err := os.Mkdir(root, 0o750); err != nil {
		t.Fatal(err)
	}
	const owner = 4242
	if err := os.Chown(root, owner, owner); err != nil {
		t.Fatal(err)
	}
	if code, stderr := runServer(t, "", "init", "--root", root, "--url", "http://127.0.0.1:1"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	db, err := store.Open(context.Background(), filepath.Join(root, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.Users(context.Background())
	// A write made as root makes the writers' turn file (store's
	// writeturns.go): it too must stay usable by the owner.
	if _, err := db.AddUser(context.Background(), "turns", "hash-turns"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"rboinc.json", "state.db", "state.db-wal", "state.db-shm", "state.db-writers"} {
		fi, err := os.Stat(filepath.Join(root, n))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != owner {
			t.Errorf("%s belongs to uid %d, want the root's owner %d", n, st.Uid, owner)
		}
	}
}
