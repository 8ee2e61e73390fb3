package legacy

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/templates"
	"github.com/rboinc/rboinc/workflow/wire"
)

// retrieve is boinc_retrieve_server.pl: discovery for the submit client
// and every action of the retrieve client.
func (h *Handler) retrieve(w http.ResponseWriter, r *http.Request) {
	f, err := form(w, r)
	if err != nil {
		fail(w, retrieveRoot, "cannot read the request: "+err.Error())
		return
	}
	action := f.Get("action")
	if action == "" {
		alive(w)
		return
	}
	u, ok := h.user(w, r, retrieveRoot)
	if !ok {
		return
	}
	var ans hash
	switch action {
	case "get_dav_url":
		ans = hash{"DavUrl": davURL(r, u)}
	case "get_wu_template":
		ans, err = h.template(f.Get("application"))
	case "retrieve":
		ans, err = h.stage(r, u, f.Get("group"), f.Get("name"))
	case "remove":
		h.remove(w, r, u, f.Get("dir"))
		return
	case "stop":
		ans, err = h.stop(r, u, f.Get("group"), f.Get("name"))
	case "status":
		ans, err = h.status(r, u, f.Get("group"))
	case "gridstatus":
		ans, err = h.gridStatus(r, u)
	case "purge":
		ans, err = h.purge(r, u, f.Get("group"), f.Get("name"))
	default:
		fail(w, retrieveRoot, "Unsupported action "+action)
		return
	}
	var fl *failure
	switch {
	case errors.As(err, &fl):
		fail(w, retrieveRoot, fl.reason)
	case err != nil:
		fail(w, retrieveRoot, "("+action+" error) "+h.engineReason(r, err))
	default:
		ans["ServerRevision"] = ServerRevision
		reply(w, retrieveRoot, ans)
	}
}

// actionErr is a failure the original reported from its exception
// handler, hence with the "(<action> error) " prefix.
func actionErr(action, format string, a ...any) error {
	return failf("("+action+" error) "+format, a...)
}

// checkRef validates a group and an optional name as the original did.
func checkRef(action, group, name string) error {
	if !identRE.MatchString(group) {
		return actionErr(action, "Invalid group supplied")
	}
	if name == "" {
		return nil
	}
	if reservedNames[name] {
		return actionErr(action, "%s is a reserved name", name)
	}
	if !identRE.MatchString(name) {
		return actionErr(action, "Invalid name supplied")
	}
	return nil
}

// notFound words the engine's "no such group or chain".
func notFound(action, group, name string, err error) error {
	if engine.KindOf(err) != engine.KindNotFound {
		return err
	}
	if name != "" {
		return actionErr(action, "job %s in group %s does not exist", name, group)
	}
	return actionErr(action, "Group does not exist")
}

// template answers get_wu_template: both templates of the queue, as the
// original re-serialised them (the clients read the WU template's
// annotations from it).
func (h *Handler) template(queue string) (hash, error) {
	const action = "get_wu_template"
	if !identRE.MatchString(queue) {
		return nil, actionErr(action, "Invalid character in application request")
	}
	q, err := h.E.Queues.Get(queue)
	if errors.Is(err, templates.ErrUnknownQueue) {
		return nil, actionErr(action, "Error opening template: No such file or directory")
	}
	if err != nil {
		// The parse error names the server's paths: for its log only.
		h.Log.Error("queue misconfigured", "queue", queue, "err", err)
		return nil, actionErr(action, "queue %s is misconfigured on the server: its administrator must fix it (`rboinc-server doctor` names the problem)", queue)
	}
	ans := hash{}
	for key, path := range map[string]string{"WuTemplate": q.WUFile, "ResultTemplate": q.ResultFile} {
		v, err := readTemplate(path)
		if err != nil {
			return nil, actionErr(action, "%v", err)
		}
		if key == "WuTemplate" {
			padFileRefs(v)
		}
		ans[key] = v
	}
	return ans, nil
}

// readTemplate parses a template as the original did: wrapped in a root
// element, with file_ref always a list.
func readTemplate(path string) (any, error) {
	// Not readSmall: an administrator may well link a template in.
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("Error opening template %s: %v", filepath.Base(path), err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, templates.MaxTemplateSize+1))
	if err != nil || len(data) > templates.MaxTemplateSize {
		return nil, fmt.Errorf("Error reading template %s: too large or unreadable", filepath.Base(path))
	}
	data = unwrapTemplate(data)
	v, err := xmlIn(append(append([]byte("<rboinc_template>"), data...), "</rboinc_template>"...), "file_ref")
	if err != nil {
		return nil, fmt.Errorf("template %s: %v", filepath.Base(path), err)
	}
	return v, nil
}

// retrRE is a retrieval collection's name.
var retrRE = regexp.MustCompile(`^retr[0-9]{6}$`)

// stage answers retrieve: every result of the group (or chain) not yet
// acknowledged is hard-linked into a fresh collection retr<6 digits> of
// the caller's WebDAV area, and listed with the alias table.
func (h *Handler) stage(r *http.Request, u store.User, group, name string) (hash, error) {
	const action = "retrieve"
	if err := checkRef(action, group, name); err != nil {
		return nil, err
	}
	res, err := h.E.Results(r.Context(), u, group, name)
	if err != nil {
		return nil, notFound(action, group, name, err)
	}
	if len(res.Files) == 0 {
		return nil, failf("No files ready for retrieval")
	}
	dir, id, err := newRetrievalDir(h.E.DAVRoot(u))
	if err != nil {
		return nil, err
	}
	sort.Slice(res.Files, func(i, j int) bool { return res.Files[i].Name < res.Files[j].Name })
	var names list
	aliases := map[int][]string{}
	for _, rf := range res.Files {
		if al, seen := aliases[rf.Index]; seen && !slices.Equal(al, rf.Aliases) {
			// The answer has one alias table for all its files, by output
			// index: a file of another queue of the group whose output at
			// this index has other aliases would be saved under the wrong
			// extension (the original's flaw). It waits for the next
			// retrieval, staged with its own queue's table.
			continue
		}
		ok, err := h.link(r, u, rf, dir)
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		if !ok {
			continue // acknowledged meanwhile by another retrieval
		}
		names = append(names, rf.Name)
		if _, seen := aliases[rf.Index]; !seen {
			aliases[rf.Index] = rf.Aliases
		}
	}
	if len(names) == 0 {
		os.RemoveAll(dir)
		return nil, failf("No files ready for retrieval")
	}
	idx := make([]int, 0, len(aliases))
	for k := range aliases {
		idx = append(idx, k)
	}
	sort.Ints(idx)
	var table list
	for _, k := range idx {
		al := list{}
		for _, a := range aliases[k] {
			al = append(al, a)
		}
		table = append(table, hash{"Extension": "_" + strconv.Itoa(k), "Alias": al})
	}
	return hash{
		"AliasTable": hash{"File": table},
		"FileList":   hash{"File": names},
		"Success":    hash{"Directory": id, "FinalOutputs": "-1", "MetadataFileCount": "0"},
	}, nil
}

// link puts one pending result into the retrieval collection: a hard
// link (mod_dav and our WebDAV server serve it like any file; a symbolic
// link would be refused), a copy across file systems. ok is false when the
// result is no longer pending.
func (h *Handler) link(r *http.Request, u store.User, rf wire.ResultFile, dir string) (bool, error) {
	f, _, err := h.E.OpenResult(r.Context(), u, rf.Group, rf.Name)
	if engine.KindOf(err) == engine.KindNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	src := f.Name()
	f.Close()
	dst := filepath.Join(dir, rf.Name)
	if err := os.Link(src, dst); err != nil {
		if !errors.Is(err, syscall.EXDEV) && !errors.Is(err, syscall.EPERM) {
			if errors.Is(err, os.ErrNotExist) {
				return false, nil
			}
			return false, err
		}
		if _, _, err := pool.CopyAtomic(src, dst, 0o444); err != nil {
			return false, err
		}
	}
	return true, nil
}

// newRetrievalDir creates retr<6 digits> in root, never reusing one.
func newRetrievalDir(root string) (string, string, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", "", err
	}
	for range 100 {
		n, err := rand.Int(rand.Reader, big.NewInt(999999))
		if err != nil {
			return "", "", err
		}
		id := fmt.Sprintf("retr%06d", n.Int64())
		dir := filepath.Join(root, id)
		err = os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, id, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", "", err
		}
	}
	return "", "", errors.New("Can't make retrieve dir: all names tried are taken")
}

// remove answers remove: the results staged in retrieval collection dir
// are forgotten on the server, exactly those, and their links taken out
// of the collection (the client deletes the collection itself). As in the
// original, a newline goes out before every 20th file: it kept the
// connection alive during long removals.
func (h *Handler) remove(w http.ResponseWriter, r *http.Request, u store.User, dir string) {
	const action = "remove"
	if !retrRE.MatchString(dir) {
		fail(w, retrieveRoot, "("+action+" error) Invalid directory supplied")
		return
	}
	path := filepath.Join(h.E.DAVRoot(u), dir)
	ents, err := os.ReadDir(path)
	if err != nil {
		fail(w, retrieveRoot, "("+action+" error) Retrieval directory "+dir+" does not exist")
		return
	}
	byGroup := map[string][]string{}
	var groups []string
	n := 0
	for _, de := range ents {
		wu, _, err := naming.ParseResultFile(de.Name())
		if err != nil || !de.Type().IsRegular() {
			continue
		}
		p, err := naming.ParseWU(wu)
		if err != nil || !strings.EqualFold(p.User, u.Name) {
			continue
		}
		if _, ok := byGroup[p.Group]; !ok {
			groups = append(groups, p.Group)
		}
		byGroup[p.Group] = append(byGroup[p.Group], de.Name())
		n++
	}
	w.Header().Set("Content-Type", "text/plain")
	for i := 0; i < n; i += 20 {
		w.Write([]byte("\n"))
	}
	if fl, ok := w.(http.Flusher); ok && n > 0 {
		fl.Flush()
	}
	removed := 0
	for _, g := range groups {
		resp, err := h.E.Ack(r.Context(), u, wire.AckRequest{Group: g, Files: byGroup[g]})
		if err != nil {
			w.Write(xmlOut(retrieveRoot, hash{"Failure": hash{"Reason": "(" + action + " error) " + h.engineReason(r, err)}}))
			return
		}
		removed += resp.Count
		for _, name := range byGroup[g] {
			os.Remove(filepath.Join(path, name))
		}
	}
	// Nothing is kept back: the original kept the latest step of a running
	// chain for its own chaining, which rboinc does not need.
	w.Write(xmlOut(retrieveRoot, hash{"ServerRevision": ServerRevision,
		"Success": hash{"NumberRemoved": strconv.Itoa(removed), "NumberKept": "0"}}))
}

// stop answers stop: no further steps for the group's running chains.
func (h *Handler) stop(r *http.Request, u store.User, group, name string) (hash, error) {
	const action = "stop"
	if err := checkRef(action, group, name); err != nil {
		return nil, err
	}
	st, err := h.E.Status(r.Context(), u, group, name)
	if err != nil {
		return nil, notFound(action, group, name, err)
	}
	running, stopped := 0, 0
	for _, c := range st.Chains {
		switch c.State {
		// A queued chain runs too: its next step waits for the creator
		// (the engine's Stop stops it).
		case wire.StateRunning, wire.StateQueued:
			running++
		case wire.StateStopped:
			stopped++
		}
	}
	if running == 0 {
		if stopped > 0 {
			return nil, actionErr(action, "Already stopped")
		}
		return nil, actionErr(action, "No job of the group is running")
	}
	if _, err := h.E.Stop(r.Context(), u, wire.ChainRef{Group: group, Name: name}); err != nil {
		return nil, notFound(action, group, name, err)
	}
	return hash{"Success": hash{"Message": "Group successfully marked as stopped, can be purged after assimilation."}}, nil
}

// status answers status: the number of completed steps of each chain of
// the group, as attributes Bin_<name> (a name may start with a digit,
// which an XML attribute name may not).
func (h *Handler) status(r *http.Request, u store.User, group string) (hash, error) {
	const action = "status"
	if err := checkRef(action, group, ""); err != nil {
		return nil, err
	}
	st, err := h.E.Status(r.Context(), u, group, "")
	if err != nil {
		return nil, notFound(action, group, "", err)
	}
	steps := hash{}
	for _, c := range st.Chains {
		steps["Bin_"+c.Name] = strconv.Itoa(c.StepsDone)
	}
	return hash{"Success": hash{"Message": "Returning count of max-steps computed", "StepList": steps}}, nil
}

// gridStatus answers gridstatus. The original printed, from BOINC's
// database, per group of the user: its results of the last 30 days by
// state; rboinc prints its chains by state and, when it can read BOINC's
// database, those results.
func (h *Handler) gridStatus(r *http.Request, u store.User) (hash, error) {
	gs, err := h.E.GridStatus(r.Context(), u, "")
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if gs.BoincError != "" {
		b.WriteString("BOINC database statistics are not available (" + gs.BoincError + "); chains per group:\n")
	}
	b.WriteString("GROUP\tCHAINS\tRUNNING\tDONE\tFAILED\tSTOPPED\tUNSENT\tIN_PROGRESS\tSUCCESS\tERRORS\tTURNAROUND_H\n")
	for _, g := range gs.Groups {
		fmt.Fprintf(&b, "%s\t%d\t%d\t%d\t%d\t%d", g.Group, g.Chains, g.Running, g.Done, g.Failed, g.Stopped)
		if c := g.Boinc; c != nil {
			fmt.Fprintf(&b, "\t%d\t%d\t%d\t%d\t%.1f\n", c.Unsent, c.InProgress, c.Success, c.Error, c.TurnaroundAvg/3600)
		} else {
			b.WriteString("\t-\t-\t-\t-\t-\n")
		}
	}
	return hash{"Success": hash{"Message": "Returning grid status", contentKey: b.String()}}, nil
}

// purge answers purge: the group (or one chain) leaves the server.
func (h *Handler) purge(r *http.Request, u store.User, group, name string) (hash, error) {
	const action = "purge"
	if err := checkRef(action, group, name); err != nil {
		return nil, err
	}
	resp, err := h.E.Purge(r.Context(), u, wire.ChainRef{Group: group, Name: name})
	if err != nil {
		return nil, notFound(action, group, name, err)
	}
	return hash{"Success": hash{"Message": fmt.Sprintf("Freed %d job(s) and their results on server", resp.Count)}}, nil
}
