package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/store"
)

// oneUser runs fn on the user named by the command's single argument.
func oneUser(c *cli.Context, fn func(db *store.DB, u store.User) error) error {
	if c.NArg() != 1 {
		return usagef("usage: rboinc-server user %s --root DIR NAME", c.Command.Name)
	}
	return withDB(c, func(db *store.DB) error {
		u, err := db.UserByName(c.Context, c.Args().First())
		if errors.Is(err, store.ErrNotFound) {
			return usagef("no user %q (see `rboinc-server user list`)", c.Args().First())
		}
		if err != nil {
			return err
		}
		return fn(db, u)
	})
}

// userStateCommand is `user disable` or `user enable`. A disabled user's
// requests are all refused (also Apache's WebDAV, through dav.htpasswd);
// their chains keep running.
func userStateCommand(disable bool) *cli.Command {
	name, usage := "enable", "let a disabled user in again"
	if disable {
		name, usage = "disable", "refuse every request of a user (their chains keep running)"
	}
	return &cli.Command{
		Name: name, Usage: usage, ArgsUsage: "NAME", Flags: []cli.Flag{rootFlag},
		Action: func(c *cli.Context) error {
			return oneUser(c, func(db *store.DB, u store.User) error {
				if err := db.SetUserDisabled(c.Context, u.Name, disable); err != nil {
					return err
				}
				root := absRoot(c.String("root"))
				if disable {
					return setup.RemoveDAVUser(root, u.Name)
				}
				if _, ok := mustDAVUsers(root)[u.Name]; !ok {
					fmt.Fprintf(os.Stderr, "note: %s's token works again for rboinc-server; for Apache's WebDAV (%s) give them a new token with `rboinc-server user rotate`\n", u.Name, setup.DAVPasswdFile)
				}
				return nil
			})
		},
	}
}

func mustDAVUsers(root string) map[string]string {
	m, err := setup.DAVPasswdUsers(root)
	if err != nil {
		return map[string]string{}
	}
	return m
}

// rotateCommand is `user rotate`: a new token, printed alone on one line;
// the old one stops working at once.
func rotateCommand() *cli.Command {
	return &cli.Command{
		Name: "rotate", Usage: "give a user a new token (printed) and revoke the old one", ArgsUsage: "NAME", Flags: []cli.Flag{rootFlag},
		Action: func(c *cli.Context) error {
			return oneUser(c, func(db *store.DB, u store.User) error {
				tok, err := server.RotateToken(c.Context, db, u.Name)
				if err != nil {
					return err
				}
				if !u.Disabled {
					if err := setup.SetDAVPassword(absRoot(c.String("root")), u.Name, tok); err != nil {
						return fmt.Errorf("token of %s rotated, but Apache's WebDAV will refuse the new one: %w", u.Name, err)
					}
				}
				fmt.Println(tok)
				return nil
			})
		},
	}
}

var boincUserFlag = &cli.Int64Flag{Name: "boinc-user", Usage: "link the user to BOINC account `ID`: its authenticator then logs in as the user (0: unlink)"}

// linkCommand is `user link`: link a user to a BOINC account, or unlink.
func linkCommand() *cli.Command {
	return &cli.Command{
		Name: "link", Usage: "link a user to a BOINC account (--boinc-user ID; 0 unlinks), whose authenticator then logs in as the user",
		ArgsUsage: "NAME", Flags: []cli.Flag{rootFlag, boincUserFlag},
		Action: func(c *cli.Context) error {
			if !c.IsSet("boinc-user") {
				return usagef("usage: rboinc-server user link --root DIR --boinc-user ID NAME")
			}
			if err := checkBoincUser(c); err != nil {
				return err
			}
			return oneUser(c, func(db *store.DB, u store.User) error {
				return db.SetBoincUser(c.Context, u.Name, c.Int64("boinc-user"))
			})
		},
	}
}

// checkBoincUser makes sure --boinc-user names an account of BOINC's
// database; when that database cannot be read, it says so and goes on.
func checkBoincUser(c *cli.Context) error {
	id := c.Int64("boinc-user")
	if id < 0 {
		return usagef("--boinc-user %d: BOINC account ids are positive (0 unlinks)", id)
	}
	if id == 0 {
		return nil
	}
	e, err := engine.Open(c.Context, c.String("root"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	defer e.Close()
	err = e.CheckBoincAccount(c.Context, id)
	if errors.Is(err, engine.ErrUnknownBoincAccount) {
		return usagef("--boinc-user %d: %v", id, err)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "note: %v; linking anyway\n", err)
	}
	return nil
}

// adminCommand is `user admin [--revoke] NAME`: grant (or revoke) the
// administrator's right: every user's chains on the status page, the
// metrics, the administrator's report.
func adminCommand() *cli.Command {
	return &cli.Command{
		Name: "admin", Usage: "make a user an administrator (--revoke: no longer one)", ArgsUsage: "NAME",
		Flags: []cli.Flag{rootFlag, &cli.BoolFlag{Name: "revoke", Usage: "take the right away"}},
		Action: func(c *cli.Context) error {
			return oneUser(c, func(db *store.DB, u store.User) error {
				return db.SetUserAdmin(c.Context, u.Name, !c.Bool("revoke"))
			})
		},
	}
}
