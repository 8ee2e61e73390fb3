package boinc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/beevik/etree"
)

// Project is what rboinc needs to know of a BOINC project directory.
type Project struct {
	Dir         string // project root (holds config.xml)
	DownloadDir string
	UploadDir   string
	DownloadURL string
	UploadURL   string
	Fanout      int  // uldl_dir_fanout; 0 means flat
	CacheMD5    bool // cache_md5_info
	// EnableAssignment is <enable_assignment>: the scheduler sends
	// targeted jobs (create_work --target_*) only when it is set;
	// EnableAssignmentMulti (<enable_assignment_multi>) likewise for
	// broadcast jobs (--broadcast*).
	EnableAssignment      bool
	EnableAssignmentMulti bool
	// OneResultPerUserPerWU (<one_result_per_user_per_wu>) and
	// OneResultPerHostPerWU (<one_result_per_host_per_wu>): the scheduler
	// sends a work unit's results to different volunteers (hosts), so a
	// late step's extra replica does not go to the host late with it.
	OneResultPerUserPerWU bool
	OneResultPerHostPerWU bool
	Host                  string
	Daemons               []string // <daemons><daemon><cmd> lines
	// DaemonEntries are the same daemons with what bin/start reads beside
	// the command (where it keeps their lock, pid and log files).
	DaemonEntries []Daemon
	// StandinScript is the hook the BOINC stand-in runs for apps that have no
	// script_assimilator daemon line (rboinc_standin_default_script).
	StandinScript string
	// StandinSlots is how many results the stand-in's volunteer computes
	// at once (rboinc_standin_slots; 0: its default), as a project's many
	// hosts do: a soak at scale is not bound by one small host.
	StandinSlots int
	// DB is how BOINC's daemons reach the project database (db_* and
	// replica_db_* of config.xml), and rboinc_db_url an address that
	// overrides them for rboinc (a socket or port BOINC's fields cannot
	// name; the stand-in's MariaDB).
	DB      DBConfig
	Replica DBConfig
	DBURL   string
}

// DBConfig is one set of BOINC's database fields.
type DBConfig struct {
	Host, Name, User, Passwd string
}

// LoadProject reads <dir>/config.xml.
func LoadProject(dir string) (*Project, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(abs, "config.xml")
	doc := etree.NewDocument()
	doc.ReadSettings.Permissive = false
	if err := doc.ReadFromFile(path); err != nil {
		return nil, fmt.Errorf("reading BOINC config %s: %w", path, err)
	}
	root := doc.Root()
	if root == nil || root.Tag != "boinc" {
		return nil, fmt.Errorf("BOINC config %s: root element must be <boinc>", path)
	}
	cfg := root.SelectElement("config")
	if cfg == nil {
		return nil, fmt.Errorf("BOINC config %s: no <config> element", path)
	}
	text := func(tag string) string {
		if e := cfg.SelectElement(tag); e != nil {
			return strings.TrimSpace(e.Text())
		}
		return ""
	}
	flag := func(tag string) bool {
		e := cfg.SelectElement(tag)
		if e == nil {
			return false
		}
		return parseBool(strings.TrimSpace(e.Text()))
	}
	p := &Project{
		Dir:                   abs,
		DownloadDir:           text("download_dir"),
		UploadDir:             text("upload_dir"),
		DownloadURL:           text("download_url"),
		UploadURL:             text("upload_url"),
		CacheMD5:              flag("cache_md5_info"),
		EnableAssignment:      flag("enable_assignment"),
		EnableAssignmentMulti: flag("enable_assignment_multi"),
		OneResultPerUserPerWU: flag("one_result_per_user_per_wu"),
		OneResultPerHostPerWU: flag("one_result_per_host_per_wu"),
		Host:                  text("host"),
		StandinScript:         text("rboinc_standin_default_script"),
		DB:                    DBConfig{Host: text("db_host"), Name: text("db_name"), User: text("db_user"), Passwd: text("db_passwd")},
		Replica: DBConfig{Host: text("replica_db_host"), Name: text("replica_db_name"), User: text("replica_db_user"),
			Passwd: text("replica_db_passwd")},
		DBURL: text("rboinc_db_url"),
	}
	if v := text("uldl_dir_fanout"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("BOINC config %s: bad uldl_dir_fanout %q", path, v)
		}
		p.Fanout = n
	}
	if v := text("rboinc_standin_slots"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxStandinSlots {
			return nil, fmt.Errorf("BOINC config %s: bad rboinc_standin_slots %q (a number of slots, 1 to %d)", path, v, MaxStandinSlots)
		}
		p.StandinSlots = n
	}
	if p.DownloadDir == "" || p.UploadDir == "" {
		return nil, fmt.Errorf("BOINC config %s: download_dir and upload_dir must be set", path)
	}
	for _, d := range []*string{&p.DownloadDir, &p.UploadDir} {
		if !filepath.IsAbs(*d) {
			*d = filepath.Join(abs, *d)
		}
	}
	if ds := root.SelectElement("daemons"); ds != nil {
		for _, d := range ds.SelectElements("daemon") {
			if c := d.SelectElement("cmd"); c != nil {
				p.Daemons = append(p.Daemons, strings.TrimSpace(c.Text()))
				child := func(tag string) string {
					if e := d.SelectElement(tag); e != nil {
						return strings.TrimSpace(e.Text())
					}
					return ""
				}
				dis := child("disabled")
				p.DaemonEntries = append(p.DaemonEntries, Daemon{Cmd: strings.TrimSpace(c.Text()), Host: child("host"),
					Output: child("output"), PidFile: child("pid_file"), LockFile: child("lock_file"), Disabled: dis != "" && dis != "0"})
			}
		}
	}
	return p, nil
}

// DownloadPath is where BOINC expects input file name: dir_hier_path.
func (p *Project) DownloadPath(name string) string {
	return HierPath(p.DownloadDir, name, p.Fanout)
}

// UploadPath is where BOINC's upload handler stores output file name.
func (p *Project) UploadPath(name string) string {
	return HierPath(p.UploadDir, name, p.Fanout)
}

// AssimilatorScript returns the --script value of the script_assimilator
// daemon configured for app, or "" if there is none.
func (p *Project) AssimilatorScript(app string) string {
	for _, cmd := range p.Daemons {
		f := strings.Fields(cmd)
		if len(f) == 0 || filepath.Base(f[0]) != "script_assimilator" {
			continue
		}
		var gotApp, script string
		for i := 1; i < len(f); i++ {
			a := strings.TrimLeft(f[i], "-")
			switch {
			case a == "app" && i+1 < len(f):
				i++
				gotApp = f[i]
			case a == "script" && i+1 < len(f):
				// The value may be quoted and span several words.
				rest := strings.Join(f[i+1:], " ")
				if q := rest[0]; q == '"' || q == '\'' {
					if end := strings.IndexByte(rest[1:], q); end >= 0 {
						script = rest[1 : end+1]
						i = len(f)
						continue
					}
				}
				i++
				script = f[i]
			}
		}
		if gotApp == app && script != "" {
			return script
		}
	}
	return ""
}

// IsProjectDir reports whether dir looks like a BOINC project directory the
// way BOINC's own tools decide it: config.xml and a cgi-bin directory.
func IsProjectDir(dir string) bool {
	if fi, err := os.Stat(filepath.Join(dir, "config.xml")); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	fi, err := os.Stat(filepath.Join(dir, "cgi-bin"))
	return err == nil && fi.IsDir()
}

// FindProjectDir locates the project directory as BOINC's tools do:
// $BOINC_PROJECT_DIR, else the working directory, else its parent.
func FindProjectDir() (string, error) {
	if d := os.Getenv("BOINC_PROJECT_DIR"); d != "" {
		if !IsProjectDir(d) {
			return "", errors.New("BOINC_PROJECT_DIR env var exists but is not a project dir")
		}
		return filepath.Abs(d)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for _, d := range []string{wd, filepath.Dir(wd)} {
		if IsProjectDir(d) {
			return d, nil
		}
	}
	return "", errors.New("Not in a project directory or subdirectory")
}

// parseBool reads a flag's text as BOINC's XML_PARSER::parse_bool does:
// empty (<tag/>) is true; otherwise a whole integer as strtol reads it
// (0x hex, a leading 0 octal), true when not 0. Anything else, "true"
// included, is not read, and the flag stays off.
func parseBool(v string) bool {
	if v == "" {
		return true
	}
	if v[0] == '+' || v[0] == '-' {
		v = v[1:]
	}
	in := func(s, set string) bool {
		return s != "" && strings.Trim(s, set) == ""
	}
	digits, ok := v, false
	switch {
	case strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X"):
		digits = v[2:]
		ok = in(digits, "0123456789abcdefABCDEF")
	case strings.HasPrefix(v, "0"):
		ok = in(v, "01234567")
	default:
		ok = in(v, "0123456789")
	}
	return ok && strings.Trim(digits, "0") != ""
}

// MaxStandinSlots bounds rboinc_standin_slots: each slot may run an app
// process at once.
const MaxStandinSlots = 256
