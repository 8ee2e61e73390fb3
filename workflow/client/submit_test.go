package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

var mdQueue = &wire.Queue{Name: "md", Parameters: []wire.Parameter{
	{Name: "coor_file", Description: "Coordinates"},
	{Name: "conf_file", Description: "Configuration", Optional: true},
}}

func writeFiles(t *testing.T, contents map[string]string) string {
	dir := t.TempDir()
	for name, c := range contents {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestBuildChains(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.coor": "A", "b.coor": "B", "c.conf": "C"})
	shared := map[string]string{"coor_file": filepath.Join(dir, "a.coor"), "conf_file": filepath.Join(dir, "c.conf")}
	jobs := []Job{{Name: "c1"}, {Name: "c2", Line: 2, Files: map[string]string{"coor_file": filepath.Join(dir, "b.coor")}}}
	chains, err := BuildChains(mdQueue, shared, jobs)
	if err != nil {
		t.Fatal(err)
	}
	if chains[0].Files["coor_file"] != shared["coor_file"] || chains[1].Files["coor_file"] != filepath.Join(dir, "b.coor") ||
		chains[1].Files["conf_file"] != shared["conf_file"] {
		t.Fatalf("merge wrong: %+v", chains)
	}

	for _, tc := range []struct {
		shared map[string]string
		jobs   []Job
		want   string
	}{
		{nil, []Job{{Name: "c1"}}, "missing mandatory parameter -coor_file (Coordinates)"},
		{map[string]string{"coor_file": filepath.Join(dir, "nope")}, []Job{{Name: "c1"}}, "cannot read -coor_file " + filepath.Join(dir, "nope") + ": no such file"},
		{map[string]string{"coor_file": dir}, []Job{{Name: "c1"}}, "not a regular file"},
		{shared, []Job{{Name: "c1", Line: 3, Files: map[string]string{"num_steps": "x"}}}, "line 3 of the jobs file: -num_steps is not a parameter of queue md"},
		{shared, []Job{{Name: "c-1"}}, "not valid"},
	} {
		_, err := BuildChains(mdQueue, tc.shared, tc.jobs)
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("BuildChains(%v, %v) = %v, want usage error with %q", tc.shared, tc.jobs, err, tc.want)
		}
	}
}

func TestSubmitChainsUploadsOnlyMissingOnce(t *testing.T) {
	f, c := newFake(t)
	dir := writeFiles(t, map[string]string{"a.coor": "A", "a2.coor": "A", "b.coor": "B", "c.conf": "C"})
	f.pool[md5hex([]byte("C"))] = []byte("C") // already on the server
	chains := []Chain{
		{Name: "c1", Files: map[string]string{"coor_file": filepath.Join(dir, "a.coor"), "conf_file": filepath.Join(dir, "c.conf")}},
		{Name: "c2", Files: map[string]string{"coor_file": filepath.Join(dir, "a2.coor"), "conf_file": filepath.Join(dir, "c.conf")}},
		{Name: "c3", Files: map[string]string{"coor_file": filepath.Join(dir, "b.coor")}},
	}
	var started int
	var progress atomic.Int64
	rep, err := c.SubmitChains(context.Background(), SubmitInput{
		Queue: "md", Group: "g", Chains: chains, Options: wire.Options{NumSteps: 3},
		OnUpload: func(files int, bytes int64) func(int64) {
			started++
			if files != 2 || bytes != 2 {
				t.Errorf("OnUpload(%d, %d), want 2 files, 2 bytes", files, bytes)
			}
			return func(n int64) { progress.Add(n) }
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.UploadedFiles != 2 || rep.UploadedBytes != 2 || rep.ReusedFiles != 1 || len(rep.Chains) != 3 || rep.DryRun {
		t.Fatalf("report %+v", rep)
	}
	if started != 1 || progress.Load() != 2 {
		t.Errorf("progress: started %d times, %d bytes", started, progress.Load())
	}
	// Small contents travel inline, in the submission's own request.
	if len(f.puts) != 0 || len(f.inlined) != 2 {
		t.Errorf("%d contents PUT, %d inline; want 0 and 2", len(f.puts), len(f.inlined))
	}
	for sum, n := range f.inlined {
		if n != 1 {
			t.Errorf("content %s sent %d times", sum, n)
		}
	}
	if len(f.submits) != 1 {
		t.Fatalf("%d submit requests, want 1", len(f.submits))
	}
	req := f.submits[0]
	if req.Upload != "" || len(req.Inline) != 2 || req.Queue != "md" || req.Group != "g" || req.Options.NumSteps != 3 || len(req.Chains) != 3 {
		t.Fatalf("request %+v", req)
	}
	if req.Chains[1].Files["coor_file"] != (wire.FileRef{MD5: md5hex([]byte("A")), Size: 1}) {
		t.Errorf("chain c2 files %+v", req.Chains[1].Files)
	}
	if _, ok := req.Chains[2].Files["conf_file"]; ok {
		t.Error("an optional parameter not given was sent")
	}

	// Everything is on the server now: a second submission uploads nothing.
	rep, err = c.SubmitChains(context.Background(), SubmitInput{Queue: "md", Group: "g", Chains: chains[:1],
		Options: wire.Options{DryRun: true}})
	if err != nil || rep.UploadedFiles != 0 || rep.ReusedFiles != 2 || !rep.DryRun || f.submits[1].Upload != "" {
		t.Fatalf("second submission: %+v, %v", rep, err)
	}
}

func TestSubmitChainsRejectsBadGroup(t *testing.T) {
	_, c := newFake(t)
	_, err := c.SubmitChains(context.Background(), SubmitInput{Queue: "md", Group: "a/b"})
	if ExitCode(err) != ExitUsage {
		t.Fatalf("err = %v", err)
	}
}

func TestSubmitChainsFallsBackToPUTOnOlderServers(t *testing.T) {
	f, c := newFake(t)
	f.noInline = true
	dir := writeFiles(t, map[string]string{"a.coor": "A", "b.coor": "B"})
	chains := []Chain{
		{Name: "c1", Files: map[string]string{"coor_file": filepath.Join(dir, "a.coor")}},
		{Name: "c2", Files: map[string]string{"coor_file": filepath.Join(dir, "b.coor")}},
	}
	rep, err := c.SubmitChains(context.Background(), SubmitInput{Queue: "md", Group: "g", Chains: chains})
	if err != nil {
		t.Fatal(err)
	}
	if rep.UploadedFiles != 2 || len(rep.Chains) != 2 || len(f.puts) != 2 || len(f.inlined) != 0 {
		t.Fatalf("report %+v; %d PUT, %d inline", rep, len(f.puts), len(f.inlined))
	}
	if len(f.submits) != 1 || f.submits[0].Upload != "up1" || len(f.submits[0].Inline) != 0 {
		t.Fatalf("submissions %+v", f.submits)
	}
}

func TestSplitInline(t *testing.T) {
	sizes := []int64{inlineMaxFile + 1}
	for range inlineTotal / inlineMaxFile {
		sizes = append(sizes, inlineMaxFile)
	}
	sizes = append(sizes, 1, 0)
	var in []content
	for _, size := range sizes {
		in = append(in, content{ref: wire.FileRef{Size: size}})
	}
	inline, large := splitInline(in)
	// Too large for one file; then the total is full, but for nothing.
	if len(inline) != inlineTotal/inlineMaxFile+1 || inline[len(inline)-1].ref.Size != 0 ||
		len(large) != 2 || large[0].ref.Size != inlineMaxFile+1 || large[1].ref.Size != 1 {
		t.Fatalf("%d inline, large %+v", len(inline), large)
	}
}

func TestInlineBodyRefusesAChangedFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a": "AAAA", "b": "BB"})
	for name, ct := range map[string]content{
		"changed": {path: filepath.Join(dir, "a"), ref: wire.FileRef{MD5: md5hex([]byte("XXXX")), Size: 4}},
		"shorter": {path: filepath.Join(dir, "b"), ref: wire.FileRef{MD5: md5hex([]byte("BBB")), Size: 3}},
	} {
		b := &inlineBody{head: bytes.NewReader([]byte("{}\n")), files: []content{ct}}
		_, err := io.ReadAll(b)
		if err == nil || !strings.Contains(err.Error(), ct.path) || !strings.Contains(err.Error(), "submit again") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	ok := content{path: filepath.Join(dir, "a"), ref: wire.FileRef{MD5: md5hex([]byte("AAAA")), Size: 4}}
	empty := content{path: filepath.Join(dir, "b"), ref: wire.FileRef{MD5: md5hex(nil), Size: 0}}
	got, err := io.ReadAll(&inlineBody{head: bytes.NewReader([]byte("{}\n")), files: []content{ok, empty, ok}})
	if err != nil || string(got) != "{}\nAAAAAAAA" {
		t.Fatalf("body %q, %v", got, err)
	}
}

// TestSubmitKnownContentsAsksNothing: a resubmission (every content on the
// server) is one request, without asking which contents are missing; a
// submission with new contents learns them from the refusal, and sends
// each once.
func TestSubmitKnownContentsAsksNothing(t *testing.T) {
	f, c := newFake(t)
	dir := writeFiles(t, map[string]string{"a.coor": "A", "b.coor": "B", "c.conf": "C"})
	f.pool[md5hex([]byte("C"))] = []byte("C")
	chains := []Chain{
		{Name: "c1", Files: map[string]string{"coor_file": filepath.Join(dir, "a.coor"), "conf_file": filepath.Join(dir, "c.conf")}},
		{Name: "c2", Files: map[string]string{"coor_file": filepath.Join(dir, "b.coor"), "conf_file": filepath.Join(dir, "c.conf")}},
	}
	rep, err := c.SubmitChains(context.Background(), SubmitInput{Queue: "md", Group: "g", Chains: chains})
	if err != nil {
		t.Fatal(err)
	}
	if rep.UploadedFiles != 2 || rep.ReusedFiles != 1 || len(f.inlined) != 2 || f.inlined[md5hex([]byte("A"))] != 1 {
		t.Fatalf("first submission: report %+v, inline %v", rep, f.inlined)
	}
	if f.asked != 0 || f.refused != 1 || len(f.submits) != 1 {
		t.Fatalf("first submission: pool/missing asked %d times, %d refused, %d accepted; want 0, 1, 1", f.asked, f.refused, len(f.submits))
	}
	requests := f.requests
	rep, err = c.SubmitChains(context.Background(), SubmitInput{Queue: "md", Group: "g2", Chains: chains})
	if err != nil {
		t.Fatal(err)
	}
	if rep.UploadedFiles != 0 || rep.ReusedFiles != 3 || len(rep.Chains) != 2 {
		t.Fatalf("resubmission: report %+v", rep)
	}
	if f.requests-requests != 1 || f.asked != 0 || f.refused != 1 || len(f.submits) != 2 {
		t.Fatalf("resubmission: %d requests, pool/missing asked %d times, %d refused; want 1, 0, 1", f.requests-requests, f.asked, f.refused)
	}
}

// TestSubmitAsksOlderServersWhatIsMissing: a server whose refusal lists no
// contents (older than wire.Error.Missing) is asked, and the submission
// goes on as before.
func TestSubmitAsksOlderServersWhatIsMissing(t *testing.T) {
	f, c := newFake(t)
	f.noList = true
	dir := writeFiles(t, map[string]string{"a.coor": "A", "b.coor": "B"})
	chains := []Chain{
		{Name: "c1", Files: map[string]string{"coor_file": filepath.Join(dir, "a.coor")}},
		{Name: "c2", Files: map[string]string{"coor_file": filepath.Join(dir, "b.coor")}},
	}
	rep, err := c.SubmitChains(context.Background(), SubmitInput{Queue: "md", Group: "g", Chains: chains})
	if err != nil {
		t.Fatal(err)
	}
	if rep.UploadedFiles != 2 || len(rep.Chains) != 2 || len(f.inlined) != 2 || f.asked != 1 || len(f.submits) != 1 {
		t.Fatalf("report %+v; %d inline, pool/missing asked %d times, %d accepted", rep, len(f.inlined), f.asked, len(f.submits))
	}
}
