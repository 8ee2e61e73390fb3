package setup

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/rboinc/rboinc/internal/atomicfile"
	"github.com/rboinc/rboinc/internal/naming"
)

// DAVPasswdFile is the htpasswd file, in the server root, through which
// Apache's mod_dav checks the same user names and tokens as rboinc-server
// (the Apache deployment, examples/apache/rboinc.conf).
const DAVPasswdFile = "dav.htpasswd"

// davHash is the htpasswd {SHA} form of a token. Tokens are 256 random
// bits, so an unsalted fast hash is as hard to reverse as the token is to
// guess, and Apache checks each DAV request in microseconds (bcrypt would
// cost tens of milliseconds per uploaded file).
func davHash(token string) string {
	s := sha1.Sum([]byte(token))
	return "{SHA}" + base64.StdEncoding.EncodeToString(s[:])
}

// SetDAVPassword records user's token in root/dav.htpasswd, replacing any
// older line of the user, and makes the user's scratch area root/dav/USER:
// mod_dav creates collections only inside an existing one.
func SetDAVPassword(root, user, token string) error {
	if err := naming.CheckUser(user); err != nil {
		return err
	}
	dir := filepath.Join(root, "dav", user)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the scratch area of %s: %w", user, err)
	}
	if err := ownLikeRoot(root, dir); err != nil {
		return err
	}
	return editDAVPasswd(root, func(m map[string]string) { m[user] = davHash(token) })
}

// RemoveDAVUser takes user out of root/dav.htpasswd, so Apache refuses its
// DAV requests.
func RemoveDAVUser(root, user string) error {
	return editDAVPasswd(root, func(m map[string]string) { delete(m, user) })
}

// DAVPasswdUsers lists the users root/dav.htpasswd lets in; a missing file
// lists none.
func DAVPasswdUsers(root string) (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(root, DAVPasswdFile))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	return parseHtpasswd(data), nil
}

// CheckDAVPassword says whether root/dav.htpasswd accepts user and token as
// Apache would.
func CheckDAVPassword(root, user, token string) bool {
	m, err := DAVPasswdUsers(root)
	if err != nil {
		return false
	}
	h, ok := m[user]
	return ok && subtle.ConstantTimeCompare([]byte(h), []byte(davHash(token))) == 1
}

// parseHtpasswd reads "user:hash" lines; anything else is skipped.
func parseHtpasswd(data []byte) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if u, h, ok := strings.Cut(line, ":"); ok && u != "" {
			m[u] = h
		}
	}
	return m
}

// editDAVPasswd rewrites the file atomically under an exclusive lock, so
// two administrators adding users at once both get their line.
func editDAVPasswd(root string, edit func(map[string]string)) error {
	lock, err := os.OpenFile(filepath.Join(root, DAVPasswdFile+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("locking %s: %w", DAVPasswdFile, err)
	}
	defer lock.Close()
	ownLikeRoot(root, lock.Name())
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", DAVPasswdFile, err)
	}
	m, err := DAVPasswdUsers(root)
	if err != nil {
		return err
	}
	edit(m)
	names := make([]string, 0, len(m))
	for u := range m {
		names = append(names, u)
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, u := range names {
		fmt.Fprintf(&b, "%s:%s\n", u, m[u])
	}
	// Readable by the web server's user only: the owner of the root.
	path := filepath.Join(root, DAVPasswdFile)
	if err := atomicfile.Write(path, b.Bytes(), 0o600); err != nil {
		return err
	}
	return ownLikeRoot(root, path)
}

// ownLikeRoot gives path the owner of the server root when root (the
// user) made it, so an administrator working as root does not lock the
// web server out.
func ownLikeRoot(root, path string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	var st syscall.Stat_t
	if err := syscall.Stat(root, &st); err != nil {
		return err
	}
	if err := os.Lchown(path, int(st.Uid), int(st.Gid)); err != nil {
		return fmt.Errorf("giving %s to the owner of %s: %w", path, root, err)
	}
	return nil
}
