package boincdb

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/sqldb"
)

// StandinFile is the stand-in's SQLite database, relative to its project
// directory, used when its config.xml names no other database.
const StandinFile = "standin.db"

// Socket paths libmysqlclient tries for host "localhost" on Debian and
// elsewhere, in order.
var defaultSockets = []string{"/run/mysqld/mysqld.sock", "/var/run/mysqld/mysqld.sock", "/tmp/mysql.sock"}

// ForProject is where the project's database is, as its daemons find it:
// config.xml's rboinc_db_url when set, else its db_* fields (MySQL), else,
// for the stand-in (standin true), the SQLite file in its directory.
func ForProject(p *boinc.Project, standin bool) (sqldb.Target, error) {
	if p.DBURL != "" {
		t, err := sqldb.ParseURL(p.DBURL)
		if err != nil {
			return t, fmt.Errorf("%s: rboinc_db_url: %w", filepath.Join(p.Dir, "config.xml"), err)
		}
		if t.Engine == sqldb.SQLite && !filepath.IsAbs(t.DSN) {
			t.DSN = filepath.Join(p.Dir, t.DSN)
		}
		return t, nil
	}
	if p.DB.Name != "" {
		return fromFields(p.DB), nil
	}
	// The stand-in keeps its own file, also when a root serves it as a
	// real project (--boinc-project pointing at one).
	file := filepath.Join(p.Dir, StandinFile)
	if _, err := os.Stat(file); standin || err == nil {
		return sqldb.Target{Engine: sqldb.SQLite, DSN: file}, nil
	}
	return sqldb.Target{}, fmt.Errorf("%s names no database (db_name, or rboinc_db_url)", filepath.Join(p.Dir, "config.xml"))
}

// ReplicaForProject is where the project's read-only replica is
// (replica_db_*, each field defaulting to its db_* one, as BOINC's
// daemons read them); without a replica_db_host it is the main database.
func ReplicaForProject(p *boinc.Project, standin bool) (sqldb.Target, error) {
	if p.DBURL != "" || p.Replica.Host == "" || p.DB.Name == "" {
		return ForProject(p, standin)
	}
	r := p.Replica
	if r.Name == "" {
		r.Name = p.DB.Name
	}
	if r.User == "" {
		r.User = p.DB.User
	}
	if r.Passwd == "" {
		r.Passwd = p.DB.Passwd
	}
	return fromFields(r), nil
}

// fromFields builds the driver's DSN from BOINC's fields: db_host is
// "host" or "host:port"; an empty host or "localhost" without a port is
// the local server's socket, as libmysqlclient takes it.
func fromFields(f boinc.DBConfig) sqldb.Target {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.DBName = f.User, f.Passwd, f.Name
	host, port, hasPort := strings.Cut(f.Host, ":")
	switch {
	case (host == "" || host == "localhost") && !hasPort:
		cfg.Net, cfg.Addr = "unix", localSocket()
	default:
		if host == "" {
			host = "localhost"
		}
		if !hasPort || port == "" || port == "0" {
			port = "3306"
		}
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, port)
	}
	return sqldb.Target{Engine: sqldb.MySQL, DSN: cfg.FormatDSN()}
}

func localSocket() string {
	for _, s := range defaultSockets {
		if fi, err := os.Stat(s); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return s
		}
	}
	return defaultSockets[0]
}

// now is BOINC's time: whole seconds since the epoch.
func now() int64 { return time.Now().Unix() }
