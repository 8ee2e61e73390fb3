package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/store"
)

// migrateCommand is `migrate`: bring the state database's schema up to
// this rboinc's version now, and say what was done (every process that
// opens the database would do the same, silently).
func migrateCommand() *cli.Command {
	return &cli.Command{
		Name:  "migrate",
		Usage: "upgrade the state database's schema to this rboinc's version and report (exit 0 done or up to date, 1 failure, 2 usage)",
		Description: "Every rboinc process that opens the state database upgrades it first; migrate does it\n" +
			"explicitly, after a backup (sqlite3 state.db '.backup state.db.bak'), and prints the\n" +
			"migrations applied. A database of a newer rboinc is refused (exit 1).\n\n" +
			"With --to mysql://USER:PASS@tcp(HOST:PORT)/DB (or unix(SOCKET)), it moves the root's SQLite\n" +
			"state into that MariaDB database (rboinc_* tables, which must be empty), compares every\n" +
			"table's row count and checksum, and only then switches rboinc.json's state_db to it.\n" +
			"Stop rboinc's server, daemons and BOINC's project first: the state must not change\n" +
			"meanwhile. state.db stays as it was, as a backup. An address with a password never goes on\n" +
			"the command line (every user sees it there): --to-file FILE, RBOINC_MIGRATE_TO or --to - (stdin).",
		Flags: append([]cli.Flag{rootFlag}, migrateToInput.flags()...),
		// A missing --root, a directory that is not a server root and an
		// extra word are usage errors (2): see prepare.
		Action: func(c *cli.Context) error {
			root := absRoot(c.String("root"))
			if migrateToInput.given(c) {
				to, err := migrateToInput.value(c, os.Stdin)
				if err != nil {
					return err
				}
				return moveState(c.Context, c.App.Writer, root, to)
			}
			path, err := engine.StateLocation(root)
			if err != nil {
				return err
			}
			if store.IsMySQL(path) {
				rep, err := store.Migrate(c.Context, path)
				if err != nil {
					return err
				}
				printMigration(c.App.Writer, redacted(path), rep)
				return secureRoot(root)
			}
			if _, err := os.Stat(path); err != nil {
				return fmt.Errorf("no state database at %s: `rboinc-server init --root %s` makes one", path, root)
			}
			rep, err := store.Migrate(c.Context, path)
			if err != nil {
				return err
			}
			printMigration(c.App.Writer, path, rep)
			return secureRoot(root)
		},
	}
}

// moveState is `migrate --to`: the root's SQLite state copied into
// MariaDB, verified, and rboinc.json switched to it.
func moveState(ctx context.Context, w io.Writer, root, to string) error {
	if !store.IsMySQL(to) {
		return usagef("--to %q: expected mysql://USER:PASS@tcp(HOST:PORT)/DB or mysql://USER:PASS@unix(SOCKET)/DB", redacted(to))
	}
	cfg, err := engine.LoadConfig(root)
	if err != nil {
		return err
	}
	if cfg.StateDB != "" {
		return fmt.Errorf("%s keeps its state in %s already (state_db in %s)", root, redacted(cfg.StateDB), engine.ConfigFile)
	}
	path := cfg.StateLocation(root)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no state database at %s: `rboinc-server init --root %s --state-db-file FILE` makes a root with its state in the MariaDB that FILE names", path, root)
	}
	src, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := store.Open(ctx, to)
	if err != nil {
		return err
	}
	defer dst.Close()
	fmt.Fprintf(w, "copying %s into %s\n", path, dst)
	tables, err := src.CopyTo(ctx, dst, func(ts []store.TableCopy) error {
		// Still under the source's write lock: nothing was written to it
		// since the copy, and nothing is until rboinc.json names the copy.
		return engine.SetStateDB(root, to)
	})
	if err != nil {
		return fmt.Errorf("the state stays in %s (%s unchanged): %w", path, engine.ConfigFile, err)
	}
	for _, t := range tables {
		fmt.Fprintf(w, "  %-14s %8d rows  sha256 %.16s  same on both\n", t.Table, t.Rows, t.Sum)
	}
	fmt.Fprintf(w, "%s now names %s as state_db; %s is no longer used (keep it as a backup)\n", filepath.Join(root, engine.ConfigFile), dst, path)
	return secureRoot(root)
}

// secureRoot makes the root's secret files private (setup.SecureRoot)
// after migrate wrote them.
func secureRoot(root string) error {
	cfg, err := engine.LoadConfig(root)
	if err != nil {
		return err
	}
	return setup.SecureRoot(root, cfg)
}

// redacted is a state database's location without its password.
func redacted(loc string) string { return store.Describe(loc) }

func printMigration(w io.Writer, path string, rep store.MigrationReport) {
	if len(rep.Applied) == 0 {
		fmt.Fprintf(w, "state database %s: schema version %d, up to date\n", path, rep.To)
		return
	}
	from := fmt.Sprintf("schema version %d", rep.From)
	if rep.Adopted {
		from = "the schema of the release before schema versions"
	}
	fmt.Fprintf(w, "state database %s: upgraded from %s to schema version %d\n", path, from, rep.To)
	for _, m := range rep.Applied {
		fmt.Fprintf(w, "  applied %d: %s\n", m.Version, m.Name)
	}
}
