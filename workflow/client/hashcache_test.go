package client

import (
	"context"
	"crypto/md5"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
)

// smallFilesCached lets the test's tiny files into the cache.
func smallFilesCached(t *testing.T) {
	old := hashCacheMinSize
	hashCacheMinSize = 0
	t.Cleanup(func() { hashCacheMinSize = old })
}

// settled writes files and waits until they are old enough to be cached.
func settled(t *testing.T, contents map[string]string) string {
	t.Helper()
	smallFilesCached(t)
	dir := writeFiles(t, contents)
	time.Sleep(hashCacheSettle + 20*time.Millisecond)
	return dir
}

// cachedHash hashes path through a cache reopened from disk and tells
// whether the cache answered without reading the file.
func cachedHash(t *testing.T, cachePath, path string) (wire.FileRef, bool) {
	t.Helper()
	c := OpenHashCache(cachePath)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	_, _, hit := c.Lookup(path, fi)
	ref, _, err := newInputHasher(c).hash(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	return ref, hit
}

func TestHashCacheRehashesAFileChangedInPlace(t *testing.T) {
	dir := settled(t, map[string]string{"a.coor": "1 0 0\n"})
	path := filepath.Join(dir, "a.coor")
	cache := filepath.Join(t.TempDir(), "hashes")
	if ref, hit := cachedHash(t, cache, path); hit || ref.MD5 != md5hex([]byte("1 0 0\n")) {
		t.Fatalf("first hash: %+v, hit %v", ref, hit)
	}
	if ref, hit := cachedHash(t, cache, path); !hit || ref.MD5 != md5hex([]byte("1 0 0\n")) || ref.Size != 6 {
		t.Fatalf("unchanged file: %+v, hit %v; want the cached hash", ref, hit)
	}

	// Same size, and the modification time set back: only the change time
	// tells, and it must.
	before, _ := os.Stat(path)
	time.Sleep(20 * time.Millisecond)
	if err := os.WriteFile(path, []byte("2 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) || !os.SameFile(before, after) {
		t.Fatal("the test did not keep size, inode and modification time")
	}
	ref, hit := cachedHash(t, cache, path)
	if hit || ref.MD5 != md5hex([]byte("2 0 0\n")) {
		t.Fatalf("file changed in place: %+v, hit %v; want it hashed again", ref, hit)
	}
}

func TestHashCacheRehashesAFileReplacedUnderItsName(t *testing.T) {
	dir := settled(t, map[string]string{"a.coor": "AAAA", "b.coor": "BBBB"})
	path, other := filepath.Join(dir, "a.coor"), filepath.Join(dir, "b.coor")
	cache := filepath.Join(t.TempDir(), "hashes")
	cachedHash(t, cache, path)
	old, _ := os.Stat(path)
	os.Chtimes(other, old.ModTime(), old.ModTime())
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if ref, hit := cachedHash(t, cache, path); hit || ref.MD5 != md5hex([]byte("BBBB")) {
		t.Fatalf("replaced file: %+v, hit %v", ref, hit)
	}
}

func TestHashCacheSkipsFilesChangedJustNow(t *testing.T) {
	smallFilesCached(t)
	dir := writeFiles(t, map[string]string{"new.coor": "fresh"})
	path := filepath.Join(dir, "new.coor")
	cache := filepath.Join(t.TempDir(), "hashes")
	cachedHash(t, cache, path)
	if _, hit := cachedHash(t, cache, path); hit {
		t.Fatal("a file changed within the clock's granularity of its hashing was cached")
	}
	time.Sleep(hashCacheSettle + 20*time.Millisecond)
	cachedHash(t, cache, path) // settled now: cached
	if _, hit := cachedHash(t, cache, path); !hit {
		t.Fatal("a settled file was not cached")
	}
}

func TestHashCacheIgnoresADamagedFile(t *testing.T) {
	dir := settled(t, map[string]string{"a.coor": "A"})
	path := filepath.Join(dir, "a.coor")
	cache := filepath.Join(t.TempDir(), "hashes")
	cachedHash(t, cache, path)
	data, err := os.ReadFile(cache)
	if err != nil || !strings.Contains(string(data), path) {
		t.Fatalf("cache file %q, %v", data, err)
	}
	for name, damaged := range map[string]string{
		"a wrong checksum":  strings.Replace(string(data), md5hex([]byte("A")), md5hex([]byte("B")), 1),
		"a truncated file":  string(data[:len(data)-10]),
		"another version":   strings.Replace(string(data), "rboinc-hash-cache 1", "rboinc-hash-cache 9", 1),
		"no file at all":    "",
		"a line of garbage": hashCacheHeader + "x\nend 0\n",
		"a relative path":   hashCacheHeader + md5hex([]byte("A")) + " 1 1 1 1 1 1 a.coor\n",
	} {
		if err := os.WriteFile(cache, []byte(damaged), 0o600); err != nil {
			t.Fatal(err)
		}
		if c := OpenHashCache(cache); len(c.entries) != 0 {
			t.Errorf("%s: %d entries read", name, len(c.entries))
		}
	}
	// Rewritten whole by the next save.
	cachedHash(t, cache, path)
	if _, hit := cachedHash(t, cache, path); !hit {
		t.Error("the cache was not rewritten after damage")
	}
}

func TestHashCacheKeepsTheMostRecentlyUsed(t *testing.T) {
	defer func(n int) { hashCacheMax = n }(hashCacheMax)
	hashCacheMax = 3
	dir := settled(t, map[string]string{"1": "1", "2": "2", "3": "3", "4": "4", "5": "5"})
	c := OpenHashCache(filepath.Join(t.TempDir(), "hashes"))
	h := newInputHasher(c)
	for i, name := range []string{"1", "2", "3", "4", "5"} {
		c.today = int32(100 + i) // each used on a later day
		if _, _, err := h.hash(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	again := OpenHashCache(c.path)
	if len(again.entries) != 3 {
		t.Fatalf("%d entries kept, want 3", len(again.entries))
	}
	for _, name := range []string{"3", "4", "5"} {
		if _, ok := again.entries[filepath.Join(dir, name)]; !ok {
			t.Errorf("recent entry %s evicted", name)
		}
	}
}

func TestHashCachePath(t *testing.T) {
	t.Setenv(HashCacheEnv, "off")
	if p := DefaultHashCachePath(); p != "" {
		t.Errorf("RBOINC_HASH_CACHE=off gives %q", p)
	}
	t.Setenv(HashCacheEnv, "/x/h")
	if p := DefaultHashCachePath(); p != "/x/h" {
		t.Errorf("RBOINC_HASH_CACHE=/x/h gives %q", p)
	}
	t.Setenv(HashCacheEnv, "")
	t.Setenv("XDG_CACHE_HOME", "/c")
	if p := DefaultHashCachePath(); p != "/c/rboinc/hashes" {
		t.Errorf("default %q", p)
	}
}

// A submission with the cache sends what the file holds now, not what it
// held when it was cached.
func TestSubmitChainsWithCacheSeesChangedFiles(t *testing.T) {
	f, c := newFake(t)
	dir := settled(t, map[string]string{"a.coor": "A1", "b.coor": "B1"})
	a, b := filepath.Join(dir, "a.coor"), filepath.Join(dir, "b.coor")
	chains := []Chain{{Name: "c1", Files: map[string]string{"coor_file": a}}, {Name: "c2", Files: map[string]string{"coor_file": b}}}
	cachePath := filepath.Join(t.TempDir(), "hashes")
	submit := func() wire.SubmitRequest {
		t.Helper()
		if _, err := c.SubmitChains(context.Background(), SubmitInput{Queue: "md", Group: "g", Chains: chains,
			HashCache: OpenHashCache(cachePath)}); err != nil {
			t.Fatal(err)
		}
		return f.submits[len(f.submits)-1]
	}
	submit()
	if again := OpenHashCache(cachePath); len(again.entries) != 2 {
		t.Fatalf("%d entries cached after a submission, want 2", len(again.entries))
	}
	fi, _ := os.Stat(a)
	time.Sleep(20 * time.Millisecond)
	os.WriteFile(a, []byte("A2"), 0o644)
	os.Chtimes(a, fi.ModTime(), fi.ModTime())
	req := submit()
	if got := req.Chains[0].Files["coor_file"].MD5; got != md5hex([]byte("A2")) {
		t.Fatalf("changed file sent as %s, want the MD5 of its new content", got)
	}
	if got := req.Chains[1].Files["coor_file"].MD5; got != md5hex([]byte("B1")) {
		t.Fatalf("unchanged file sent as %s", got)
	}
	if len(req.Inline) != 1 || req.Inline[0].MD5 != md5hex([]byte("A2")) {
		t.Fatalf("inline %+v, want only the new content", req.Inline)
	}
}

func TestHashCacheSkipsSmallFiles(t *testing.T) {
	big := strings.Repeat("0 0 0\n", int(hashCacheMinSize)/6+1)
	dir := writeFiles(t, map[string]string{"small.conf": "x = 1\n", "big.coor": big})
	time.Sleep(hashCacheSettle + 20*time.Millisecond)
	cache := filepath.Join(t.TempDir(), "hashes")
	for _, name := range []string{"small.conf", "big.coor"} {
		cachedHash(t, cache, filepath.Join(dir, name))
	}
	if _, hit := cachedHash(t, cache, filepath.Join(dir, "small.conf")); hit {
		t.Error("a small file was cached")
	}
	if ref, hit := cachedHash(t, cache, filepath.Join(dir, "big.coor")); !hit || ref.MD5 != md5hex([]byte(big)) {
		t.Errorf("a file of %d bytes was not cached: %+v", len(big), ref)
	}
}

// Small files' bytes are kept as hashed (the request sends them without
// reading the file again); a large file's are not, nor any past the budget.
func TestHashKeepsSmallFiles(t *testing.T) {
	dir := t.TempDir()
	small, empty, large := filepath.Join(dir, "small"), filepath.Join(dir, "empty"), filepath.Join(dir, "large")
	os.WriteFile(small, []byte("0.5 0 0\n"), 0o644)
	os.WriteFile(empty, nil, 0o644)
	os.WriteFile(large, make([]byte, keepMax+1), 0o644)
	h := newInputHasher(nil)
	ref, data, err := h.hash(small)
	if err != nil || string(data) != "0.5 0 0\n" || ref.Size != 8 || ref.MD5 != fmt.Sprintf("%x", md5.Sum(data)) {
		t.Fatalf("small: %+v %q %v", ref, data, err)
	}
	if _, data, err := h.hash(empty); err != nil || data == nil || len(data) != 0 {
		t.Fatalf("empty: %q (nil %v) %v", data, data == nil, err)
	}
	ref, data, err = h.hash(large)
	if err != nil || data != nil || ref.Size != keepMax+1 {
		t.Fatalf("large: %+v kept %d bytes, %v", ref, len(data), err)
	}
	h.kept.Store(keepTotal)
	if _, data, err := h.hash(small); err != nil || data != nil {
		t.Fatalf("past the budget: kept %q, %v", data, err)
	}
}
