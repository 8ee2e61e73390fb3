package setup

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/client"
)

// ProbeUpload tests, from outside, what a client does first: open an
// upload collection through the API at url and PUT a file into the WebDAV
// area it names (under Apache: mod_dav, its password file and its lock
// database). It uses a short-lived account of its own, removed afterwards
// with what it uploaded.
func ProbeUpload(ctx context.Context, root, url string) Findings {
	var f Findings
	root, err := filepath.Abs(root)
	if err != nil {
		f.add(Problem, "server root %s: %v", root, err)
		return f
	}
	// Opening the database upgrades it: leave that to the administrator.
	loc, err := engine.StateLocation(root)
	if err != nil {
		f.add(Problem, "server root %s: %v", root, err)
		return f
	}
	if st, err := store.Inspect(ctx, loc); err != nil || !st.Current() {
		f.add(Note, "no upload tested: the state database is not at this rboinc's schema version (see above)")
		return f
	}
	db, err := store.Open(ctx, loc)
	if err != nil {
		f.add(Problem, "cannot open the state database to test an upload: %v", err)
		return f
	}
	defer db.Close()
	var b [4]byte
	rand.Read(b[:])
	name := "doctor" + hex.EncodeToString(b[:])
	tok := server.NewToken()
	if _, err := db.AddUser(ctx, name, server.HashToken(tok)); err != nil {
		f.add(Problem, "cannot add the test account for an upload: %v", err)
		return f
	}
	defer func() {
		RemoveDAVUser(root, name)
		os.RemoveAll(filepath.Join(root, "dav", name))
		if err := db.DeleteProbeUser(context.WithoutCancel(ctx), name); err != nil {
			f.add(Note, "the test account %s could not be removed: %v; remove it with `rboinc-server user disable --root %s %s`", name, err, root, name)
		}
	}()
	if err := SetDAVPassword(root, name, tok); err != nil {
		f.add(Problem, "cannot write %s for the test upload: %v", DAVPasswdFile, err)
		return f
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cl, err := client.New(url, tok)
	if err != nil {
		f.add(Problem, "--url %s: %v", url, err)
		return f
	}
	up, err := cl.NewUpload(ctx)
	if err != nil {
		f.add(Problem, "a test upload through %s failed when opening the upload area: %v", url, err)
		return f
	}
	defer cl.DiscardUpload(context.WithoutCancel(ctx), up)
	data := []byte("rboinc doctor " + time.Now().Format(time.RFC3339Nano) + "\n")
	sum := md5.Sum(data)
	tmp, err := os.CreateTemp(root, ".doctor-probe-*")
	if err != nil {
		f.add(Note, "cannot make a file to test an upload with: %v", err)
		return f
	}
	defer os.Remove(tmp.Name())
	tmp.Write(data)
	tmp.Close()
	if err := cl.PutFile(ctx, up.DAVPath, hex.EncodeToString(sum[:]), tmp.Name(), nil); err != nil {
		f.add(Problem, "a test upload (WebDAV PUT to %s) failed: %v. Clients can then send only inputs of up to 1 MiB (inside the submission); under Apache, check its error log, that %s is readable by Apache's user, and that the DAVLockDB directory (%s in examples/apache/rboinc.conf) is writable by it", up.DAVPath, err, filepath.Join(root, DAVPasswdFile), filepath.Join(root, "dav-lock"))
		return f
	}
	f.add(OK, "a test upload through %s (WebDAV PUT to %s) works", url, up.DAVPath)
	return f
}
