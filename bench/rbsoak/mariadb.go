package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rboinc/rboinc/internal/mariadbtest"
)

// startMariaDB starts the private MariaDB that holds rboinc's state and
// BOINC's database in -mariadb mode. Its directory is short (the socket's
// path must fit in sun_path) and outside the server root (the disk-full
// fault fills the root, not the database).
func (s *soak) startMariaDB(ctx context.Context) error {
	dir, err := os.MkdirTemp("/tmp", "rbsoak-db-")
	if err != nil {
		return err
	}
	s.dbDir = dir
	// Named in the work directory, for bench/soak.sh to remove after a run
	// killed before it could.
	if err := os.WriteFile(filepath.Join(s.o.work, "mariadb.dir"), []byte(dir+"\n"), 0o644); err != nil {
		return err
	}
	if s.db, err = mariadbtest.Start(ctx, dir); err != nil {
		return fmt.Errorf("starting MariaDB: %w", err)
	}
	state, err := s.db.NewDatabase(ctx, "rboinc_state")
	if err != nil {
		return err
	}
	boincDSN, err := s.db.NewDatabase(ctx, "boinc")
	if err != nil {
		return err
	}
	s.stateURL, s.boincURL = "mysql://"+state, "mysql://"+boincDSN
	s.boincDBFile = filepath.Join(s.o.work, "boinc-db.url")
	return os.WriteFile(s.boincDBFile, []byte(s.boincURL+"\n"), 0o600)
}
