package sqldb

import (
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// Engine names a database engine the package speaks to.
type Engine string

const (
	SQLite Engine = "sqlite" // the stand-in's default: one file
	MySQL  Engine = "mysql"  // MariaDB or MySQL: a real project's
)

// Target is where a BOINC database is: an engine and the DSN its Go driver
// takes (a file path for SQLite, go-sql-driver's DSN for MySQL).
type Target struct {
	Engine Engine
	DSN    string
}

// ParseURL reads the form users write: `mysql://USER:PASS@tcp(HOST:PORT)/DB`
// or `mysql://USER:PASS@unix(SOCKET)/DB` (mysql:// then the driver's DSN),
// `sqlite://PATH`, or a plain path to an SQLite file.
func ParseURL(s string) (Target, error) {
	switch {
	case strings.HasPrefix(s, "mysql://"):
		dsn := strings.TrimPrefix(s, "mysql://")
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return Target{}, fmt.Errorf("database address %q: %w (expected mysql://USER:PASS@tcp(HOST:PORT)/DB or mysql://USER:PASS@unix(SOCKET)/DB)", redact(s), err)
		}
		if cfg.Net != "tcp" && cfg.Net != "tcp6" && cfg.Net != "unix" {
			return Target{}, fmt.Errorf("database address %q: connect by tcp(HOST:PORT) or unix(SOCKET), not %q (expected mysql://USER:PASS@tcp(HOST:PORT)/DB or mysql://USER:PASS@unix(SOCKET)/DB)", redact(s), cfg.Net)
		}
		if cfg.DBName == "" {
			return Target{}, fmt.Errorf("database address %q names no database (expected .../DB at the end)", redact(s))
		}
		return Target{Engine: MySQL, DSN: dsn}, nil
	case strings.HasPrefix(s, "sqlite://"):
		s = strings.TrimPrefix(s, "sqlite://")
	case strings.Contains(s, "://"):
		return Target{}, fmt.Errorf("database address %q: only mysql:// and sqlite:// (or a file path) are understood", redact(s))
	}
	if s == "" {
		return Target{}, fmt.Errorf("empty database address")
	}
	if strings.ContainsRune(s, '?') {
		return Target{}, fmt.Errorf("SQLite database path %q must not contain '?'", s)
	}
	return Target{Engine: SQLite, DSN: s}, nil
}

// String is the target as ParseURL reads it, with the password hidden.
func (t Target) String() string {
	if t.Engine == MySQL {
		return redact("mysql://" + t.DSN)
	}
	return "sqlite://" + t.DSN
}

// redact hides the password of a mysql:// address for messages and logs.
func redact(s string) string {
	at := strings.LastIndex(s, "@")
	if at < 0 {
		return s
	}
	head := s[:at]
	scheme := ""
	if i := strings.Index(head, "://"); i >= 0 {
		scheme, head = head[:i+3], head[i+3:]
	}
	if user, _, ok := strings.Cut(head, ":"); ok {
		return scheme + user + ":***" + s[at:]
	}
	return s
}
