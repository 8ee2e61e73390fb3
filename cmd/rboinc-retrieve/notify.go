package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/rboinc/rboinc/internal/clitool"
	"github.com/rboinc/rboinc/internal/notifytarget"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
	"github.com/urfave/cli/v2"
)

const catNotify = "Notifications"

// notifyFlags are the user's own notification settings: the webhook
// signing secret and the confirmation of e-mail addresses.
func notifyFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "notify-secret", Category: catNotify, Usage: "print your webhook signing secret: each webhook call carries X-Rboinc-Signature: sha256=HMAC-SHA256(secret, raw body) in hex"},
		&cli.BoolFlag{Name: "notify-secret-rotate", Category: catNotify, Usage: "replace your webhook signing secret and print the new one (asks first, unless -yes)"},
		&cli.StringFlag{Name: "confirm-email", Category: catNotify, Usage: "have a one-time code mailed to `ADDRESS`; with -code, confirm the address so that rboinc-submit -notify may name it"},
		&cli.StringFlag{Name: "code", Category: catNotify, Usage: "with -confirm-email: the `CODE` that was mailed"},
	}
}

// notifyAction runs a notification option, if one is given (done).
func notifyAction(c *cli.Context) (done bool, err error) {
	secret, rotate, email := c.Bool("notify-secret"), c.Bool("notify-secret-rotate"), c.IsSet("confirm-email")
	n := 0
	for _, b := range []bool{secret, rotate, email} {
		if b {
			n++
		}
	}
	if n == 0 {
		if c.IsSet("code") {
			return true, client.Usagef("-code goes with -confirm-email ADDRESS")
		}
		return false, nil
	}
	if n > 1 {
		return true, client.Usagef("give one of -notify-secret, -notify-secret-rotate and -confirm-email")
	}
	if c.IsSet("group") || c.IsSet("name") {
		return true, client.Usagef("-notify-secret, -notify-secret-rotate and -confirm-email take no -group or -name")
	}
	var addr string
	if email {
		kind, a, perr := notifytarget.Parse(c.String("confirm-email"))
		if perr == nil && kind != notifytarget.Email {
			perr = fmt.Errorf("%q is not an e-mail address", c.String("confirm-email"))
		}
		if perr != nil {
			return true, client.Usagef("-confirm-email: %v", perr)
		}
		addr = a
	}
	if rotate {
		prompt := "Replace your webhook signing secret (receivers must be given the new one)? [y/N] "
		if err := clitool.Confirm(os.Stdin, os.Stderr, clitool.Interactive(), c.Bool("yes"), "notify-secret-rotate", prompt); err != nil {
			return true, err
		}
	}
	cl, err := clitool.Connect(c)
	if err != nil {
		return true, err
	}
	switch {
	case secret, rotate:
		get := cl.NotifySecret
		if rotate {
			get = cl.RotateNotifySecret
		}
		s, err := get(c.Context)
		if err != nil {
			return true, fmt.Errorf("cannot get your webhook signing secret: %w", err)
		}
		if c.Bool("json") {
			return true, writeJSON(c.App.Writer, wire.NotifySecret{Secret: s})
		}
		fmt.Fprintln(c.App.Writer, s)
		return true, nil
	}
	r, err := cl.ConfirmEmail(c.Context, addr, strings.TrimSpace(c.String("code")))
	if err != nil {
		return true, fmt.Errorf("cannot confirm %s: %w", addr, err)
	}
	if c.Bool("json") {
		return true, writeJSON(c.App.Writer, r)
	}
	fmt.Fprintln(c.App.Writer, r.Message)
	return true, nil
}
