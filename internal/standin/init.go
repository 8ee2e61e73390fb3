package standin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rboinc/rboinc/internal/atomicfile"
	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/secretfile"
	"github.com/rboinc/rboinc/internal/sqldb"
)

// InitOptions describe a simulated project for InitProject.
type InitOptions struct {
	ServerExe  string // absolute path of the rboinc-server binary
	Host       string // default "standin"; daemons run in tmp_<Host>
	URLBase    string // e.g. "http://127.0.0.1:8080"; only for download_url/upload_url text
	HookScript string // name of the assimilator hook in bin/ (default "rboinc_hook"), written to config.xml as
	// <rboinc_standin_default_script> (used for apps with no script_assimilator daemon line)
	// DBURL puts BOINC's database in a MariaDB/MySQL server
	// (mysql://USER:PASS@tcp(HOST:PORT)/DB or mysql://USER:PASS@unix(SOCKET)/DB),
	// written to config.xml as <rboinc_db_url>; empty: the SQLite file.
	DBURL string
}

// InitProject creates, or completes, a simulated project at dir: config.xml,
// cgi-bin/, templates/, download/, upload/, apps/, tmp_<host>/, bin/create_work
// (a /bin/sh wrapper running `<ServerExe> standin create_work "$@"`) and the
// stand-in database. It never clobbers an existing config.xml, templates or
// apps, and always rewrites the wrapper (the server binary may have moved).
func InitProject(dir string, o InitOptions) error {
	if !filepath.IsAbs(o.ServerExe) {
		return fmt.Errorf("stand-in project %s: the server binary path %q must be absolute", dir, o.ServerExe)
	}
	if o.Host == "" {
		o.Host = "standin"
	}
	if o.URLBase == "" {
		o.URLBase = "http://localhost/standin"
	}
	if o.HookScript == "" {
		o.HookScript = "rboinc_hook"
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("stand-in project %s: %w", dir, err)
	}
	cfg := filepath.Join(abs, "config.xml")
	if _, err := os.Stat(cfg); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return fmt.Errorf("creating stand-in project %s: %w", abs, err)
		}
		mode := os.FileMode(0o644)
		if boincdb.HasPassword(o.DBURL) {
			mode = secretfile.Mode // rboinc_db_url's password
		}
		if err := atomicfile.Write(cfg, []byte(configXML(abs, o)), mode); err != nil {
			return fmt.Errorf("creating stand-in project %s: %w", abs, err)
		}
	} else if err != nil {
		return fmt.Errorf("stand-in project %s: %w", abs, err)
	}
	if o.DBURL != "" {
		if p, err := boinc.LoadProject(abs); err == nil && p.DBURL != o.DBURL {
			return fmt.Errorf("stand-in project %s already keeps its database elsewhere (%s); a new database needs a new project", abs, describeDB(p.DBURL))
		}
	}
	// The directories come from the config actually in force.
	p, err := boinc.LoadProject(abs)
	if err != nil {
		return fmt.Errorf("stand-in project %s: %w", abs, err)
	}
	host := p.Host
	if host == "" {
		host = o.Host
	}
	for _, d := range []string{"cgi-bin", "templates", "apps", "bin", "tmp_" + host, p.DownloadDir, p.UploadDir} {
		if !filepath.IsAbs(d) {
			d = filepath.Join(abs, d)
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("creating stand-in project %s: %w", abs, err)
		}
	}
	// BOINC's tools find their project by BOINC_PROJECT_DIR or the working
	// directory; cancel_jobs is run from anywhere, so its wrapper names it.
	for tool, env := range map[string]string{"create_work": "", "cancel_jobs": "BOINC_PROJECT_DIR=${BOINC_PROJECT_DIR:-" + shellQuote(abs) + "} "} {
		wrapper := "#!/bin/sh\n" + env + "exec " + shellQuote(o.ServerExe) + " standin " + tool + " \"$@\"\n"
		if err := atomicfile.Write(filepath.Join(abs, "bin", tool), []byte(wrapper), 0o755); err != nil {
			return fmt.Errorf("creating stand-in project %s: %w", abs, err)
		}
	}
	db, err := openDB(abs)
	if err != nil {
		return err
	}
	return db.Close()
}

// configXML is the config.xml of a new stand-in project, shaped like the one
// make_project writes.
func configXML(dir string, o InitOptions) string {
	e := xmlEscape
	return `<?xml version="1.0" ?>
<boinc>
    <config>
        <host>` + e(o.Host) + `</host>
        <uldl_dir_fanout>1024</uldl_dir_fanout>
        <cache_md5_info>1</cache_md5_info>
        <dont_generate_upload_certificates>1</dont_generate_upload_certificates>
        <ignore_upload_certificates>1</ignore_upload_certificates>
        <download_url>` + e(o.URLBase) + `/download</download_url>
        <upload_url>` + e(o.URLBase) + `/cgi-bin/file_upload_handler</upload_url>
        <download_dir>` + e(filepath.Join(dir, "download")) + `</download_dir>
        <upload_dir>` + e(filepath.Join(dir, "upload")) + `</upload_dir>
        <rboinc_standin_default_script>` + e(o.HookScript) + `</rboinc_standin_default_script>
` + dbURLElement(o.DBURL) + `    </config>
    <daemons>
        <daemon>
            <cmd>feeder -d 3</cmd>
        </daemon>
        <daemon>
            <cmd>transitioner -d 3</cmd>
        </daemon>
        <daemon>
            <cmd>file_deleter -d 3</cmd>
        </daemon>
    </daemons>
</boinc>
`
}

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func dbURLElement(u string) string {
	if u == "" {
		return ""
	}
	return "        <rboinc_db_url>" + xmlEscape(u) + "</rboinc_db_url>\n"
}

func describeDB(u string) string {
	if u == "" {
		return "its SQLite file " + dbFile
	}
	if t, err := sqldb.ParseURL(u); err == nil {
		return t.String()
	}
	return "an unreadable rboinc_db_url"
}
