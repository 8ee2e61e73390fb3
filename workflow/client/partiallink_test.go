package client

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
)

// TestDownloadPartialSymlinkLeftAlone: a symbolic link at a download's
// partial name (planted in a shared directory, or left by anything else)
// is not followed: the file it points to is neither truncated nor
// overwritten with the download, and the download arrives whole.
func TestDownloadPartialSymlinkLeftAlone(t *testing.T) {
	body := bytes.Repeat([]byte("result "), 5000)
	sum := md5.Sum(body)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "x", time.Time{}, bytes.NewReader(body))
	}))
	defer srv.Close()
	c, err := New(srv.URL+"/rboinc_cgi", "tok")
	if err != nil {
		t.Fatal(err)
	}
	c.Retry.First = time.Millisecond
	rf := wire.ResultFile{Name: "f", MD5: hex.EncodeToString(sum[:]), Size: int64(len(body)), Path: "/x"}
	victim := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(victim, []byte("precious data\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "f")
	if err := os.Symlink(victim, partialName(dest, rf)); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if err := c.Download(context.Background(), rf, dest, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "precious data\n" {
		t.Errorf("the file the partial name linked to was written: %d bytes, %.40q", len(got), got)
	}
	if fi, err := os.Lstat(dest); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the download is not a regular file: %v %v", fi, err)
	}
	if got, _ := os.ReadFile(dest); !bytes.Equal(got, body) {
		t.Errorf("the download differs")
	}
}

// TestBulkPartialSymlinkLeftAlone: the same for a file of a bulk
// download, written whole at its partial name.
func TestBulkPartialSymlinkLeftAlone(t *testing.T) {
	rf := wire.ResultFile{Name: "f", MD5: strings.Repeat("ab", 16), Size: 6, Path: "/x"}
	victim := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(victim, []byte("precious data\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(victim, partialName(filepath.Join(dir, LocalName(rf)), rf)); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	path, err := writePartial(rf, dir, strings.NewReader("result"), &sync.Map{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "precious data\n" {
		t.Errorf("the file the partial name linked to was written: %q", got)
	}
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the partial file is not a regular file: %v %v", fi, err)
	}
	if got, _ := os.ReadFile(path); string(got) != "result" {
		t.Errorf("the partial file holds %q", got)
	}
}
