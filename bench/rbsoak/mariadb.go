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
	if !s.o.noJournal {
		// The data in the work directory, which outlives a stop of the
		// machine (/tmp may not); the short link, for the socket, made
		// again on -resume.
		s.dbData = filepath.Join(s.o.work, "mariadb")
		if err := os.MkdirAll(s.dbData, 0o755); err != nil {
			return err
		}
		if err := os.Remove(dir); err != nil {
			return err
		}
		if err := os.Symlink(s.dbData, dir); err != nil {
			return fmt.Errorf("linking MariaDB's directory: %w", err)
		}
	}
	// Named in the work directory, for bench/soak.sh to remove after a run
	// killed before it could.
	if err := os.WriteFile(filepath.Join(s.o.work, "mariadb.dir"), []byte(dir+"\n"), 0o644); err != nil {
		return err
	}
	if s.db, err = mariadbtest.Start(ctx, dir, mariadbtest.BufferPool(s.o.dbPool)); err != nil {
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

// restartMariaDB starts MariaDB again on the data a killed run left, at
// the link its state's address names (made again: /tmp may have been
// emptied by the stop).
func (s *soak) restartMariaDB(ctx context.Context, link, data string) error {
	s.dbDir, s.dbData = link, data
	if fi, err := os.Lstat(link); err == nil {
		if fi.Mode()&os.ModeSymlink == 0 {
			return fmt.Errorf("%s is not the link to MariaDB's data %s (a run without a journal?)", link, data)
		}
		os.Remove(link)
	}
	if err := os.Symlink(data, link); err != nil {
		return fmt.Errorf("linking MariaDB's directory again: %w", err)
	}
	os.WriteFile(filepath.Join(s.o.work, "mariadb.dir"), []byte(link+"\n"), 0o644)
	var err error
	if s.db, err = mariadbtest.Start(ctx, link, mariadbtest.BufferPool(s.o.dbPool)); err != nil {
		return fmt.Errorf("starting MariaDB again: %w", err)
	}
	return nil
}
