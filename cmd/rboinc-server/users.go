package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/workflow/server"
	"github.com/rboinc/rboinc/workflow/setup"
	"github.com/rboinc/rboinc/workflow/store"
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
