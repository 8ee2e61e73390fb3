package legacy

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func TestDescriptionRequest(t *testing.T) {
	b, err := os.ReadFile("testdata/requests/submit-add-to-group.xml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := parseDescription(b)
	if err != nil {
		t.Fatal(err)
	}
	req, notes, err := d.request()
	if err != nil || len(notes) != 0 {
		t.Fatalf("request: %v %v", err, notes)
	}
	o := req.Options
	if req.Queue != "metabeta" || req.Group != "G1" || len(req.Chains) != 1 || req.Chains[0].Name != "N2" ||
		o.NumSteps != 3 || *o.Priority != 5 || o.TargetNResults != 1 || o.MinQuorum != 1 || o.DryRun || o.FpopsEst != 0 {
		t.Fatalf("request %+v, options %+v", req, o)
	}

	for _, tc := range []struct {
		attrs string
		want  string // failure reason; "" for success
	}{
		{`Group="G" Name="N" Template="q"`, ""},
		{`Group="G" Name="N" Template="q" Tag="x"`, "Tag syntax is obsolete. Please use group+name"},
		{`Group="G" Template="q"`, "Both group and name must be given"},
		{`Group="" Name="N" Template="q"`, "Both group and name must be given"},
		{`Group="G" Name="" Template="q"`, "Invalid name supplied"},
		{`Group="G" Name="a b" Template="q"`, "Invalid name supplied"},
		{`Group="G.1" Name="N" Template="q"`, "Invalid group supplied"},
		{`Group="G" Name="process" Template="q"`, "process is a reserved name"},
		{`Group="G" Name="N" Template="q" MinQuorum="3" TargetNResults="2"`, "min_quorum (now 3) must be <= target_nresults (2)"},
		{`Group="G" Name="N" Template="q" NumSteps="ten"`, `Invalid NumSteps supplied: "ten" is not a whole number`},
		{`Group="G" Name="N" Template="q" FPopsEst="1e1x"`, `Invalid FPopsEst supplied: "1e1x" is not a number`},
		{`Group="G" Name="N"`, "No application queue (Template) in description_file.xml"},
	} {
		d, err := parseDescription([]byte("<BoincRemote " + tc.attrs + " />"))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = d.request()
		var f *failure
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.attrs, err)
		case tc.want != "" && (!errors.As(err, &f) || f.reason != tc.want):
			t.Errorf("%s: got %v, want %q", tc.attrs, err, tc.want)
		}
	}

	// Elements count like attributes; 0 means the default; unsupported
	// fields are noted.
	d, _ = parseDescription([]byte(`<BoincRemote><Group>G</Group><Name>N</Name><Template>q</Template>` +
		`<NumSteps>0</NumSteps><Priority/><Balance>1</Balance><DelayBound>100</DelayBound><DryRun>1</DryRun></BoincRemote>`))
	req, notes, err = d.request()
	if err != nil || req.Options.NumSteps != 1 || *req.Options.Priority != 1 || !req.Options.DryRun || len(notes) != 2 {
		t.Fatalf("request %+v, notes %v, err %v", req.Options, notes, err)
	}
	d, _ = parseDescription([]byte(`<BoincRemote Name="N"><Group>G</Group><Group>H</Group></BoincRemote>`))
	if _, _, err := d.request(); err == nil || !strings.Contains(err.Error(), "plain text") {
		t.Fatalf("repeated field: %v", err)
	}
	if _, err := parseDescription([]byte(strings.Repeat(" ", maxDescription+1))); err == nil {
		t.Fatal("oversized description accepted")
	}
}

// FuzzDescription: any description is refused or turned into a request
// without a panic; a request always names one valid chain.
func FuzzDescription(f *testing.F) {
	for _, p := range []string{"submit-10step.xml", "submit-dry-run.xml", "handmade-unknown-queue.xml"} {
		if b, err := os.ReadFile("testdata/requests/" + p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`<BoincRemote Group="G" Name="N" Template="q" NumSteps="99999999999"/>`))
	f.Add([]byte(`<BoincRemote Group="G" Name="N" Template="q" NumSteps="-5"/>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := parseDescription(data)
		if err != nil {
			return
		}
		req, _, err := d.request()
		if err != nil {
			return
		}
		if len(req.Chains) != 1 || !identRE.MatchString(req.Chains[0].Name) || !identRE.MatchString(req.Group) || req.Options.NumSteps < 1 {
			t.Fatalf("bad request from %q: %+v", data, req)
		}
	})
}
