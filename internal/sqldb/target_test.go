package sqldb

import (
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		in     string
		engine Engine
		dsn    string
		bad    string
	}{
		{in: "mysql://u:p@tcp(127.0.0.1:3306)/boinc", engine: MySQL, dsn: "u:p@tcp(127.0.0.1:3306)/boinc"},
		{in: "mysql://u:p@unix(/run/mysqld/mysqld.sock)/b", engine: MySQL, dsn: "u:p@unix(/run/mysqld/mysqld.sock)/b"},
		{in: "sqlite:///x/y.db", engine: SQLite, dsn: "/x/y.db"},
		{in: "/x/y.db", engine: SQLite, dsn: "/x/y.db"},
		{in: "mysql://u:secret@tcp(h:1)/", bad: "names no database"},
		{in: "mysql://u:secret@bogus(h)/d", bad: "expected mysql://"},
		{in: "postgres://u:secret@h/d", bad: "only mysql://"},
		{in: "", bad: "empty"},
		{in: "/x?y", bad: "must not contain"},
	} {
		got, err := ParseURL(c.in)
		if c.bad != "" {
			if err == nil || !strings.Contains(err.Error(), c.bad) {
				t.Errorf("ParseURL(%q) = %v, %v; want an error with %q", c.in, got, err, c.bad)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("ParseURL(%q): the error shows the password: %v", c.in, err)
			}
			continue
		}
		if err != nil || got.Engine != c.engine || got.DSN != c.dsn {
			t.Errorf("ParseURL(%q) = %+v, %v", c.in, got, err)
		}
	}
	if s := (Target{Engine: MySQL, DSN: "u:secret@tcp(h:1)/d"}).String(); strings.Contains(s, "secret") || !strings.Contains(s, "u:***@tcp(h:1)/d") {
		t.Errorf("String() = %q", s)
	}
}
