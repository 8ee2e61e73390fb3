package templates

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

const (
	filePrefix   = "rboinc_"
	wuSuffix     = "_wu"
	resultSuffix = "_result"
)

// Registry loads queues from a templates directory and notices new or
// changed files without a restart: a queue is re-parsed when the size or
// modification time of either file changes. Safe for concurrent use.
type Registry struct {
	dir   string
	mu    sync.Mutex
	cache map[string]entry
}

type entry struct {
	wu, result stamp
	q          *Queue
	err        error // a bad template is remembered too, until it changes
}

// stamp identifies one version of a file, as far as the cache is concerned.
type stamp struct {
	size  int64
	mtime int64 // nanoseconds: comparable, unlike time.Time with ==
}

func stampOf(fi fs.FileInfo) stamp { return stamp{fi.Size(), fi.ModTime().UnixNano()} }

// NewRegistry returns a registry of the queues in dir.
func NewRegistry(dir string) *Registry {
	return &Registry{dir: dir, cache: make(map[string]entry)}
}

// Get returns queue name. An invalid name or a missing template gives an
// error wrapping ErrUnknownQueue; a bad template gives its parse error.
func (r *Registry) Get(name string) (*Queue, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("%w %q: not a valid queue name", ErrUnknownQueue, name)
	}
	wuPath, resPath := r.paths(name)
	wuInfo, err1 := os.Stat(wuPath)
	resInfo, err2 := os.Stat(resPath)
	if err := errors.Join(err1, err2); err != nil {
		r.forget(name)
		// Name only the file, not the directory: clients may see this text.
		for _, m := range []struct {
			err  error
			path string
		}{{err1, wuPath}, {err2, resPath}} {
			if errors.Is(m.err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%w %q: %s does not exist", ErrUnknownQueue, name, filepath.Base(m.path))
			}
		}
		return nil, fmt.Errorf("queue %q: %w", name, err)
	}
	r.mu.Lock()
	e, ok := r.cache[name]
	r.mu.Unlock()
	if ok && e.wu == stampOf(wuInfo) && e.result == stampOf(resInfo) {
		return e.q, e.err
	}
	e, err := r.load(name, wuPath, resPath)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.cache[name] = e
	r.mu.Unlock()
	return e.q, e.err
}

// load reads and parses a pair; the returned error is about reading the
// files, a parse error is kept in the entry.
func (r *Registry) load(name, wuPath, resPath string) (entry, error) {
	wu, wuStamp, err := readTemplate(wuPath)
	if err != nil {
		return entry{}, r.readErr(name, err)
	}
	res, resStamp, err := readTemplate(resPath)
	if err != nil {
		return entry{}, r.readErr(name, err)
	}
	q, err := Parse(name, wu, res, wuPath, resPath)
	return entry{wu: wuStamp, result: resStamp, q: q, err: err}, nil
}

func (r *Registry) readErr(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) { // removed since the Stat
		r.forget(name)
		return fmt.Errorf("%w %q: its template was just removed", ErrUnknownQueue, name)
	}
	return fmt.Errorf("queue %q: %w", name, err)
}

// List returns all queues with a complete template pair, sorted by name;
// the errors of queues that could not be loaded are returned beside them.
func (r *Registry) List() ([]*Queue, []error) {
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, []error{fmt.Errorf("listing queues: %w", err)}
	}
	var names []string
	for _, de := range ents {
		n := de.Name()
		if !strings.HasPrefix(n, filePrefix) || !strings.HasSuffix(n, wuSuffix) {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(n, filePrefix), wuSuffix)
		if ValidName(name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var qs []*Queue
	var errs []error
	for _, name := range names {
		q, err := r.Get(name)
		switch {
		case errors.Is(err, ErrUnknownQueue): // result template missing: not a queue (yet)
		case err != nil:
			errs = append(errs, err)
		default:
			qs = append(qs, q)
		}
	}
	return qs, errs
}

func (r *Registry) paths(name string) (wu, result string) {
	return filepath.Join(r.dir, filePrefix+name+wuSuffix), filepath.Join(r.dir, filePrefix+name+resultSuffix)
}

func (r *Registry) forget(name string) {
	r.mu.Lock()
	delete(r.cache, name)
	r.mu.Unlock()
}

// readTemplate reads a template file of at most MaxTemplateSize bytes and
// the stamp of exactly the version read.
func readTemplate(path string) ([]byte, stamp, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, stamp{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, stamp{}, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxTemplateSize+1))
	if err != nil {
		return nil, stamp{}, fmt.Errorf("reading %s: %w", path, err)
	}
	return data, stampOf(fi), nil
}
