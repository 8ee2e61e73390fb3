package clitool

import (
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/urfave/cli/v2"
)

func TestCACertFlag(t *testing.T) {
	run := func(args ...string) error {
		app := &cli.App{Name: "x", Flags: ServerFlags(), Action: func(c *cli.Context) error {
			_, err := Connect(c)
			return err
		}}
		Setup(app)
		return app.Run(append([]string{"x", "-url", "https://h/rboinc_cgi", "-authenticator", "t"}, args...))
	}
	err := run("-cacert", "/nonexistent/ca.pem")
	if client.ExitCode(err) != client.ExitUsage || !strings.Contains(err.Error(), "CA file") {
		t.Errorf("-cacert with a missing file: %v", err)
	}
	t.Setenv("RBOINC_CA_FILE", "/nonexistent/ca.pem")
	if err := run(); client.ExitCode(err) != client.ExitUsage {
		t.Errorf("RBOINC_CA_FILE with a missing file: %v", err)
	}
	t.Setenv("RBOINC_CA_FILE", "")
	if err := run(); err != nil {
		t.Errorf("no CA file: %v", err)
	}
}
