package legacy_test

import (
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/internal/spool"
)

// A queue with an input BOINC serves compressed (<gzip/>), a constant
// input with a fixed <physical_name>, and a <gzip_when_done/> output
// chained into the compressed input.
const (
	gzWU = `<rboinc application="gz-app_2" description="compressed and constant inputs"/>
<file_info>
    <number>0</number>
    <gzip/>
</file_info>
<file_info>
    <number>1</number>
    <physical_name>gzq_shared.dat</physical_name>
</file_info>
<workunit>
    <file_ref>
        <file_number>0</file_number>
        <open_name>state.in</open_name>
        <rboinc parameter_name="state"/>
    </file_ref>
    <file_ref>
        <file_number>1</file_number>
        <open_name>shared.dat</open_name>
    </file_ref>
    <rsc_fpops_est>1e9</rsc_fpops_est>
</workunit>
`
	gzResult = `<file_info>
    <name><OUTFILE_0/></name>
    <url><UPLOAD_URL/></url>
    <max_nbytes>100000</max_nbytes>
    <gzip_when_done/>
    <rboinc aliases=".state.gz" chain="0"/>
</file_info>
<result>
    <file_ref>
        <file_name><OUTFILE_0/></file_name>
        <open_name>state.out</open_name>
    </file_ref>
</result>
`
)

// TestPerlClientGzipInputQueue: the Perl client submits to the queue
// above, two steps run (each output uploaded compressed, as BOINC's client
// does for <gzip_when_done/>) and are retrieved. create_work finds the .gz
// copy of each step's input it wants (the submitted file's, then the
// previous step's upload's), holding that input; the scientist gets the
// uploaded bytes. rboinc refused the queue (every request answered
// "misconfigured"), then create_work every step ("missing gzip file").
func TestPerlClientGzipInputQueue(t *testing.T) {
	perlClients(t)
	w := newWorld(t)
	write(t, filepath.Join(w.e.Proj.Dir, "templates", "rboinc_gzq_wu"), gzWU, 0o644)
	write(t, filepath.Join(w.e.Proj.Dir, "templates", "rboinc_gzq_result"), gzResult, 0o644)
	write(t, filepath.Join(w.e.Proj.Dir, "apps", "gz-app_2", "run"), "#!/bin/sh\nexit 0\n", 0o755)
	shared := w.e.Proj.DownloadPath("gzq_shared.dat")
	write(t, shared, "SHARED\n", 0o644)
	if err := boinc.WriteSidecar(shared, md5hex([]byte("SHARED\n")), 7); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "s0")
	write(t, in, "state 0\n", 0o644)
	url := strings.TrimSuffix(w.cgiURL("toni", ""), "/")
	wu := firstWU(t, perl(t, "submit", url, "gzq", "G1", "z1", "2", "state="+in))

	input := []byte("state 0\n")
	var uploads [][]byte
	for step := range 2 {
		// The step's input, and beside it the .gz BOINC serves of it.
		gz, err := os.ReadFile(w.e.Proj.DownloadPath(pool.PhysicalName(md5hex(input))) + ".gz")
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if got := gunzip(t, gz); !bytes.Equal(got, input) {
			t.Fatalf("step %d: the .gz holds %q, want %q", step, got, input)
		}
		out := gzipped(t, fmt.Sprintf("state %d\n", step+1))
		uploads = append(uploads, out)
		wu = w.deliverBytes(wu, out)
		input = out
	}
	into := t.TempDir()
	if out := perl(t, "retrieve", url, "G1", "z1", into); !strings.Contains(out, "Successfully retrieved 2.\n") {
		t.Fatalf("retrieve printed:\n%s", out)
	}
	ents, _ := os.ReadDir(into)
	if len(ents) != 2 {
		t.Fatalf("retrieved %v", ents)
	}
	for i, e := range ents { // in step order
		b, _ := os.ReadFile(filepath.Join(into, e.Name()))
		if !strings.HasSuffix(e.Name(), "_0.state.gz") || !bytes.Equal(b, uploads[i]) {
			t.Fatalf("%s: %q, want the upload %q", e.Name(), b, uploads[i])
		}
	}
}

// deliverBytes plays BOINC for one work unit of a queue with one output:
// it lands in the upload hierarchy holding out, spooled as in production,
// then the creator's pass. It returns the next step's work-unit name.
func (w *world) deliverBytes(wu string, out []byte) string {
	w.t.Helper()
	p := w.e.Proj.UploadPath(wu + "_0_r1804289383_0")
	write(w.t, p, string(out), 0o644)
	if _, err := spool.Accept(w.e.Root, boinc.HookCall{WUName: wu, Files: []string{p}}); err != nil {
		w.t.Fatal(err)
	}
	if err := w.e.CreatorPass(w.ctx); err != nil {
		w.t.Fatal(err)
	}
	n, err := naming.ParseWU(wu)
	if err != nil {
		w.t.Fatal(err)
	}
	n.Step++
	return n.String()
}

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
