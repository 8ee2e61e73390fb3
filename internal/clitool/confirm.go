package clitool

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rboinc/rboinc/workflow/client"
)

// Interactive reports whether a question can be asked: stdin and stderr
// are both terminals.
func Interactive() bool { return IsTerminal(os.Stdin) && IsTerminal(os.Stderr) }

// Confirm asks prompt on out and reads the answer from in; only an answer
// starting with y or Y proceeds. yes skips the question. Without a
// terminal (cron) it refuses rather than wait: action names what is
// refused ("purge").
func Confirm(in io.Reader, out io.Writer, interactive, yes bool, action, prompt string) error {
	if yes {
		return nil
	}
	if !interactive {
		return client.Usagef("refusing to %s without confirmation: add -yes", action)
	}
	fmt.Fprint(out, prompt)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		return errors.New("aborted: no answer")
	}
	if a := strings.TrimSpace(line); a != "" && (a[0] == 'y' || a[0] == 'Y') {
		return nil
	}
	return errors.New("aborted: nothing was changed")
}
