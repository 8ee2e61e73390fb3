package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rboinc/rboinc/internal/smtptest"
	"github.com/rogpeppe/go-internal/testscript"
)

// mailServers are the scripts' SMTP servers (rbsmtp).
var mailServers sync.Map // *testscript.TestScript -> *smtptest.Server

// rbsmtp: run a real SMTP server on loopback until the script ends; sets
// SMTP_PORT (rbjsonset smtp '{...}' points the server root at it).
func cmdSMTP(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: rbsmtp")
	}
	s, err := smtptest.Listen()
	ts.Check(err)
	mailServers.Store(ts, s)
	ts.Defer(func() { mailServers.Delete(ts); s.Close() })
	ts.Setenv("SMTP_PORT", strconv.Itoa(s.Port))
}

var mailedCode = regexp.MustCompile(`-code ([0-9]+)\b`)

// rbmailcode VAR ADDRESS: waits for the newest message to ADDRESS holding
// a confirmation code (rboinc-retrieve -confirm-email) and sets VAR to it.
func cmdMailCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: rbmailcode VAR ADDRESS")
	}
	v, ok := mailServers.Load(ts)
	if !ok {
		ts.Fatalf("rbmailcode: no rbsmtp server")
	}
	s := v.(*smtptest.Server)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		msgs := s.Messages()
		for i := len(msgs) - 1; i >= 0; i-- {
			if strings.Join(msgs[i].To, ",") != args[1] {
				continue
			}
			if m := mailedCode.FindStringSubmatch(msgs[i].Body); m != nil {
				ts.Setenv(args[0], m[1])
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	ts.Fatalf("rbmailcode: no code mailed to %s", args[1])
}
