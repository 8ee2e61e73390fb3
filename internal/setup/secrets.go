package setup

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/secretfile"
)

// secretFile is a file of the server root that holds secrets, and which.
type secretFile struct {
	path, what string
	always     bool // a secret whatever it holds (else only when it holds a password)
}

// secretFiles lists the root's files that hold secrets.
func secretFiles(root string, cfg engine.Config) []secretFile {
	var pw []string
	if boincdb.HasPassword(cfg.StateDB) {
		pw = append(pw, "state_db")
	}
	if cfg.SMTP.Password != "" {
		pw = append(pw, "smtp")
	}
	fs := []secretFile{{filepath.Join(root, engine.ConfigFile), "the password of " + strings.Join(pw, " and "), len(pw) > 0}}
	if len(pw) == 0 {
		// No password: still written private, but not a finding.
		fs[0].what = "the server's configuration"
	}
	// state.db also when state_db names a MariaDB: migrate kept it as a
	// backup, secrets and all.
	state := filepath.Join(root, engine.StateFile)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		fs = append(fs, secretFile{state + suffix, "users' token hashes and webhook signing secrets", true})
	}
	fs = append(fs, secretFile{filepath.Join(root, DAVPasswdFile), "users' token hashes", true})
	if cfg.Simulated {
		if p, err := boinc.LoadProject(cfg.BoincProject); err == nil && boincdb.HasPassword(p.DBURL) {
			fs = append(fs, secretFile{filepath.Join(p.Dir, "config.xml"), "the password of rboinc_db_url", true})
		}
	}
	return fs
}

// SecureRoot makes the root's files that hold secrets private to its
// owner (secretfile.ModeFrom: a group read given by the administrator
// stays) and closes the root to other users. init and migrate run it; a
// file that does not exist is left alone.
func SecureRoot(root string, cfg engine.Config) error {
	if err := secretfile.TightenDir(root); err != nil {
		return err
	}
	for _, f := range secretFiles(root, cfg) {
		if err := secretfile.Tighten(f.path); err != nil {
			return err
		}
	}
	return nil
}

// checkSecrets (doctor) reports a secret file, or the root holding them,
// open to other users of the host.
func checkSecrets(f *Findings, root string, cfg engine.Config) {
	bad := false
	if fi, err := os.Stat(root); err == nil && fi.Mode().Perm()&0o007 != 0 {
		bad = true
		f.add(Problem, "the server root %s is open to every user of the host (mode %04o) while it holds secrets (the state database, %s): `chmod o-rwx %s` (init does it)", root, fi.Mode().Perm(), DAVPasswdFile, root)
	}
	for _, s := range secretFiles(root, cfg) {
		fi, err := os.Stat(s.path)
		if err != nil || !s.always {
			continue
		}
		if why := secretfile.Exposed(fi.Mode()); why != "" {
			bad = true
			f.add(Problem, "%s holds %s and is %s: `chmod 600 %s` (640 when BOINC's daemons read it as another user of the project's group; `rboinc-server init --root %s` does it)", s.path, s.what, why, s.path, root)
		}
	}
	if !bad {
		f.add(OK, "the files holding secrets are private to the root's owner (mode %04o or stricter)", secretfile.Mode|0o040)
	}
}
