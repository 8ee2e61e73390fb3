package mariadbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"

	"github.com/go-sql-driver/mysql"
)

// validName is what NewDatabase accepts as a database name: it is written
// into SQL statements, which take no placeholders for names.
var validName = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

// userHosts are the hosts a database's user is made for: localhost is the
// unix socket, 127.0.0.1 is TCP (the server resolves no names).
var userHosts = []string{"localhost", "127.0.0.1"}

// NewDatabase creates database name and a user of its own, with a random
// password and all rights on that database and none on any other. It
// returns the user's go-sql-driver/mysql DSN over the unix socket,
// "USER:PASS@unix(SOCKET)/name"; see [Server.TCPDSN] for TCP. name is 1 to
// 64 ASCII letters, digits and underscores.
func (s *Server) NewDatabase(ctx context.Context, name string) (dsn string, err error) {
	if !validName.MatchString(name) {
		return "", fmt.Errorf("database name %q: want 1 to 64 ASCII letters, digits and underscores", name)
	}
	if _, err := s.root.ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	// MySQL allows user names of 32 characters, MariaDB 80.
	user := name
	if len(user) > 20 {
		user = user[:20]
	}
	user += "_" + randomHex(4)
	pass := randomHex(16)
	for _, host := range userHosts {
		for _, q := range []string{
			fmt.Sprintf("CREATE USER '%s'@'%s' IDENTIFIED BY '%s'", user, host, pass),
			fmt.Sprintf("GRANT ALL PRIVILEGES ON `%s`.* TO '%s'@'%s'", name, user, host),
		} {
			if _, err := s.root.ExecContext(ctx, q); err != nil {
				err = fmt.Errorf("create user %s for database %s: %w", user, name, err)
				return "", errors.Join(err, s.drop(context.WithoutCancel(ctx), name, user))
			}
		}
	}
	s.mu.Lock()
	s.users[name] = user
	s.mu.Unlock()

	cfg := mysql.NewConfig()
	cfg.User = user
	cfg.Passwd = pass
	cfg.Net = "unix"
	cfg.Addr = s.Socket
	cfg.DBName = name
	return cfg.FormatDSN(), nil
}

// DropDatabase drops database name and the user NewDatabase made for it.
func (s *Server) DropDatabase(ctx context.Context, name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("database name %q: want 1 to 64 ASCII letters, digits and underscores", name)
	}
	s.mu.Lock()
	user := s.users[name]
	delete(s.users, name)
	s.mu.Unlock()
	return s.drop(ctx, name, user)
}

// drop drops database name, and user unless it is "".
func (s *Server) drop(ctx context.Context, name, user string) error {
	var errs []error
	if _, err := s.root.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+name+"`"); err != nil {
		errs = append(errs, fmt.Errorf("drop database %s: %w", name, err))
	}
	if user != "" {
		for _, host := range userHosts {
			if _, err := s.root.ExecContext(ctx, fmt.Sprintf("DROP USER IF EXISTS '%s'@'%s'", user, host)); err != nil {
				errs = append(errs, fmt.Errorf("drop user %s@%s: %w", user, host, err))
			}
		}
	}
	return errors.Join(errs...)
}

// TCPDSN returns dsn, a DSN from [Server.NewDatabase], changed to reach the
// same database over tcp(127.0.0.1:PORT). It panics if dsn is not a
// go-sql-driver/mysql DSN.
func (s *Server) TCPDSN(dsn string) string {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		panic("mariadbtest: TCPDSN: " + err.Error())
	}
	cfg.Net = "tcp"
	cfg.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
	return cfg.FormatDSN()
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (Go 1.24+)
	return hex.EncodeToString(b)
}
