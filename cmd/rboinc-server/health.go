package main

import (
	"context"

	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/webstatus"
)

// The administrator's status page shows doctor's checks; package setup
// holds them and imports the server, so the program connects the two.
func init() {
	webstatus.DefaultHealth = func(ctx context.Context, root string) []webstatus.Finding {
		var out []webstatus.Finding
		for _, f := range setup.Doctor(ctx, root) {
			out = append(out, webstatus.Finding{Severity: f.Severity.String(), Msg: f.Msg})
		}
		return out
	}
}
