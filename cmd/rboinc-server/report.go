package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/mail"
	"github.com/rboinc/rboinc/internal/query"
	nightly "github.com/rboinc/rboinc/internal/report"
	"github.com/rboinc/rboinc/internal/store"
)

// reportCommand is `report`: the nightly report of each user named, or
// of the whole server for the administrator, printed or mailed.
func reportCommand() *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "print or mail the report of chains by state, failures by reason, turnaround, late steps and disk used (of --user NAME, or of every user)",
		Flags: []cli.Flag{rootFlag,
			&cli.StringSliceFlag{Name: "user", Usage: "report on user `NAME` (repeat for more; default: one report of every user, the administrator's)"},
			&cli.BoolFlag{Name: "html", Usage: "write HTML instead of text"},
			&cli.BoolFlag{Name: "mail", Usage: "mail each report (text with an HTML alternative) through rboinc.json's \"smtp\" instead of printing it"},
			&cli.StringSliceFlag{Name: "to", Usage: "mail to `ADDRESS` (repeat for more; default for a user's report: the user's e-mail notification addresses)"}},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return usagef("usage: rboinc-server report --root DIR [--user NAME]... [--html] [--mail [--to ADDRESS]...]")
			}
			if c.IsSet("to") && !c.Bool("mail") {
				return usagef("--to needs --mail")
			}
			root := c.String("root")
			cfg, err := engine.LoadConfig(root)
			if err != nil {
				return err
			}
			if c.Bool("mail") {
				if err := cfg.SMTP.Check(); err != nil {
					return fmt.Errorf("--mail: %w", err)
				}
				if len(c.StringSlice("user")) == 0 && len(c.StringSlice("to")) == 0 {
					return usagef("--mail: the report of every user needs --to ADDRESS")
				}
			}
			db, err := engine.OpenState(c.Context, root)
			if err != nil {
				return err
			}
			defer db.Close()
			var users []*store.User // nil: every user
			for _, name := range c.StringSlice("user") {
				u, err := db.UserByName(c.Context, name)
				if errors.Is(err, store.ErrNotFound) {
					return usagef("no user %q (see `rboinc-server user list`)", name)
				}
				if err != nil {
					return err
				}
				users = append(users, &u)
			}
			if len(users) == 0 {
				users = []*store.User{nil}
			}
			now := time.Now()
			for _, u := range users {
				r, err := nightly.Build(c.Context, query.New(db), u, now)
				if err != nil {
					return err
				}
				if !c.Bool("mail") {
					if c.Bool("html") {
						err = r.HTML(os.Stdout)
					} else {
						err = r.Text(os.Stdout)
					}
					if err != nil {
						return err
					}
					continue
				}
				to := c.StringSlice("to")
				if len(to) == 0 {
					if to, err = mailAddresses(c, db, u); err != nil {
						return err
					}
				}
				if len(to) == 0 {
					return fmt.Errorf("user %s has no e-mail address (rboinc-server user notify) and --to gives none: report not sent", u.Name)
				}
				var txt, html bytes.Buffer
				if err := r.Text(&txt); err != nil {
					return err
				}
				if err := r.HTML(&html); err != nil {
					return err
				}
				if err := mail.Send(c.Context, cfg.SMTP, mail.Message{To: to, Subject: r.Subject(), Text: txt.String(), HTML: html.String()}); err != nil {
					return fmt.Errorf("mailing %q: %w", r.Subject(), err)
				}
				fmt.Fprintf(os.Stderr, "mailed %q to %v\n", r.Subject(), to)
			}
			return nil
		},
	}
}

// mailAddresses are the e-mail notification addresses of a user that are
// confirmed (by the user or the administrator): no one else is mailed.
func mailAddresses(c *cli.Context, db *store.DB, u *store.User) ([]string, error) {
	ts, err := db.NotifyTargets(c.Context, u.ID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range ts {
		if t.Kind != store.NotifyEmail || slices.Contains(out, t.Address) {
			continue
		}
		ok, err := db.EmailConfirmed(c.Context, u.ID, t.Address)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, t.Address)
		}
	}
	return out, nil
}
