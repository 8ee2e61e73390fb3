package main

import (
	"os"
	"strconv"
	"strings"

	"github.com/rboinc/rboinc/internal/clitool"
	"github.com/urfave/cli/v2"
)

// preArgs are the options needed before the full command line can be
// parsed: the queue decides which -<parameter> options exist.
type preArgs struct {
	url, token, app string
	help, verbose   bool
}

// prescan picks -url, -authenticator, -app_name, -help and -verbose out of
// args (without the program name), in any of the forms the full parse
// accepts: -x v, --x v, -x=v, --x=v, any letter case, unambiguous
// prefixes. Environment variables fill in url and token, as they do for
// the full parse.
func prescan(args []string) preArgs {
	p := preArgs{url: os.Getenv("RBOINC_URL"), token: os.Getenv("RBOINC_TOKEN")}
	// Abbreviations of the fixed options resolve as in the full parse; the
	// queue's own options are not known yet, so ambiguity is left to it.
	known := append(fixedFlags(), &cli.BoolFlag{Name: "help", Aliases: []string{"h"}})
	args, _ = clitool.ExpandArgs(args, known, true)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		name, val, hasVal := strings.Cut(name, "=")
		value := func() string {
			if hasVal {
				return val
			}
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		boolean := func() bool {
			if !hasVal {
				return true
			}
			b, err := strconv.ParseBool(val)
			return err == nil && b
		}
		switch name {
		case "url":
			p.url = value()
		case "authenticator":
			p.token = value()
		case "app_name":
			p.app = value()
		case "help", "h":
			p.help = boolean()
		case "verbose":
			p.verbose = boolean()
		}
	}
	// A URL written for the original clients carries the token.
	var tok string
	p.url, tok = clitool.URLCredentials(p.url)
	if p.token == "" {
		p.token = tok
	}
	return p
}
