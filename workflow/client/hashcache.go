package client

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rboinc/rboinc/internal/atomicfile"
)

// HashCache remembers the MD5 of input files between submissions, so that
// resubmitting unchanged files does not read them again. An entry counts
// only for the very same file, unchanged: same absolute path, device,
// inode, size, and modification and change times to the nanosecond (a
// write, a rename onto the path, a chmod or a utime all move the change
// time, which no user can set back). Anything doubtful is hashed again:
// an unreadable or damaged cache file is ignored as a whole, files on
// network or unknown file systems and files with whole-second times are
// never cached, and a file changed too recently to be told apart from a
// later change within the clock's granularity is hashed but not cached.
// Small files, as quick to read as to look up, are not cached either.
//
// The cache lives in one file, rewritten atomically (temporary file and
// rename) when it changed; several processes at once lose only entries,
// never correctness. A HashCache is safe for concurrent Lookup and Put.
type HashCache struct {
	path string

	mu      sync.Mutex
	entries map[string]hashEntry
	dirty   bool
	today   int32
}

// hashEntry is one file as it was when hashed.
type hashEntry struct {
	fileID
	sum  string
	used int32 // day (Unix days) the entry was last used: the least used go first
}

// fileID is what makes a file the same, unchanged file.
type fileID struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds
}

// Bounds of the cache; variables so that tests can lower them.
var (
	// hashCacheMax bounds the entries kept (about 150 bytes each on disk).
	hashCacheMax = 20000
	// hashCacheSettle is how long ago a file must have last changed to be
	// cached: well above the granularity of file times (a clock tick).
	hashCacheSettle = 100 * time.Millisecond
	// hashCacheMinSize is the smallest file cached: a smaller one is read
	// about as fast as it is looked up, and thousands of small files under
	// new names would only make the cache slower to read.
	hashCacheMinSize int64 = 16 << 10
)

// hashCacheMaxFile bounds the cache file read: a larger one is ignored.
const hashCacheMaxFile = 64 << 20

const hashCacheHeader = "rboinc-hash-cache 1\n"

// HashCacheEnv names the environment variable that moves the hash cache
// to another file, or turns it off with "off".
const HashCacheEnv = "RBOINC_HASH_CACHE"

// DefaultHashCachePath is where the hash cache lives: $RBOINC_HASH_CACHE,
// or rboinc/hashes in the user's cache directory. It is "" when the cache
// is off (RBOINC_HASH_CACHE=off) or there is no cache directory.
func DefaultHashCachePath() string {
	if v := os.Getenv(HashCacheEnv); v != "" {
		if v == "off" {
			return ""
		}
		return v
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "rboinc", "hashes")
}

// OpenHashCache reads the cache at path; a missing, unreadable or damaged
// file gives an empty cache (it is rewritten on Save).
func OpenHashCache(path string) *HashCache {
	c := &HashCache{path: path, entries: map[string]hashEntry{}, today: unixDay(time.Now())}
	if err := c.load(); err != nil {
		clear(c.entries)
	}
	return c
}

func unixDay(t time.Time) int32 { return int32(t.Unix() / 86400) }

// load parses the cache file: a header, one entry a line, and a last line
// with a checksum of everything before it. Any deviation rejects the file.
func (c *HashCache) load() error {
	f, err := os.Open(c.path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() > hashCacheMaxFile {
		return errors.New("hash cache unreadable or too large")
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return err
	}
	body, trailer, ok := cutLastLine(data)
	if !ok || !bytes.HasPrefix(body, []byte(hashCacheHeader)) {
		return errors.New("hash cache damaged")
	}
	if string(trailer) != cacheTrailer(body) {
		return errors.New("hash cache damaged")
	}
	rest := string(body[len(hashCacheHeader):]) // one copy; paths share it
	c.entries = make(map[string]hashEntry, strings.Count(rest, "\n"))
	for rest != "" {
		line, after, _ := strings.Cut(rest, "\n")
		rest = after
		path, e, ok := parseHashEntry(line)
		if !ok {
			return errors.New("hash cache damaged")
		}
		c.entries[path] = e
	}
	return nil
}

// cacheTrailer is the last line of a cache file whose lines before it are
// body: a checksum that finds a damaged or truncated file.
func cacheTrailer(body []byte) string {
	return fmt.Sprintf("end %08x", crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
}

// cutLastLine splits data before its last line (without its newline).
func cutLastLine(data []byte) (body, last []byte, ok bool) {
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, nil, false
	}
	i := bytes.LastIndexByte(data[:len(data)-1], '\n')
	if i < 0 {
		return nil, nil, false
	}
	return data[:i+1], data[i+1 : len(data)-1], true
}

// parseHashEntry reads "md5 size dev ino mtime ctime used path".
func parseHashEntry(line string) (string, hashEntry, bool) {
	var e hashEntry
	var f [7]string
	rest := line
	for i := range f {
		var ok bool
		if f[i], rest, ok = strings.Cut(rest, " "); !ok {
			return "", e, false
		}
	}
	if len(f[0]) != 32 || !isLowerHex(f[0]) || !filepath.IsAbs(rest) {
		return "", e, false
	}
	e.sum = f[0]
	var err [6]error
	e.size, err[0] = strconv.ParseInt(f[1], 10, 64)
	e.dev, err[1] = strconv.ParseUint(f[2], 10, 64)
	e.ino, err[2] = strconv.ParseUint(f[3], 10, 64)
	e.mtime, err[3] = strconv.ParseInt(f[4], 10, 64)
	e.ctime, err[4] = strconv.ParseInt(f[5], 10, 64)
	used, e5 := strconv.ParseInt(f[6], 10, 32)
	err[5] = e5
	e.used = int32(used)
	for _, x := range err {
		if x != nil {
			return "", e, false
		}
	}
	return rest, e, e.size >= 0
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Lookup returns the cached MD5 and size of the file at abs (an absolute,
// clean path) when fi, its os.Stat, shows the very file that was hashed.
func (c *HashCache) Lookup(abs string, fi os.FileInfo) (string, int64, bool) {
	id, ok := cacheableID(abs, fi)
	if !ok {
		return "", 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, found := c.entries[abs]
	if !found || e.fileID != id {
		return "", 0, false
	}
	if e.used != c.today {
		e.used = c.today
		c.entries[abs] = e
		c.dirty = true
	}
	return e.sum, e.size, true
}

// Put remembers that the file at abs had MD5 sum when it was read between
// before and after (its fstat before and after the read) and the read
// began at start. Nothing is remembered when the file changed meanwhile,
// changed too shortly before start, or cannot be cached at all.
func (c *HashCache) Put(abs, sum string, before, after os.FileInfo, start time.Time) {
	id, ok := cacheableID(abs, before)
	if !ok || id.size < hashCacheMinSize {
		return
	}
	if id2, ok := cacheableID(abs, after); !ok || id2 != id {
		return
	}
	settled := start.Add(-hashCacheSettle).UnixNano()
	if id.mtime >= settled || id.ctime >= settled {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[abs] = hashEntry{fileID: id, sum: sum, used: c.today}
	c.dirty = true
}

// cacheableID identifies a file that may be cached at all.
func cacheableID(abs string, fi os.FileInfo) (fileID, bool) {
	if !fi.Mode().IsRegular() || strings.ContainsAny(abs, "\n\r") || !filepath.IsAbs(abs) {
		return fileID{}, false
	}
	id, ok := identifyFile(fi)
	if !ok || id.mtime%1e9 == 0 && id.ctime%1e9 == 0 {
		// Whole seconds: a coarse file system (FAT, HFS+, old ext3),
		// where two changes a second apart look the same.
		return fileID{}, false
	}
	if !localFS(id.dev, filepath.Dir(abs)) {
		return fileID{}, false
	}
	return id, true
}

// Save writes the cache back when it changed, keeping the entries used
// most recently when there are too many.
func (c *HashCache) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	c.evict()
	var b bytes.Buffer
	b.WriteString(hashCacheHeader)
	for path, e := range c.entries {
		fmt.Fprintf(&b, "%s %d %d %d %d %d %d %s\n", e.sum, e.size, e.dev, e.ino, e.mtime, e.ctime, e.used, path)
	}
	b.WriteString(cacheTrailer(b.Bytes()) + "\n")
	if err := writeFileAtomic(c.path, b.Bytes()); err != nil {
		return fmt.Errorf("saving the hash cache: %w", err)
	}
	c.dirty = false
	return nil
}

// evict drops the least recently used entries beyond hashCacheMax.
func (c *HashCache) evict() {
	over := len(c.entries) - hashCacheMax
	if over <= 0 {
		return
	}
	// Count entries per day, then drop whole old days and part of one.
	perDay := map[int32]int{}
	for _, e := range c.entries {
		perDay[e.used]++
	}
	days := make([]int32, 0, len(perDay))
	for d := range perDay {
		days = append(days, d)
	}
	slices.Sort(days)
	var cut int32
	partial := 0
	for _, d := range days {
		if over <= 0 {
			break
		}
		if perDay[d] <= over {
			over -= perDay[d]
			cut = d + 1
			continue
		}
		cut, partial = d, over
		over = 0
	}
	for p, e := range c.entries {
		switch {
		case e.used < cut:
			delete(c.entries, p)
		case e.used == cut && partial > 0:
			delete(c.entries, p)
			partial--
		}
	}
}

// writeFileAtomic writes data to path, private, through a temporary file
// in the same directory and a rename.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o600)
}
