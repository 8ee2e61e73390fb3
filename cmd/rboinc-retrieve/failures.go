package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/workflow/client"
)

// reportFailures tells, on stderr and even off a terminal (cron mails it),
// each chain of the group that failed since the last retrieval into dir,
// once: the last event seen is remembered at mark (eventsMark). The first
// retrieval only remembers where the events are. A server without the
// events feed is passed over in silence.
func reportFailures(c *cli.Context, cl *client.Client, mark, legacy, group, name string) {
	data, err := os.ReadFile(mark)
	if errors.Is(err, fs.ErrNotExist) && legacy != "" {
		// Kept in the download directory by an older rboinc-retrieve:
		// carried over (and removed once the new one is written).
		data, err = os.ReadFile(legacy)
	}
	after := int64(-1)
	if err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil && n >= 0 {
			after = n
		}
	}
	last := after
	for range 100 { // pages of the server's size; a bound, not a loop forever
		r, err := cl.Events(c.Context, after, 0)
		if err != nil {
			return
		}
		if after < 0 {
			last = r.LastID
			break
		}
		for _, e := range r.Events {
			last = e.ID
			if e.Type == "chain_failed" && e.Group == group && (name == "" || e.Name == name) {
				fmt.Fprintf(c.App.ErrWriter, "%s: chain %s of group %s failed: %s\n", prog, e.Name, e.Group, oneField(e.Reason))
			}
		}
		if len(r.Events) == 0 {
			break
		}
		after = last
	}
	if last < 0 {
		return
	}
	if err := os.MkdirAll(filepath.Dir(mark), 0o700); err != nil {
		return
	}
	if writeCursor(mark, last) == nil && legacy != "" {
		os.Remove(legacy)
	}
}

// writeCursor replaces the cursor at mark by last, atomically, through a
// temporary file of a fresh name: the download directory may be shared,
// and a fixed temporary name there could be a link someone planted to a
// file of the user's.
func writeCursor(mark string, last int64) error {
	f, err := os.CreateTemp(filepath.Dir(mark), "."+filepath.Base(mark)+".tmp*")
	if err != nil {
		return err
	}
	_, werr := f.WriteString(strconv.FormatInt(last, 10) + "\n")
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(f.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(f.Name(), mark)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
	return werr
}

// eventsMark is where the events cursor of a group's retrievals into dir
// is kept: in the user's state directory, keyed by the server, the user
// and the directory, with legacy the file an older rboinc-retrieve kept in
// dir; without a state directory, that file itself (legacy "").
func eventsMark(c *cli.Context, cl *client.Client, state, dir, group string) (mark, legacy string) {
	old := client.LegacyEventsCursor(dir, group)
	if state == "" {
		return old, ""
	}
	canon, err := client.CanonicalDir(dir)
	if err != nil {
		return old, ""
	}
	return client.EventsCursorPath(state, cl.Base.String(), whoAmI(c, cl), canon, group), old
}

// whoAmI is the user the server knows the client as; should it not say
// (an older server), the token stands for it, hashed.
// Asked once a process (-follow retrieves again and again).
func whoAmI(c *cli.Context, cl *client.Client) string {
	if who, ok := knownUsers[cl]; ok {
		return who
	}
	who := ""
	if u, err := cl.WhoAmI(c.Context); err == nil && u != "" {
		who = "user " + u
	} else {
		sum := sha256.Sum256([]byte(cl.Token))
		who = "token " + hex.EncodeToString(sum[:])
	}
	knownUsers[cl] = who
	return who
}

// knownUsers are the users of the clients of this process (whoAmI).
var knownUsers = map[*client.Client]string{}
