package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/workflow/store"
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
			"migrations applied. A database of a newer rboinc is refused (exit 1).",
		Flags: []cli.Flag{rootFlag},
		// A missing --root, a directory that is not a server root and an
		// extra word are usage errors (2): see prepare.
		Action: func(c *cli.Context) error {
			root := absRoot(c.String("root"))
			path := filepath.Join(root, "state.db")
			if _, err := os.Stat(path); err != nil {
				return fmt.Errorf("no state database at %s: `rboinc-server init --root %s` makes one", path, root)
			}
			rep, err := store.Migrate(c.Context, path)
			if err != nil {
				return err
			}
			printMigration(c.App.Writer, path, rep)
			return nil
		},
	}
}

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
