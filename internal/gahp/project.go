package gahp

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rboinc/rboinc/workflow/client"
)

// Project is where requests go: the rboinc API URL (as RBOINC_URL) and
// the user's token (BOINC's "authenticator").
type Project struct {
	URL, Token string
}

// ConfigFile is read at start from the working directory, as BOINC's
// reference GAHP does: the project URL on its first line, the
// authenticator on its second.
const ConfigFile = "config.txt"

// ReadConfig reads dir/config.txt. A missing file is no error (the
// project comes with BOINC_SELECT_PROJECT); a file without both lines is.
func ReadConfig(dir string) (Project, bool, error) {
	path := filepath.Join(dir, ConfigFile)
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return Project{}, false, nil
	}
	if err != nil {
		return Project{}, false, fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(lines) < 2 {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	if err := sc.Err(); err != nil {
		return Project{}, false, fmt.Errorf("reading %s: %w", path, err)
	}
	for len(lines) < 2 {
		lines = append(lines, "")
	}
	if lines[0] == "" {
		return Project{}, false, fmt.Errorf("%s: no project URL on its first line", path)
	}
	if lines[1] == "" {
		return Project{}, false, fmt.Errorf("%s: no authenticator on its second line", path)
	}
	return Project{URL: lines[0], Token: lines[1]}, true, nil
}

// connect makes the API client of a project. The gridmanager retries by
// itself: a request is tried once unless RBOINC_RETRIES says otherwise.
func connect(p Project) (*client.Client, error) {
	if p.URL == "" {
		return nil, fmt.Errorf("no project selected: send BOINC_SELECT_PROJECT <url> <authenticator> or put them in %s", ConfigFile)
	}
	token := p.Token
	if filepath.IsAbs(token) {
		// An authenticator file's path (HTCondor's boinc_authenticator_file)
		// rather than its text: its first line is the token.
		b, err := os.ReadFile(token)
		if err != nil {
			return nil, fmt.Errorf("reading the authenticator file: %w", err)
		}
		token, _, _ = strings.Cut(strings.TrimSpace(string(b)), "\n")
		token = strings.TrimSpace(token)
	}
	c, err := client.New(p.URL, token)
	if err != nil {
		return nil, err
	}
	if os.Getenv("RBOINC_RETRIES") == "" {
		c.Retry.Attempts = 1
	}
	return c, nil
}
