package server

import (
	"archive/tar"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// A bulk download (wire.PathFilesBulk) sends many result files in one
// answer, a tar stream written as the files are read: one request, one
// look-up of the token and one query per few hundred files, where a
// download per file took each of them per file. The answer is bounded in
// files (wire.MaxBulkFiles), bytes (wire.MaxBulkBytes) and time
// (bulkTime); what is left out the client asks for again, or per file.

// bulkBody bounds the request: wire.MaxBulkFiles names of a few dozen
// bytes each, quoted.
const bulkBody = 256 << 10

// bulkTime is how long an answer goes on starting entries; the one being
// sent is finished. A reader too slow for even that is cut off by the
// transfer guard (guardTransfers), as any download.
const bulkTime = time.Minute

// maxBulkStreams bounds the bulk answers streaming at once, from all
// users together: each holds a connection, an open file and a copy
// buffer, about 120 KiB of the server's memory with readers that stall
// (TestBulkStalledReadersStandalone), and max_user_requests alone bounds
// them per user only. Beyond it: 503 server_busy with Retry-After, which
// clients wait for and send again.
const maxBulkStreams = 64

// maxBulkStreamsPerUser is one user's share of maxBulkStreams: a user
// whose clients stall (or read just above min_transfer_rate, which is
// never cut off) would otherwise hold every slot and deny every other
// account's retrieval. rboinc-retrieve streams two at once; beyond the
// share: 429 too_many_requests with Retry-After, which clients wait for
// and send again.
const maxBulkStreamsPerUser = maxBulkStreams / 8

// bulkSlots counts the bulk answers streaming, in all and per user.
type bulkSlots struct {
	mu     sync.Mutex
	total  int
	byUser map[string]int
}

// bulkBufs are the copy buffers of the entries.
var bulkBufs = sync.Pool{New: func() any {
	b := make([]byte, 64<<10)
	return &b
}}

// decodeBulk reads a wire.BulkRequest of at most wire.MaxBulkFiles names.
func decodeBulk(body io.Reader, req *wire.BulkRequest) error {
	return decodeListObject(body, map[string]listField{"group": {str: &req.Group}, "name": {str: &req.Name},
		"files": {list: &req.Files, max: wire.MaxBulkFiles}, "consumer": {str: &req.Consumer}})
}

func (s *Server) filesBulk(w http.ResponseWriter, r *http.Request, u store.User) {
	body, ok := s.openBody(w, r, bulkBody)
	if !ok {
		return
	}
	var req wire.BulkRequest
	err := decodeBulk(body, &req)
	// What stays of the body is the list of names: the budget covers the
	// reading, not the (bounded) streaming after it.
	body.release()
	if err != nil {
		s.bodyFailed(w, r, bulkBody, "malformed JSON request", err)
		return
	}
	switch s.bulkStreams.take(u.Name) {
	case bulkUserFull:
		w.Header().Set("Retry-After", strconv.Itoa(busyRetry))
		writeError(w, http.StatusTooManyRequests, wire.CodeTooManyRequests, fmt.Sprintf("user %s has %d bulk downloads streaming already, the most the server streams at once for one user: wait for them, or send it again in a few seconds", u.Name, maxBulkStreamsPerUser))
		return
	case bulkServerFull:
		w.Header().Set("Retry-After", strconv.Itoa(busyRetry))
		writeError(w, http.StatusServiceUnavailable, wire.CodeServerBusy, fmt.Sprintf("the server streams as many bulk downloads as it takes at once (%d, from all users): send it again in a few seconds", maxBulkStreams))
		return
	}
	defer s.bulkStreams.done(u.Name)
	picked, err := s.E.BulkResults(r.Context(), u, req, wire.MaxBulkFiles)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", wire.BulkContentType)
	w.Header().Set("Cache-Control", "no-store")
	s.writeBulk(w, r, picked, time.Now().Add(bulkTime))
}

// What bulkSlots.take answers.
const (
	bulkTaken = iota
	bulkUserFull
	bulkServerFull
)

// take takes one of the maxBulkStreams slots for user, within the user's
// maxBulkStreamsPerUser.
func (b *bulkSlots) take(user string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byUser[user] >= maxBulkStreamsPerUser {
		return bulkUserFull
	}
	if b.total >= maxBulkStreams {
		return bulkServerFull
	}
	if b.byUser == nil {
		b.byUser = map[string]int{}
	}
	b.byUser[user]++
	b.total++
	return bulkTaken
}

// done gives user's slot back.
func (b *bulkSlots) done(user string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total--
	if b.byUser[user]--; b.byUser[user] <= 0 {
		delete(b.byUser, user)
	}
}

// writeBulk streams the picked files as a tar archive, within the bounds.
// A file that cannot be read whole is left out, or, when that shows only
// once its entry has begun, completed with zeros: its MD5 then tells the
// client to fetch it alone, and the entries after it stay readable.
func (s *Server) writeBulk(w io.Writer, r *http.Request, picked []store.PendingResult, until time.Time) {
	bufp := bulkBufs.Get().(*[]byte)
	defer bulkBufs.Put(bufp)
	buf := *bufp
	tw := tar.NewWriter(w)
	var sent int64
	for k, p := range picked {
		if k == wire.MaxBulkFiles || time.Now().After(until) || r.Context().Err() != nil {
			break
		}
		if p.Size > wire.MaxBulkBytes-sent {
			continue
		}
		f, err := s.E.OpenPendingResult(p)
		if err != nil {
			s.Log.Warn("bulk download: left out a result", "file", p.File, "err", err)
			continue
		}
		fi, err := f.Stat()
		if err != nil || fi.Size() != p.Size {
			f.Close()
			s.Log.Warn("bulk download: left out a result whose size is not the recorded one", "file", p.File, "err", err)
			continue
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: p.File, Size: p.Size, Mode: 0o644, ModTime: fi.ModTime().Truncate(time.Second),
			Format: tar.FormatPAX, PAXRecords: map[string]string{wire.BulkMD5Record: p.MD5}}
		if err := tw.WriteHeader(hdr); err != nil {
			f.Close()
			return // the client went away
		}
		n, rerr := io.CopyBuffer(tw, io.LimitReader(f, p.Size), buf)
		f.Close()
		if n < p.Size {
			// A failed write is sticky in tw: then zeros fails too.
			if err := zeros(tw, p.Size-n, buf); err != nil {
				return // the client went away
			}
			s.Log.Warn("bulk download: a result could not be read whole", "file", p.File, "read", n, "size", p.Size, "err", rerr)
		}
		sent += p.Size
	}
	tw.Close()
}

// zeros writes n zero bytes.
func zeros(w io.Writer, n int64, buf []byte) error {
	clear(buf)
	for n > 0 {
		k := int(min(n, int64(len(buf))))
		if _, err := w.Write(buf[:k]); err != nil {
			return err
		}
		n -= int64(k)
	}
	return nil
}
