package legacy_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/testbin"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the answers")

var serverExe string

// TestMain takes the real rboinc-server binary from the run's shared
// build: the stand-in's bin/create_work runs it as a separate process,
// exactly as BOINC would.
func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := testbin.Build(testbin.Server)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverExe = filepath.Join(dir, "rboinc-server")
	os.Exit(m.Run())
}

// world is a server on the embedded BOINC stand-in with the original's
// example queue metabeta and the user toni, as in the captured exchanges.
type world struct {
	t      *testing.T
	ctx    context.Context
	e      *engine.Engine
	db     *store.DB // the state, opened beside the engine as rboinc-server's commands do
	srv    *httptest.Server
	tokens map[string]string
}

func newWorld(t *testing.T) *world {
	ctx := context.Background()
	root := t.TempDir()
	testbin.Preinstall(root, serverExe)
	if _, err := setup.Init(ctx, setup.Options{Root: root, Exe: serverExe, URLBase: "http://127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := engine.Open(ctx, root, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	db, err := engine.OpenState(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, f := range []string{"rboinc_metabeta_wu", "rboinc_metabeta_result"} {
		copyFile(t, filepath.Join("testdata", "templates", f), filepath.Join(e.Proj.Dir, "templates", f))
	}
	write(t, filepath.Join(e.Proj.Dir, "apps", "acemdbeta", "run"), "#!/bin/sh\nexit 0\n", 0o755)
	for _, f := range []string{"LICENSE", "COPYRIGHT"} {
		write(t, filepath.Join(root, "etc", "default_"+f), f+" text\n", 0o644)
	}
	// The original's encoder was not published; this one copies.
	enc := filepath.Join(root, "encode")
	write(t, enc, "#!/bin/sh\ncat \"$1\" > \"$2\"\n", 0o755)
	e.Cfg.Encoder = enc
	w := &world{t: t, ctx: ctx, e: e, db: db, tokens: map[string]string{}}
	for _, name := range []string{"toni", "bob"} {
		tok, err := server.AddUser(ctx, db, name)
		if err != nil {
			t.Fatal(err)
		}
		w.tokens[name] = tok
	}
	w.srv = httptest.NewServer(server.New(e, log).Handler())
	t.Cleanup(w.srv.Close)
	return w
}

func write(t *testing.T, path, content string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dst, string(b), 0o644)
}

// cgiURL is the script's URL with the user's credentials in it, as the
// scientist writes RBOINC_URL for the Perl clients.
func (w *world) cgiURL(user, script string) string {
	u, _ := url.Parse(w.srv.URL + "/rboinc_cgi/" + script)
	if user != "" {
		u.User = url.UserPassword(user, w.tokens[user])
	}
	return u.String()
}

// do sends a request as LWP and HTTP::DAV do: credentials from the URL
// as HTTP Basic, a fresh connection each time.
func (w *world) do(method, rawURL, agent string, hdr map[string]string, body string) (int, string, string) {
	w.t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		w.t.Fatal(err)
	}
	var cred *url.Userinfo
	cred, u.User = u.User, nil
	req, _ := http.NewRequest(method, u.String(), strings.NewReader(body))
	if cred != nil {
		pw, _ := cred.Password()
		req.SetBasicAuth(cred.Username(), pw)
	}
	req.Close = true
	req.Header.Set("TE", "deflate,gzip;q=0.3")
	req.Header.Set("User-Agent", agent)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// post is one CGI call of the Perl clients: a form POST.
func (w *world) post(user, script, form string) string {
	w.t.Helper()
	status, ctype, body := w.do("POST", w.cgiURL(user, script), "libwww-perl/6.68",
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, form)
	if status != 200 || ctype != "text/plain" {
		w.t.Fatalf("POST %s %s: status %d, Content-Type %q, body %q", script, form, status, ctype, body)
	}
	return body
}

const propfindBody = `<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>`

// dav is one HTTP::DAV request; want is the status the captured exchange
// had (0: any 2xx).
func (w *world) dav(method, rawURL, depth, body string, want ...int) string {
	w.t.Helper()
	hdr := map[string]string{}
	if method == "PROPFIND" {
		hdr["Content-Type"], hdr["Depth"], body = "text/xml", depth, propfindBody
	}
	status, _, got := w.do(method, rawURL, "DAV.pm/v0.49", hdr, body)
	for _, s := range want {
		if s == status {
			return got
		}
	}
	w.t.Fatalf("%s %s: status %d, want %v (%s)", method, rawURL, status, want, got)
	return ""
}

// uploadAndSubmit does what boinc_submit does after discovery: ask the
// DAV URL, create the upload collection, PUT each file (a PROPFIND
// before each), submit, delete the collection.
func (w *world) uploadAndSubmit(user, id, description string, files map[string]string) string {
	w.t.Helper()
	davURL := davURLOf(w.t, w.post(user, "boinc_retrieve_server.pl", "action=get_dav_url"))
	w.dav("PROPFIND", davURL, "0", "", 207)
	w.dav("MKCOL", davURL+id+"/", "", "", 201)
	w.dav("PROPFIND", davURL+id+"/", "0", "", 207)
	names := make([]string, 0, len(files)+1)
	for n := range files {
		names = append(names, n)
	}
	names = append(names, "description_file.xml")
	sort.Strings(names)
	for _, n := range names {
		content, ok := files[n]
		if !ok {
			content = description
		}
		w.dav("PROPFIND", davURL+id+"/"+n, "0", "", 404)
		w.dav("PUT", davURL+id+"/"+n, "", content, 201)
	}
	ans := w.post(user, "boinc_submit_server.pl", "random_id="+id)
	w.dav("PROPFIND", davURL, "0", "", 207)
	w.dav("DELETE", davURL+id, "", "", 204, 301, 404)
	return ans
}

var davRE = regexp.MustCompile(`DavUrl="([^"]*)"`)

func davURLOf(t *testing.T, ans string) string {
	t.Helper()
	m := davRE.FindStringSubmatch(ans)
	if m == nil {
		t.Fatalf("no DavUrl in %q", ans)
	}
	return m[1]
}

// inputs are the scientist's files (the contents do not matter).
var inputs = map[string]string{
	"coor_file": "COOR dummy coordinates v1\n", "vel_file": "VEL dummy velocities v1\n",
	"pdb_file": "PDB dummy structure v1\n", "psf_file": "PSF dummy topology v1\n",
	"par_file": "PAR dummy parameters v1\n", "conf_file": "CONF dummy acemd input v1\n",
}

func withIdx() map[string]string {
	m := map[string]string{"idx_file": "IDX dummy index v1\n"}
	for k, v := range inputs {
		m[k] = v
	}
	return m
}

// description is the captured 10-step description with fields replaced.
func description(t *testing.T, file string, set map[string]string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "requests", file))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for k, v := range set {
		re := regexp.MustCompile(`(\s` + k + `=)"[^"]*"`)
		if !re.MatchString(s) {
			t.Fatalf("no field %s in %s", k, file)
		}
		s = re.ReplaceAllString(s, `$1"`+v+`"`)
	}
	return s
}

// advance plays BOINC for one work unit: the 8 outputs of metabeta land
// in the upload hierarchy and the hook runs. It returns the
// next step's work-unit name.
func (w *world) advance(wu string) string { return w.deliver(wu, 8) }

var submittedRE = regexp.MustCompile(`Submitted (\S+)`)

func firstWU(t *testing.T, ans string) string {
	t.Helper()
	m := submittedRE.FindStringSubmatch(ans)
	if m == nil {
		t.Fatalf("nothing submitted: %s", ans)
	}
	return m[1]
}

// normalise blanks what cannot be the same in two runs: the chain's
// random tag, the retrieval collection, the server's revision and the DAV
// URL (host, port, credentials).
func normalise(s string) string {
	for _, r := range []struct{ re, to string }{
		{`RND[0-9]{4}`, "RNDnnnn"},
		{`retr[0-9]{6}`, "retrNNNNNN"},
		{`ServerRevision="[^"]*"`, `ServerRevision="REV"`},
		{`DavUrl="[^"]*"`, `DavUrl="URL"`},
	} {
		s = regexp.MustCompile(r.re).ReplaceAllString(s, r.to)
	}
	return s
}

// differs lists the answers that are deliberately not the original's,
// and why; their shape must still be the original's. Every other answer
// is compared byte for byte with the original's (normalised).
var differs = map[string]string{
	"retrieve-name_53-remove":                       "remove forgets every staged file; the original kept the latest step of a running chain for its own chaining",
	"retrieve-group_01-retrieve":                    "files removed by the earlier retrieval are not listed again",
	"retrieve-group_02-remove":                      "as retrieve-name_53-remove",
	"retrieve-name-metadata_01-retrieve":            "rboinc keeps no per-job metadata_file",
	"retrieve-name-metadata_04-remove":              "as retrieve-name_53-remove",
	"status-after-stop_01-status":                   "steps done come from the database, so they survive retrieval",
	"gridstatus_01-gridstatus":                      "chain states per group beside BOINC's result counts",
	"purge-name_01-purge":                           "the message counts jobs instead of quoting du",
	"purge-group_01-purge":                          "as purge-name_01-purge",
	"error-retrieve-empty-group_01-retrieve":        "the original failed with a Perl error here",
	"submit-dry-run_02-submit":                      "nothing is set up by a dry run, and the message says so",
	"submit-into-stopped-group_01-submit":           "stop applies to chains, not groups: a new chain runs",
	"server-misc_05-submit-missing-upload-dir":      "the original crashed (HTTP 500)",
	"server-misc_08-submit-unknown-queue":           "the original crashed (HTTP 500)",
	"auth-missing-credentials":                      "the original had no authentication",
	"auth-other-users-upload":                       "the original had no authentication",
	"auth-other-users-retrieval":                    "the original had no authentication",
	"server-misc_10-status-uppercase-loginname-bob": "the original had no authentication",
}

// check compares one answer with the original's (or, for a deliberate
// difference, with the golden file and the original's shape).
func (w *world) check(name, ans string) {
	w.t.Helper()
	got := normalise(ans)
	orig, err := os.ReadFile(filepath.Join("testdata", "original", name+".xml"))
	hasOrig := err == nil
	why, differ := differs[name]
	if !differ {
		if !hasOrig {
			w.t.Fatalf("%s: no original answer in testdata/original", name)
		}
		if want := normalise(string(orig)); got != want {
			w.t.Errorf("%s: answer differs from the original's:\ngot:\n%s\nwant:\n%s", name, got, want)
		}
		return
	}
	golden := filepath.Join("testdata", "golden", name+".xml")
	if *update {
		write(w.t, golden, got, 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		w.t.Fatalf("%s: %v (run with -update)", name, err)
	}
	if got != string(want) {
		w.t.Errorf("%s (%s): answer differs from the golden file:\ngot:\n%s\nwant:\n%s", name, why, got, want)
	}
	if hasOrig {
		// The capture's sanitising wrote <root> for the test's directory.
		g, o := shape(w.t, got), shape(w.t, strings.ReplaceAll(string(orig), "<root>", "ROOT"))
		if name == "gridstatus_01-gridstatus" {
			// The original's table was empty only because its test bed had
			// no BOINC database.
			g = strings.ReplaceAll(g, "\nRetrieveStatus/Success #text", "")
		}
		if g != o {
			w.t.Errorf("%s: shape differs from the original's:\ngot:\n%s\noriginal:\n%s", name, g, o)
		}
	}
}

// shape is the set of element paths with their attribute names and
// whether they hold text: what a client's XML::Simple sees, without the
// values.
func shape(t *testing.T, doc string) string {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(doc))
	set := map[string]bool{}
	var path []string
	var text []bool
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%s", err, doc)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			path = append(path, x.Name.Local)
			var attrs []string
			for _, a := range x.Attr {
				n := a.Name.Local
				if strings.HasPrefix(n, "Bin_") {
					n = "Bin_*"
				}
				attrs = append(attrs, n)
			}
			sort.Strings(attrs)
			set[strings.Join(path, "/")+" ["+strings.Join(attrs, " ")+"]"] = true
			text = append(text, false)
		case xml.CharData:
			if len(path) > 0 && len(bytes.TrimSpace(x)) > 0 {
				text[len(text)-1] = true
			}
		case xml.EndElement:
			if text[len(text)-1] {
				set[strings.Join(path, "/")+" #text"] = true
			}
			path, text = path[:len(path)-1], text[:len(text)-1]
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, "\n")
}

const (
	sub = "boinc_submit_server.pl"
	ret = "boinc_retrieve_server.pl"
)

// TestOriginalClientsExchanges replays the captured sessions of the
// original Perl clients against a real server: the same requests (form
// fields, WebDAV calls, in the same order), and the answers compared with
// the original's.
func TestOriginalClientsExchanges(t *testing.T) {
	w := newWorld(t)
	// Liveness and the probes of server-misc.
	for _, s := range []string{ret, sub} {
		status, ctype, body := w.do("GET", w.cgiURL("", s), "curl/7.88.1", nil, "")
		if status != 200 || ctype != "text/plain" || body != "Remote boinc CGI is alive.\n" {
			t.Errorf("liveness of %s: %d %q %q", s, status, ctype, body)
		}
	}
	w.check("server-misc_03-unsupported-action", w.post("toni", ret, "action=bogus"))
	_, _, body := w.do("GET", w.cgiURL("toni", ret)+"?action=get_dav_url", "curl/7.88.1", nil, "")
	w.check("server-misc_04-get_dav_url-via-GET-query", body)

	// A: the 10-step submission, as boinc_submit does it.
	w.check("submit-10step_01-get_wu_template", w.post("toni", ret, "application=metabeta&action=get_wu_template"))
	ans := w.post("toni", ret, "action=get_dav_url")
	w.check("submit-10step_02-get_dav_url", ans)
	if got, want := davURLOf(t, ans), strings.Replace(w.srv.URL, "http://", "http://toni:"+w.tokens["toni"]+"@", 1)+"/DAV/toni/"; got != want {
		t.Errorf("DAV URL %s, want %s", got, want)
	}
	ans = w.uploadAndSubmit("toni", "up051158", description(t, "submit-10step.xml", nil), inputs)
	w.check("submit-10step_20-submit", ans)
	n1 := firstWU(t, ans)

	// B: BOINC runs N1's steps 0-2.
	for range 3 {
		n1 = w.advance(n1)
	}

	// C0: a second job in the group, with an optional input and a priority.
	ans = w.uploadAndSubmit("toni", "up630518", description(t, "submit-add-to-group.xml", nil), withIdx())
	w.check("submit-add-to-group_09-submit", ans)
	for n2 := firstWU(t, ans); !strings.Contains(n2, "-3-3-"); {
		n2 = w.advance(n2)
	}
	w.check("status_01-status", w.post("toni", ret, "loginname=toni&action=status&group=G1"))

	// C2: retrieve -name N1, the whole exchange.
	w.retrieveAll("retrieve-name", "action=retrieve&group=G1&name=N1&loginname=toni", true, 404)
	// C4: retrieve of the group: N2's results only, N1's were removed.
	w.retrieveAll("retrieve-group", "action=retrieve&loginname=toni&group=G1&name=", true, 404)
	// C5: -intotree -keep of N1's step 3: no remove, the client deletes its
	// staging links (the results stay on the server).
	n1 = w.advance(n1)
	w.retrieveAll("retrieve-intotree-keep", "name=N1&loginname=toni&action=retrieve&group=G1", false, 204)
	// C13: N1 again: steps 3 (kept) and 4.
	n1 = w.advance(n1)
	w.retrieveAll("retrieve-name-metadata", "loginname=toni&group=G1&name=N1&action=retrieve", true, 404)

	// C6: stop, twice.
	w.check("stop_01-stop", w.post("toni", ret, "action=stop&group=G1&loginname=toni"))
	w.check("stop-again_01-stop", w.post("toni", ret, "group=G1&action=stop&loginname=toni"))
	w.check("status-after-stop_01-status", w.post("toni", ret, "loginname=toni&group=G1&action=status"))

	// E: the submissions the original server refused.
	for _, tc := range []struct {
		name string
		set  map[string]string
	}{
		{"error-duplicate-name_01-submit", nil},
		{"error-name-with-dash_01-submit", map[string]string{"Group": "G5", "Name": "N-1"}},
		{"error-group-with-dash_01-submit", map[string]string{"Group": "G-5", "Name": "X1"}},
		{"error-no-group_01-submit", map[string]string{"Group": "", "Name": "X1"}},
		{"error-reserved-name_01-submit", map[string]string{"Group": "G5", "Name": "pool"}},
		{"error-min-quorum_01-submit", map[string]string{"Group": "G5", "Name": "X1", "MinQuorum": "2"}},
	} {
		w.check(tc.name, w.uploadAndSubmit("toni", "up100001", description(t, "submit-10step.xml", tc.set), inputs))
	}
	w.check("error-bad-queue-chars_01-get_wu_template", w.post("toni", ret, "action=get_wu_template&application=meta.beta"))
	w.check("error-unknown-queue_01-get_wu_template", w.post("toni", ret, "action=get_wu_template&application=nosuch"))
	w.check("server-misc_05-submit-missing-upload-dir", w.post("toni", sub, "random_id=up999999"))
	w.check("server-misc_08-submit-unknown-queue", w.uploadAndSubmit("toni", "up999998", description(t, "handmade-unknown-queue.xml", nil), nil))

	// A dry run, then the same job for real (with no results yet), in G3.
	w.check("submit-dry-run_02-submit", w.uploadAndSubmit("toni", "up168621", description(t, "submit-dry-run.xml", nil), inputs))
	w.uploadAndSubmit("toni", "up168622", description(t, "submit-dry-run.xml", map[string]string{"DryRun": ""}), inputs)
	w.check("error-retrieve-empty-name_01-retrieve", w.post("toni", ret, "action=retrieve&group=G3&name=D1&loginname=toni"))
	w.check("error-retrieve-empty-group_01-retrieve", w.post("toni", ret, "name=&loginname=toni&group=G3&action=retrieve"))
	w.check("error-retrieve-missing-group_01-retrieve", w.post("toni", ret, "name=&loginname=toni&group=NOPE&action=retrieve"))
	w.check("server-misc_11-retrieve-reserved-name", w.post("toni", ret, "action=retrieve&group=G1&name=pool&loginname=toni"))

	// E6: a new job in the stopped group.
	w.check("submit-into-stopped-group_01-submit", w.uploadAndSubmit("toni", "up031404", description(t, "submit-10step.xml", map[string]string{"Name": "N5"}), inputs))

	w.check("gridstatus_01-gridstatus", w.post("toni", ret, "action=gridstatus&loginname=toni"))
	w.check("purge-name_01-purge", w.post("toni", ret, "group=G1&loginname=toni&action=purge&name=N2"))
	// The login name does not matter: the credentials say who asks.
	w.check("server-misc_10-status-uppercase-loginname", w.post("toni", ret, "action=status&group=G1&loginname=TONI"))
	w.check("server-misc_10-status-uppercase-loginname-bob", w.post("bob", ret, "action=status&group=G1&loginname=toni"))
	w.check("purge-group_01-purge", w.post("toni", ret, "name=&loginname=toni&action=purge&group=G3"))

	// Identity: no credentials, and another user's collections.
	w.check("auth-missing-credentials", w.post("", ret, "action=status&group=G1&loginname=toni"))
	davURL := davURLOf(t, w.post("toni", ret, "action=get_dav_url"))
	w.dav("MKCOL", davURL+"up777777/", "", "", 201)
	w.dav("PUT", davURL+"up777777/description_file.xml", "", description(t, "submit-10step.xml", map[string]string{"Name": "B1"}), 201)
	w.check("auth-other-users-upload", w.post("bob", sub, "random_id=up777777"))
	w.advance(n1) // a stopped chain's last work unit still delivers
	staged := regexp.MustCompile(`Directory="(retr[0-9]+)"`).FindStringSubmatch(w.post("toni", ret, "action=retrieve&group=G1&name=N1&loginname=toni"))
	if staged == nil {
		t.Fatal("nothing staged")
	}
	w.check("auth-other-users-retrieval", w.post("bob", ret, "action=remove&dir="+staged[1]+"&loginname=toni"))
	bobDAV := strings.Replace(davURL, "toni:"+w.tokens["toni"], "bob:"+w.tokens["bob"], 1)
	w.dav("PROPFIND", bobDAV+staged[1]+"/", "0", "", 403)
}

// retrieveAll is one run of boinc_retrieve: retrieve, then the DAV URL,
// a PROPFIND and GET of every listed file, remove (unless keep), DELETE of
// every staged file (deleteStatus: what the first DELETE gets), PROPFIND
// of the DAV root and DELETE of the collection.
func (w *world) retrieveAll(scenario, form string, remove bool, deleteStatus int) {
	w.t.Helper()
	ans := w.post("toni", ret, form)
	w.check(scenario+"_01-retrieve", ans)
	var list struct {
		Files   []string `xml:"FileList>File"`
		Success struct {
			Directory string `xml:"Directory,attr"`
		}
	}
	if err := xml.Unmarshal([]byte(ans), &list); err != nil || list.Success.Directory == "" {
		w.t.Fatalf("retrieve answer: %v\n%s", err, ans)
	}
	dav := w.post("toni", ret, "action=get_dav_url")
	if scenario != "retrieve-group" && scenario != "retrieve-name-metadata" {
		w.check(scenario+"_02-get_dav_url", dav)
	}
	davURL := davURLOf(w.t, dav)
	dir := davURL + list.Success.Directory + "/"
	w.dav("PROPFIND", davURL, "0", "", 207)
	w.dav("PROPFIND", dir, "0", "", 207)
	for _, f := range list.Files {
		w.dav("PROPFIND", dir+f, "1", "", 207)
		wu, k, err := naming.ParseResultFile(f)
		if got := w.dav("GET", dir+f, "", "", 200); err != nil || got != fmt.Sprintf("output %s index %d\n", wu, k) {
			w.t.Errorf("GET %s: %q", f, got)
		}
	}
	if remove {
		step := map[string]string{"retrieve-name": "_53-remove", "retrieve-group": "_02-remove", "retrieve-name-metadata": "_04-remove"}[scenario]
		ans := w.post("toni", ret, "dir="+list.Success.Directory+"&loginname=toni&action=remove")
		if want := strings.Repeat("\n", (len(list.Files)+19)/20); !strings.HasPrefix(ans, want+"<") {
			w.t.Errorf("remove of %d files: answer does not start with %d newlines: %q", len(list.Files), len(want), ans)
		}
		w.check(scenario+step, ans)
	}
	for _, f := range list.Files {
		w.dav("DELETE", dir+f, "", "", deleteStatus)
	}
	w.dav("PROPFIND", davURL, "0", "", 207)
	w.dav("DELETE", strings.TrimSuffix(dir, "/"), "", "", 204, 301)
	w.dav("PROPFIND", dir, "0", "", 404)
}

// TestPerlLibraries runs a client written in Perl with the libraries the
// original clients used (LWP, HTTP::DAV 0.49, XML::Simple) against the
// server: the credentials in the URL, the DAV URL handed back and the XML
// answers must work for them as they are. Skipped where Perl lacks them
// (Debian: libwww-perl libhttp-dav-perl libxml-simple-perl).
func TestPerlLibraries(t *testing.T) {
	if err := exec.Command("perl", "-MLWP::UserAgent", "-MHTTP::DAV", "-MXML::Simple", "-e", "1").Run(); err != nil {
		t.Skip("perl with LWP, HTTP::DAV and XML::Simple is not installed")
	}
	w := newWorld(t)
	in := t.TempDir()
	args := []string{"testdata/perlclient.pl", "submit", strings.TrimSuffix(w.cgiURL("toni", ""), "/"), "metabeta", "G1", "P1", "2"}
	for p, c := range inputs {
		write(t, filepath.Join(in, p), c, 0o644)
		args = append(args, p+"="+filepath.Join(in, p))
	}
	perl := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("perl", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("perl %v: %v\n%s", args[1:], err, out)
		}
		return string(out)
	}
	wu := firstWU(t, perl(args...))
	if !strings.HasPrefix(wu, "P1-TONI_G1-0-2-RND") {
		t.Fatalf("submitted %s", wu)
	}
	wu = w.advance(w.advance(wu))
	into := t.TempDir()
	out := perl("testdata/perlclient.pl", "retrieve", strings.TrimSuffix(w.cgiURL("toni", ""), "/"), "G1", "P1", into)
	if !strings.Contains(out, "Successfully retrieved 16.\nRemoved 16 server files, 0 were too recent") {
		t.Fatalf("retrieve printed:\n%s", out)
	}
	got, _ := filepath.Glob(filepath.Join(into, "*"))
	if len(got) != 16 {
		t.Fatalf("%d files retrieved: %v", len(got), got)
	}
	b, err := os.ReadFile(filepath.Join(into, strings.Replace(wu, "-2-2-", "-1-2-", 1)+"_1.coor"))
	if err != nil || !strings.HasPrefix(string(b), "output P1-TONI_G1-1-2-RND") {
		t.Fatalf("step 1 coordinates: %q %v", b, err)
	}
	if res, err := w.e.Results(w.ctx, mustUser(t, w, "toni"), "G1", "P1"); err != nil || len(res.Files) != 0 {
		t.Fatalf("results left on the server: %+v %v", res.Files, err)
	}
	if ents, _ := os.ReadDir(w.e.DAVRoot(mustUser(t, w, "toni"))); len(ents) != 0 {
		t.Fatalf("the client left collections behind: %v", ents)
	}
}

func mustUser(t *testing.T, w *world, name string) store.User {
	t.Helper()
	u, err := w.db.UserByToken(w.ctx, server.HashToken(w.tokens[name]))
	if err != nil {
		t.Fatal(err)
	}
	return u
}
