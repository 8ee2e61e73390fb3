package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// journalFile is the driver's ledger in the work directory: what the end
// checks need, one JSON record a line, appended as it happens, so that a
// run whose every process was killed (the machine stopped) goes on from
// it with -resume and is judged as one run.
const journalFile = "journal.jsonl"

// rec is one journal record; T says which, the other fields are those of
// its kind. At is when it was written (wall clock, Unix nanoseconds).
type rec struct {
	T  string `json:"t"`
	At int64  `json:"at"`

	// options: the command line (absolute -bin and -work and the seed
	// last, which win).
	Args []string `json:"args,omitempty"`
	// site: what the site was made with.
	Site *siteRec `json:"site,omitempty"`
	// submit (killed: a client killed mid-transfer made it), submitted,
	// control, extend (Before: its chain's steps before), retrieved,
	// finished, purged.
	User   string            `json:"user,omitempty"`
	Group  string            `json:"group,omitempty"`
	Chain  string            `json:"chain,omitempty"`
	Killed bool              `json:"killed,omitempty"`
	Stay   string            `json:"stay,omitempty"`
	Steps  int               `json:"steps,omitempty"`
	Before int               `json:"before,omitempty"`
	Dir    string            `json:"dir,omitempty"`
	Code   int               `json:"code,omitempty"`
	Files  []string          `json:"files,omitempty"`
	Sums   map[string]string `json:"sums,omitempty"`
	Finals map[string]string `json:"finals,omitempty"`
	Chains int               `json:"chains,omitempty"`
	// fault, retry (Kind: what), kill (a kill of the notifications'
	// sender; Sender as senderKill.sender).
	Kind   string `json:"kind,omitempty"`
	Sender bool   `json:"sender,omitempty"`
	// hook: a webhook delivery received (Kind: its event's key).
	ID string `json:"id,omitempty"`
	// sample: the server's memory and descriptors (Seg: the driver's
	// life it was taken in).
	Seg   int   `json:"seg,omitempty"`
	RSS   int64 `json:"rss,omitempty"`
	FDs   int   `json:"fds,omitempty"`
	NFile int   `json:"nfile,omitempty"`
	// master, gahp: N the tag's or batch's number; Kind begin, ran
	// (the master said done; Out its output), retire (the GAHP's retire
	// sent), done.
	N   int    `json:"n,omitempty"`
	Out string `json:"out,omitempty"`
	// cpu: the processor time of this life of the driver so far, by
	// actor (seconds), and the client runs by actor (cpuRec).
	CPU  map[string]float64 `json:"cpu,omitempty"`
	Runs map[string]int     `json:"runs,omitempty"`
}

// siteRec is what a resumed run needs to find the site again.
type siteRec struct {
	Root, Mnt, RootFS string // RootFS: tmpfs, image or dir
	Image             string // the ext4 image of RootFS image
	Addr, HookAddr    string // the server's and the webhook receiver's
	Users             []userRec
	DBLink            string // MariaDB's directory: a short link under /tmp to its place in the work directory
	StateURL          string
	BoincURL          string
	BoincDBFile       string
	BaseFiles         map[string]int64 // the empty root's inventory (leftovers)
	BaseRows          map[string]int64
}

// userRec is a user as the journal keeps it.
type userRec struct{ Name, Token string }

// journal appends records to the journal file. A record is written to the
// file at once (a kill of the driver loses none); sync makes it durable
// too (a stop of the machine), one fsync for every record written while
// another waited (group commit).
type journal struct {
	mu  sync.Mutex
	f   *os.File
	err error // the first write error: the run is not resumable after it

	smu    sync.Mutex // one fsync at a time
	synced uint64     // records durable
	n      uint64     // records written
	syncs  int        // fsyncs done
	bytes  int64      // bytes written
	off    bool       // -journal=false: nothing written (to measure its cost)
}

func openJournal(path string, off bool) (*journal, error) {
	if off {
		return &journal{off: true}, nil
	}
	// It holds the users' tokens: private, also when an older run's
	// journal was not.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the journal: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("the journal: %w", err)
	}
	return &journal{f: f}, nil
}

// add writes r (At set now) and returns its number, for sync.
func (j *journal) add(r rec) uint64 {
	if j == nil || j.off {
		return 0
	}
	r.At = time.Now().UnixNano()
	b, err := json.Marshal(r)
	if err != nil {
		panic(err) // only our own plain types
	}
	b = append(b, '\n')
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err == nil {
		// One write(2) a record: a kill leaves at most the last line torn.
		if _, err := j.f.Write(b); err != nil {
			j.err = err
			fmt.Fprintf(os.Stderr, "rbsoak: writing the journal: %v (this run cannot be resumed)\n", err)
		}
	}
	j.n++
	j.bytes += int64(len(b))
	return j.n
}

// sync waits until record n (and every one before) is on disk.
func (j *journal) sync(n uint64) {
	if j == nil || j.off {
		return
	}
	j.smu.Lock()
	defer j.smu.Unlock()
	if j.synced >= n {
		return // an fsync that began after it was written covered it
	}
	j.mu.Lock()
	upto := j.n
	j.mu.Unlock()
	if err := j.f.Sync(); err != nil {
		j.mu.Lock()
		if j.err == nil {
			j.err = err
			fmt.Fprintf(os.Stderr, "rbsoak: syncing the journal: %v (this run cannot be resumed)\n", err)
		}
		j.mu.Unlock()
	}
	j.synced = upto
	j.syncs++
}

// figures: records and bytes this life of the driver wrote, and its fsyncs.
func (j *journal) figures() string {
	if j == nil || j.off {
		return "journal: off (-no-journal)"
	}
	j.smu.Lock()
	syncs := j.syncs
	j.smu.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	return fmt.Sprintf("journal (this life of the driver): %d records, %d bytes, %d fsyncs", j.n, j.bytes, syncs)
}

// addSync writes r and waits until it is on disk.
func (j *journal) addSync(r rec) { j.sync(j.add(r)) }

func (j *journal) close() {
	if j != nil && j.f != nil {
		j.f.Sync()
		j.f.Close()
	}
}

// readJournal reads every whole record of the journal. A last line
// without its newline is a record the kill cut short: it is dropped (the
// file is cut back to the last whole record, so that what the resumed run
// appends starts on a line of its own). A bad line elsewhere is an error.
func readJournal(path string) ([]rec, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("the journal: %w", err)
	}
	defer f.Close()
	var out []rec
	br := bufio.NewReaderSize(f, 1<<16)
	var whole int64
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(bytes.TrimSpace(b)) > 0 {
				if err := f.Truncate(whole); err != nil {
					return nil, fmt.Errorf("cutting the journal's torn last record: %w", err)
				}
			}
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the journal: %w", err)
		}
		whole += int64(len(b))
		var r rec
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("the journal %s, line %d: %w", path, line, err)
		}
		out = append(out, r)
	}
	if len(out) == 0 || out[0].T != "options" {
		return nil, fmt.Errorf("the journal %s does not start with the run's options", path)
	}
	return out, nil
}
