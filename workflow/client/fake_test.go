package client

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// fakeServer implements the few wire endpoints the client tests need.
type fakeServer struct {
	t     *testing.T
	token string

	mu       sync.Mutex
	queues   map[string]*wire.Queue
	pool     map[string][]byte    // md5 -> content
	puts     map[string]int       // md5 -> PUT count
	inlined  map[string]int       // md5 -> count of inline sends
	noInline bool                 // behave like a server older than PathSubmitInline
	noList   bool                 // refuse missing contents without listing them (wire.Error.Missing), as older servers
	submits  []wire.SubmitRequest // those accepted
	refused  int                  // submissions refused for missing contents
	asked    int                  // PathMissing requests
	results  []wire.ResultFile
	files    map[string][]byte // path -> body served
	acked    []string
	requests int
}

func newFake(t *testing.T) (*fakeServer, *Client) {
	f := &fakeServer{t: t, token: "tok", queues: map[string]*wire.Queue{},
		pool: map[string][]byte{}, puts: map[string]int{}, inlined: map[string]int{}, files: map[string][]byte{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := New(srv.URL+"/rboinc_cgi/", "tok")
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

func writeErr(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(wire.Error{Error: msg, Code: code})
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	authorized := r.Header.Get("Authorization") == "Bearer "+f.token
	if strings.HasPrefix(r.URL.Path, wire.DAVPrefix) {
		// WebDAV takes HTTP Basic with the path's owner (as mod_dav does).
		u, p, ok := r.BasicAuth()
		authorized = ok && p == f.token && strings.HasPrefix(r.URL.Path, wire.DAVPrefix+u+"/")
	}
	if !authorized {
		writeErr(w, http.StatusUnauthorized, wire.CodeUnauthorized, "unknown token")
		return
	}
	reply := func(v any) { _ = json.NewEncoder(w).Encode(v) }
	api, isAPI := strings.CutPrefix(r.URL.Path, "/rboinc_cgi")
	switch {
	case strings.HasPrefix(r.URL.Path, wire.DAVPrefix) && r.Method == http.MethodPut:
		b, _ := io.ReadAll(r.Body)
		sum := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
		if md5hex(b) != sum {
			writeErr(w, http.StatusBadRequest, wire.CodeBadRequest, "content does not match its name")
			return
		}
		f.pool[sum] = b
		f.puts[sum]++
		w.WriteHeader(http.StatusCreated)
	case !isAPI:
		http.NotFound(w, r)
	case api == wire.PathQueues:
		var list []wire.QueueSummary
		for _, q := range f.queues {
			list = append(list, wire.QueueSummary{Name: q.Name})
		}
		reply(list)
	case strings.HasPrefix(api, wire.PathQueues+"/"):
		q, ok := f.queues[strings.TrimPrefix(api, wire.PathQueues+"/")]
		if !ok {
			writeErr(w, http.StatusNotFound, wire.CodeUnknownQueue, "no such queue")
			return
		}
		reply(q)
	case api == wire.PathMissing:
		f.asked++
		var req wire.MissingRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		resp := wire.MissingResponse{Missing: []string{}}
		for _, m := range req.MD5s {
			if _, ok := f.pool[m]; !ok {
				resp.Missing = append(resp.Missing, m)
			}
		}
		reply(resp)
	case api == wire.PathUploads:
		reply(wire.UploadResponse{ID: "up1", DAVPath: "/DAV/u/up1/"})
	case api == wire.PathSubmitInline && f.noInline:
		http.NotFound(w, r) // what Go's mux of an older server answers
	case api == wire.PathSubmit, api == wire.PathSubmitInline:
		var req wire.SubmitRequest
		dec := json.NewDecoder(r.Body)
		_ = dec.Decode(&req)
		if api == wire.PathSubmitInline {
			rest := io.MultiReader(dec.Buffered(), r.Body)
			var nl [1]byte
			if _, err := io.ReadFull(rest, nl[:]); err != nil || nl[0] != '\n' {
				writeErr(w, http.StatusBadRequest, wire.CodeBadRequest, "no newline after the JSON")
				return
			}
			for _, ref := range req.Inline {
				b := make([]byte, ref.Size)
				if _, err := io.ReadFull(rest, b); err != nil || md5hex(b) != ref.MD5 {
					writeErr(w, http.StatusBadRequest, wire.CodeBadRequest, "inline content "+ref.MD5+" damaged")
					return
				}
				f.pool[ref.MD5] = b
				f.inlined[ref.MD5]++
			}
			if n, _ := rest.Read(make([]byte, 1)); n > 0 {
				writeErr(w, http.StatusBadRequest, wire.CodeBadRequest, "data after the inline contents")
				return
			}
		} else if len(req.Inline) > 0 {
			writeErr(w, http.StatusBadRequest, wire.CodeBadRequest, "inline contents on the plain submit path")
			return
		}
		var missing []string
		for _, ch := range req.Chains {
			for _, ref := range ch.Files {
				if _, ok := f.pool[ref.MD5]; !ok && !slices.Contains(missing, ref.MD5) {
					missing = append(missing, ref.MD5)
				}
			}
		}
		if len(missing) > 0 {
			f.refused++
			we := wire.Error{Error: "content " + missing[0] + " missing", Code: wire.CodeMissingContent}
			if !f.noList {
				we.Missing = missing
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			_ = json.NewEncoder(w).Encode(we)
			return
		}
		f.submits = append(f.submits, req)
		var resp wire.SubmitResponse
		resp.DryRun = req.Options.DryRun
		for _, ch := range req.Chains {
			resp.Chains = append(resp.Chains, wire.ChainCreated{Name: ch.Name, FirstWU: ch.Name + "-U_" + req.Group + "-0-1-RND0001"})
		}
		reply(resp)
	case api == wire.PathResults:
		reply(wire.ResultsResponse{Files: f.results})
	case strings.HasPrefix(api, wire.PathFiles+"/"):
		b, ok := f.files[api]
		if !ok {
			writeErr(w, http.StatusNotFound, wire.CodeNotFound, "no such file")
			return
		}
		_, _ = w.Write(b)
	case api == wire.PathAck:
		var req wire.AckRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		f.acked = append(f.acked, req.Files...)
		reply(wire.CountResponse{Count: len(req.Files)})
	default:
		writeErr(w, http.StatusNotFound, wire.CodeNotFound, "no route "+api)
	}
}

// addResult publishes a result file with the given content.
func (f *fakeServer) addResult(group, chain, name string, body []byte, aliases ...string) wire.ResultFile {
	f.mu.Lock()
	defer f.mu.Unlock()
	rf := wire.ResultFile{Group: group, Chain: chain, Name: name, MD5: md5hex(body), Size: int64(len(body)),
		Aliases: aliases, Path: wire.PathFiles + "/" + group + "/" + name}
	f.results = append(f.results, rf)
	f.files[rf.Path] = body
	return rf
}
