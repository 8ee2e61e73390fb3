package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/internal/boincdb"
)

// dsnInput is a flag naming a database address that may carry a
// password. A password on a command line is seen by every user of the
// host (ps, /proc/PID/cmdline), so such an address comes from a file
// (--NAME-file FILE), from the environment variable env, or from standard
// input (--NAME -); the flag itself takes only an address without one.
type dsnInput struct {
	name  string // the flag, "state-db"
	env   string // the environment variable, "RBOINC_STATE_DB"
	usage string // what the address is for
}

var (
	stateDBInput = dsnInput{name: "state-db", env: "RBOINC_STATE_DB",
		usage: "keep rboinc's own state in MariaDB (rboinc_* tables): mysql://USER@unix(SOCKET)/DB, or - to read an address with a password (mysql://USER:PASS@tcp(HOST:PORT)/DB) from standard input; see also --state-db-file and RBOINC_STATE_DB (default: the SQLite file state.db in the root)"}
	boincDBInput = dsnInput{name: "boinc-db", env: "RBOINC_BOINC_DB",
		usage: "where the embedded stand-in keeps BOINC's database: mysql://USER@unix(SOCKET)/DB, or - to read an address with a password from standard input; see also --boinc-db-file and RBOINC_BOINC_DB (default: an SQLite file)"}
	migrateToInput = dsnInput{name: "to", env: "RBOINC_MIGRATE_TO",
		usage: "move the SQLite state into this MariaDB database and switch rboinc.json to it: mysql://USER@unix(SOCKET)/DB, or - to read an address with a password (mysql://USER:PASS@tcp(HOST:PORT)/DB) from standard input; see also --to-file and RBOINC_MIGRATE_TO"}
)

func (d dsnInput) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: d.name, Usage: d.usage},
		&cli.StringFlag{Name: d.name + "-file", Usage: "read the address of --" + d.name + " from the first line of `FILE` (keep it mode 0600)"},
	}
}

// how says the ways to pass the address, for messages.
func (d dsnInput) how() string {
	return fmt.Sprintf("pass it in a file (--%s-file FILE, mode 0600), in the environment variable %s, or on standard input (--%s -)", d.name, d.env, d.name)
}

// given tells whether the address was given in any of its ways.
func (d dsnInput) given(c *cli.Context) bool {
	return c.IsSet(d.name) || c.IsSet(d.name+"-file") || os.Getenv(d.env) != ""
}

// value is the address given, or "" for none. A password on the command
// line is a usage error (exit 2) that says how to pass it instead.
func (d dsnInput) value(c *cli.Context, stdin io.Reader) (string, error) {
	flag, file := c.String(d.name), c.String(d.name+"-file")
	switch {
	case c.IsSet(d.name) && c.IsSet(d.name+"-file"):
		return "", usagef("--%s and --%s-file name the same address: give one", d.name, d.name)
	case c.IsSet(d.name + "-file"):
		f, err := os.Open(file)
		if err != nil {
			return "", usagef("--%s-file: %v", d.name, err)
		}
		defer f.Close()
		return d.firstLine(f, "--"+d.name+"-file "+file)
	case flag == "-":
		return d.firstLine(stdin, "standard input")
	case c.IsSet(d.name):
		if boincdb.HasPassword(flag) {
			return "", usagef("--%s: the address holds a password, which every user of this host would see on the command line (ps): %s", d.name, d.how())
		}
		if flag == "" {
			return "", usagef("--%s: empty address", d.name)
		}
		return flag, nil
	}
	return strings.TrimSpace(os.Getenv(d.env)), nil
}

func (d dsnInput) firstLine(r io.Reader, from string) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, 64<<10)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", usagef("--%s: reading the address from %s: %v", d.name, from, err)
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return "", usagef("--%s: %s holds no address", d.name, from)
	}
	return line, nil
}
