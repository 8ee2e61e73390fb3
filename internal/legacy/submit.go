package legacy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// uploadRE is the original client's upload collection name.
var uploadRE = regexp.MustCompile(`^up[0-9]{6}$`)

// submit is boinc_submit_server.pl: random_id names an upload collection
// of the caller's holding description_file.xml and one file per given
// parameter; the chain it describes is created.
func (h *Handler) submit(w http.ResponseWriter, r *http.Request) {
	f, err := form(w, r)
	if err != nil {
		fail(w, submitRoot, "cannot read the request: "+err.Error())
		return
	}
	id := f.Get("random_id")
	if id == "" {
		alive(w)
		return
	}
	u, ok := h.user(w, r, submitRoot)
	if !ok {
		return
	}
	resp, notes, err := h.submitUpload(r.Context(), u, id)
	var fl *failure
	switch {
	case errors.As(err, &fl):
		fail(w, submitRoot, fl.reason)
		return
	case engine.KindOf(err) == engine.KindNameTaken:
		fail(w, submitRoot, "Group/name combination already exists")
		return
	case err != nil:
		fail(w, submitRoot, h.engineReason(r, err))
		return
	}
	var out strings.Builder
	for _, c := range resp.Chains {
		if resp.DryRun {
			fmt.Fprintf(&out, "Dry run requested, nothing submitted for %s (its first work unit would be %s)\n", c.Name, c.FirstWU)
			continue
		}
		fmt.Fprintf(&out, "Processing input 'start %s' to wu '%s'\n\nSubmitted %s\n", c.Name, c.FirstWU, c.FirstWU)
	}
	var errs strings.Builder
	for _, n := range notes {
		errs.WriteString(n + "\n")
	}
	reply(w, submitRoot, hash{
		"ClientIP":       clientIP(r),
		"ServerRevision": ServerRevision,
		"Success":        "1",
		"InputKeys":      hash{"random_id": id},
		"Return":         hash{"ExitCode": "0", "StdOut": out.String(), "StdErr": errs.String()},
	})
}

// submitUpload reads the upload collection, takes its files into the pool
// and submits the chain.
func (h *Handler) submitUpload(ctx context.Context, u store.User, id string) (wire.SubmitResponse, []string, error) {
	if !uploadRE.MatchString(id) {
		return wire.SubmitResponse{}, nil, failf("Invalid random_id supplied: %q is not up followed by 6 digits", id)
	}
	dir := filepath.Join(h.E.DAVRoot(u), id)
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return wire.SubmitResponse{}, nil, failf("Upload directory %s does not exist in your WebDAV area", id)
	}
	data, err := readSmall(filepath.Join(dir, DescriptionFile), maxDescription)
	if err != nil {
		return wire.SubmitResponse{}, nil, failf("Cannot read %s of upload %s: %v", DescriptionFile, id, err)
	}
	d, err := parseDescription(data)
	if err != nil {
		return wire.SubmitResponse{}, nil, &failure{err.Error()}
	}
	req, notes, err := d.request()
	if err != nil {
		return wire.SubmitResponse{}, nil, err
	}
	q, err := h.E.Queue(req.Queue)
	if err != nil {
		return wire.SubmitResponse{}, nil, err
	}
	files := map[string]wire.FileRef{}
	for _, p := range q.Parameters {
		if p.Name == "" || strings.ContainsAny(p.Name, `/\`) || p.Name == "." || p.Name == ".." || p.Name == DescriptionFile {
			continue
		}
		path := filepath.Join(dir, p.Name)
		fi, err := os.Lstat(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // omitted: the engine applies the default or refuses
		}
		if err != nil {
			return wire.SubmitResponse{}, nil, err
		}
		if !fi.Mode().IsRegular() {
			return wire.SubmitResponse{}, nil, failf("Uploaded %s is not a regular file", p.Name)
		}
		ref, err := h.E.TakeFile(ctx, u, path)
		if err != nil {
			return wire.SubmitResponse{}, nil, err
		}
		files[p.Name] = ref
	}
	req.Chains[0].Files = files
	resp, err := h.E.SubmitOriginal(ctx, u, req)
	return resp, notes, err
}

// readSmall reads a regular file of at most max bytes, refusing a
// symbolic link.
func readSmall(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	return data, nil
}
