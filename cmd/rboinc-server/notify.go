package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/internal/dialguard"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/notifytarget"
	"github.com/rboinc/rboinc/internal/store"
)

// notifyCommand is `user notify`: a user's notification targets, added,
// removed or listed, and their webhook signing secret.
func notifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "notify",
		Usage:     "register where a user's chain events are sent (webhooks, e-mail); without a target, list them",
		ArgsUsage: "NAME",
		Description: "Webhooks get a JSON POST per event, signed in the X-Rboinc-Signature header\n" +
			"(sha256=HMAC-SHA256 of the body under the user's secret: --secret prints it); e-mail\n" +
			"goes through rboinc.json's \"smtp\" server. Deliveries wait in a durable outbox and are\n" +
			"retried with a back-off. The notifier daemon (rboinc-server notifier) or the standalone\n" +
			"server sends them.\n" +
			"An address given with --email counts as confirmed for the user (users confirm their\n" +
			"own with rboinc-retrieve -confirm-email). A webhook on a loopback, link-local or\n" +
			"private address is refused unless rboinc.json's \"notify_allow\" lists it; a user has\n" +
			"at most \"max_notify_targets\" targets (default 32).",
		Flags: []cli.Flag{rootFlag,
			&cli.StringSliceFlag{Name: "webhook", Usage: "POST events to `URL` (http or https; repeatable)"},
			&cli.StringSliceFlag{Name: "email", Usage: "mail events to `ADDRESS` (repeatable)"},
			&cli.StringFlag{Name: "events", Usage: "the event types to send, comma-separated, or all (default chain_done,chain_failed,group_done)"},
			&cli.StringFlag{Name: "group", Usage: "only the events of group `G`"},
			&cli.BoolFlag{Name: "remove", Usage: "remove the given targets instead"},
			&cli.BoolFlag{Name: "secret", Usage: "print the user's webhook signing secret (made at the first ask)"},
			&cli.BoolFlag{Name: "rotate-secret", Usage: "give the user a new signing secret and print it"},
		},
		Action: func(c *cli.Context) error {
			var targets []store.NotifyTarget
			for _, w := range c.StringSlice("webhook") {
				kind, addr, err := notifytarget.Parse(w)
				if err != nil || kind != notifytarget.Webhook {
					if err == nil {
						err = fmt.Errorf("%q is not a webhook URL (use --email for addresses)", w)
					}
					return usagef("--webhook: %v", err)
				}
				targets = append(targets, store.NotifyTarget{Kind: kind, Address: addr})
			}
			for _, m := range c.StringSlice("email") {
				kind, addr, err := notifytarget.Parse(m)
				if err != nil || kind != notifytarget.Email {
					if err == nil {
						err = fmt.Errorf("%q is not an e-mail address (use --webhook for URLs)", m)
					}
					return usagef("--email: %v", err)
				}
				targets = append(targets, store.NotifyTarget{Kind: kind, Address: addr})
			}
			events, err := engine.ParseNotifyEvents(c.String("events"))
			if err != nil {
				return usagef("--events: %v", err)
			}
			if g := c.String("group"); g != "" {
				if err := naming.CheckIdent("group", g); err != nil {
					return usagef("--group: %v", err)
				}
			}
			if c.Bool("remove") && len(targets) == 0 {
				return usagef("--remove needs the --webhook or --email targets to remove")
			}
			var cfg engine.Config
			if len(targets) > 0 && !c.Bool("remove") {
				var err error
				if cfg, err = engine.LoadConfig(c.String("root")); err != nil {
					return err
				}
				guard, err := dialguard.Parse(cfg.NotifyAllow)
				if err != nil {
					return err
				}
				for _, t := range targets {
					if t.Kind != notifytarget.Webhook {
						continue
					}
					if err := engine.CheckWebhookAddress(c.Context, guard, t.Address); err != nil {
						return usagef("--webhook: %v", err)
					}
				}
			}
			return oneUser(c, func(db *store.DB, u store.User) error {
				switch {
				case c.Bool("rotate-secret"):
					s, err := db.RotateNotifySecret(c.Context, u.ID)
					if err != nil {
						return err
					}
					fmt.Println(s)
				case c.Bool("secret"):
					s, err := db.NotifySecret(c.Context, u.ID)
					if err != nil {
						return err
					}
					fmt.Println(s)
				}
				var add []store.NotifyTarget
				for _, t := range targets {
					if c.Bool("remove") {
						found, err := db.RemoveNotifyTargets(c.Context, u.ID, t.Kind, t.Address)
						if err != nil {
							return err
						}
						if !found {
							return fmt.Errorf("%s has no notification target %s", u.Name, t.Address)
						}
						continue
					}
					if t.Kind == notifytarget.Email {
						if err := db.RegisterEmail(c.Context, u.ID, t.Address, store.EmailByAdmin); err != nil {
							return err
						}
					}
					t.UserID, t.Group, t.Events = u.ID, c.String("group"), events
					add = append(add, t)
				}
				// The user's signing secret is made with the first target.
				err := db.AddNotifyTargets(c.Context, add, cfg.MaxNotifyTargets)
				if errors.Is(err, store.ErrTooManyTargets) {
					return usagef("%s: %v (rboinc.json's max_notify_targets): remove some first (--remove)", u.Name, err)
				}
				if err != nil {
					return err
				}
				for _, t := range add {
					fmt.Fprintf(os.Stderr, "%s: %s %s gets %s\n", u.Name, t.Kind, t.Address, strings.Join(events, ","))
				}
				if len(targets) > 0 || c.Bool("secret") || c.Bool("rotate-secret") {
					return nil
				}
				list, err := db.NotifyTargets(c.Context, u.ID)
				if err != nil {
					return err
				}
				for _, t := range list {
					g := t.Group
					if g == "" {
						g = "*"
					}
					fmt.Printf("%s\t%s\t%s\t%s\n", t.Kind, t.Address, g, strings.Join(t.Events, ","))
				}
				return nil
			})
		},
	}
}
