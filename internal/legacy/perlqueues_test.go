package legacy_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/spool"
)

// The queues below are unlike the original's metabeta: one input and one
// output under a wide application name, and no input at all.
const (
	oneWU = `<rboinc application="solo-app_1" description="one in, one out"/>
<file_info>
    <number>0</number>
</file_info>
<workunit>
    <file_ref>
        <file_number>0</file_number>
        <open_name>state.in</open_name>
        <rboinc parameter_name="state" parameter_description="the state"/>
    </file_ref>
    <rsc_fpops_est>1e9</rsc_fpops_est>
</workunit>
`
	oneResult = `<file_info>
    <name><OUTFILE_0/></name>
    <url><UPLOAD_URL/></url>
    <max_nbytes>100000</max_nbytes>
    <rboinc aliases=".state" chain="0"/>
</file_info>
<result>
    <file_ref>
        <file_name><OUTFILE_0/></file_name>
        <open_name>state.out</open_name>
    </file_ref>
</result>
`
)

func perlClients(t *testing.T) {
	t.Helper()
	if err := exec.Command("perl", "-MLWP::UserAgent", "-MHTTP::DAV", "-MXML::Simple", "-e", "1").Run(); err != nil {
		t.Skip("perl with LWP, HTTP::DAV and XML::Simple is not installed")
	}
}

func perl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("perl", append([]string{"testdata/perlclient.pl"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("perlclient.pl %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// deliver plays BOINC for one work unit of a queue with n outputs: they
// land in the upload hierarchy, spooled (the hook's front half) as in
// production, then the creator's pass. It returns the next step's
// work-unit name.
func (w *world) deliver(wu string, n int) string {
	w.t.Helper()
	var files []string
	for k := range n {
		p := w.e.Proj.UploadPath(fmt.Sprintf("%s_0_r1804289383_%d", wu, k))
		write(w.t, p, fmt.Sprintf("output %s index %d\n", wu, k), 0o644)
		files = append(files, p)
	}
	if _, err := spool.Accept(w.e.Root, boinc.HookCall{WUName: wu, Files: files}); err != nil {
		w.t.Fatal(err)
	}
	if err := w.e.CreatorPass(w.ctx); err != nil {
		w.t.Fatal(err)
	}
	p, err := naming.ParseWU(wu)
	if err != nil {
		w.t.Fatal(err)
	}
	p.Step++
	return p.String()
}

// oneQueue sets up queue "one" (one input, one output chained back into
// it) and returns toni's CGI address and a first input for it.
func (w *world) oneQueue() (url, in string) {
	w.t.Helper()
	write(w.t, filepath.Join(w.e.Proj.Dir, "templates", "rboinc_one_wu"), oneWU, 0o644)
	write(w.t, filepath.Join(w.e.Proj.Dir, "templates", "rboinc_one_result"), oneResult, 0o644)
	write(w.t, filepath.Join(w.e.Proj.Dir, "apps", "solo-app_1", "run"), "#!/bin/sh\nexit 0\n", 0o755)
	in = filepath.Join(w.t.TempDir(), "s0")
	write(w.t, in, "5\n", 0o644)
	return strings.TrimSuffix(w.cgiURL("toni", ""), "/"), in
}

// TestPerlClientOneInputQueue: a queue with a single input, submitted
// with a client that reads the template as the original boinc_submit does
// (the inputs as the array WuTemplate/workunit/file_ref), run two steps and
// retrieved with the aliases. With one <file_ref> XML::Simple made a hash
// of it and the original client died before it uploaded anything.
func TestPerlClientOneInputQueue(t *testing.T) {
	perlClients(t)
	w := newWorld(t)
	url, in := w.oneQueue()
	wu := firstWU(t, perl(t, "submit", url, "one", "G_1", "a1", "2", "state="+in))
	if !strings.HasPrefix(wu, "a1-TONI_G_1-0-2-RND") {
		t.Fatalf("submitted %s", wu)
	}
	last := w.deliver(wu, 1)
	w.deliver(last, 1)
	into := t.TempDir()
	out := perl(t, "retrieve", url, "G_1", "a1", into)
	if !strings.Contains(out, "Successfully retrieved 2.\nRemoved 2 server files") {
		t.Fatalf("retrieve printed:\n%s", out)
	}
	for _, f := range []string{wu, last} {
		b, err := os.ReadFile(filepath.Join(into, f+"_0.state"))
		if err != nil || string(b) != fmt.Sprintf("output %s index 0\n", f) {
			t.Fatalf("%s_0.state: %q %v", f, b, err)
		}
	}
	// The second step's input was the first step's output.
	st, err := w.e.Status(w.ctx, mustUser(t, w, "toni"), "G_1", "a1")
	if err != nil || st.Chains[0].State != "done" || st.Chains[0].StepsDone != 2 {
		t.Fatalf("status: %+v %v", st.Chains, err)
	}
}

// TestTemplateAnswerLists: whatever a queue's number of inputs, the
// original clients find WuTemplate/workunit/file_ref an array, the queue's
// parameters in it.
func TestTemplateAnswerLists(t *testing.T) {
	perlClients(t)
	w := newWorld(t)
	write(t, filepath.Join(w.e.Proj.Dir, "templates", "rboinc_one_wu"), oneWU, 0o644)
	write(t, filepath.Join(w.e.Proj.Dir, "templates", "rboinc_one_result"), oneResult, 0o644)
	none := strings.Replace(strings.Replace(oneWU, oneWU[strings.Index(oneWU, "    <file_ref>"):strings.Index(oneWU, "    <rsc_fpops_est>")], "", 1),
		"<file_info>\n    <number>0</number>\n</file_info>\n", "", 1)
	write(t, filepath.Join(w.e.Proj.Dir, "templates", "rboinc_none_wu"), none, 0o644)
	write(t, filepath.Join(w.e.Proj.Dir, "templates", "rboinc_none_result"), strings.Replace(oneResult, ` chain="0"`, "", 1), 0o644)
	// The original boinc_lib.pl's parseWuTemplate, in our words.
	const params = `use XML::Simple; local $/; my $t = XMLin(<STDIN>, ForceArray => ["file_info"]);
		die "Not a remote-enabled application.\n" unless $t->{WuTemplate}{rboinc}{application};
		my @p; for my $f (@{ $t->{WuTemplate}{workunit}{file_ref} }) { push @p, $f->{rboinc}{parameter_name} if $f->{rboinc}{parameter_name} }
		print join(",", sort @p), "\n";`
	for queue, want := range map[string]string{"one": "state\n", "none": "\n", "metabeta": "conf_file,coor_file,hills_file,idx_file,metainp_file,par_file,pdb_file,psf_file,vel_file\n"} {
		cmd := exec.Command("perl", "-e", params)
		cmd.Stdin = strings.NewReader(w.post("toni", ret, "action=get_wu_template&application="+queue))
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != want {
			t.Errorf("queue %s: the client read the parameters %q (%v), want %q\n%s", queue, out, err, want, w.post("toni", ret, "action=get_wu_template&application="+queue))
		}
	}
}

// TestRetrieveGroupOfTwoQueues: a group with chains of two queues whose
// outputs at the same index have different aliases (metabeta's _0 is a
// .log.gz, the one queue's a .state). The answer has a single alias table,
// so one retrieval takes the files of one table and the next the others:
// every file is saved under its own queue's extension.
func TestRetrieveGroupOfTwoQueues(t *testing.T) {
	perlClients(t)
	w := newWorld(t)
	url, in := w.oneQueue()
	one := firstWU(t, perl(t, "submit", url, "one", "G1", "a1", "1", "state="+in))
	meta := firstWU(t, w.uploadAndSubmit("toni", "up051158", description(t, "submit-10step.xml", nil), inputs))
	w.deliver(one, 1)
	w.advance(meta)
	into := t.TempDir()
	// The files are staged in name order: metabeta's N1 first.
	out := perl(t, "retrieve", url, "G1", "", into)
	if !strings.Contains(out, "Successfully retrieved 8.\n") {
		t.Fatalf("first retrieval printed:\n%s", out)
	}
	out = perl(t, "retrieve", url, "G1", "", into)
	if !strings.Contains(out, "Successfully retrieved 1.\n") {
		t.Fatalf("second retrieval printed:\n%s", out)
	}
	for _, f := range []string{one + "_0.state", meta + "_0.log.gz", meta + "_1.coor", meta + "_7.hills"} {
		if _, err := os.Stat(filepath.Join(into, f)); err != nil {
			ents, _ := os.ReadDir(into)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Fatalf("%s not retrieved; the files: %v", f, names)
		}
	}
	if ans := w.post("toni", ret, "action=retrieve&group=G1&name=&loginname=toni"); !strings.Contains(ans, "No files ready for retrieval") {
		t.Fatalf("a third retrieval answered:\n%s", ans)
	}
}
