package standin

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestVolunteerAssignedWork: assigned jobs run as on a real project. The
// volunteer is BOINC user 1 on host 1, in no team; targeted jobs go only
// once config.xml has <enable_assignment> and broadcast jobs once it has
// <enable_assignment_multi>, both read while the volunteer runs (no
// restart); their results are named <wu>_<pid>_<time>_<seq> as BOINC's
// scheduler names them, and the hook gets outputs named after those; jobs
// for another user, host or team are never run.
func TestVolunteerAssignedWork(t *testing.T) {
	// Waits mostly on its processes (create_work, the hook): beside the
	// others that do.
	t.Parallel()
	tp := setupCompute(t)
	jobs := map[string][]string{
		"plain":    nil,
		"to_user1": {"--target_user", "1"},
		"to_host1": {"--target_host", "1"},
		"to_user7": {"--target_user", "7"},
		"to_host2": {"--target_host", "2"},
		"to_team3": {"--target_team", "3"},
		"bc_all":   {"--broadcast"},
		"bc_user1": {"--broadcast_user", "1"},
		"bc_user7": {"--broadcast_user", "7"},
	}
	for wu, extra := range jobs {
		tp.stage(wu+".coor", wu+"\n")
		tp.stage(wu+".psf", "topology\n")
		args := append([]string{"--appname", "rbtest", "--wu_name", wu}, extra...)
		if _, errs, code := tp.createWork("", "", append(args, wu+".coor", wu+".psf")...); code != 0 {
			t.Fatalf("%s: %s", wu, errs)
		}
	}
	start := time.Now().Unix()
	tp.startVolunteer()
	done := func(wus ...string) func() bool {
		return func() bool {
			for _, wu := range wus {
				if tp.count(`SELECT count(*) FROM workunit WHERE name = ? AND assimilate_state = 2`, wu) != 1 {
					return false
				}
			}
			return true
		}
	}
	results := func(wu string) []string {
		rows, err := tp.db().Query(`SELECT r.name FROM result r JOIN workunit w ON w.id = r.workunitid WHERE w.name = ?`, wu)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var names []string
		for rows.Next() {
			var n string
			rows.Scan(&n)
			names = append(names, n)
		}
		return names
	}
	noneSent := func(when string, wus ...string) {
		t.Helper()
		for _, wu := range wus {
			if r := results(wu); len(r) != 0 {
				t.Errorf("%s: %s was sent: %v", when, wu, r)
			}
		}
	}

	tp.waitFor("the ordinary job", done("plain"))
	time.Sleep(200 * time.Millisecond) // passes enough for the scheduler to send what it would
	if r := results("plain"); len(r) != 1 || r[0] != "plain_0" {
		t.Fatalf("the ordinary job's results: %v", r)
	}
	noneSent("assignment off", "to_user1", "to_host1", "to_user7", "to_host2", "to_team3", "bc_all", "bc_user1", "bc_user7")

	switchOn := func(tag string) {
		cfg := strings.Replace(tp.read("config.xml"), "<config>", "<config>\n    <"+tag+">1</"+tag+">", 1)
		tp.write("config.xml", cfg, 0o644)
	}
	assigned := regexp.MustCompile(`^(.+)_([0-9]+)_([0-9]+)_([0-9]+)$`)
	checkNamed := func(wu string) {
		t.Helper()
		r := results(wu)
		if len(r) != 1 {
			t.Fatalf("%s: results %v, want one", wu, r)
		}
		m := assigned.FindStringSubmatch(r[0])
		if m == nil || m[1] != wu || m[2] != strconv.Itoa(os.Getpid()) {
			t.Fatalf("%s: result %q is not named <wu>_<pid>_<time>_<seq>", wu, r[0])
		}
		if ts, _ := strconv.ParseInt(m[3], 10, 64); ts < start || ts > time.Now().Unix() {
			t.Fatalf("%s: result %q: time %s", wu, r[0], m[3])
		}
		// The hook got the outputs under that result's name.
		if !regexp.MustCompile(`/` + regexp.QuoteMeta(r[0]) + `_r[0-9]+_0 `).MatchString(tp.read("hook.log")) {
			t.Fatalf("%s: no hook call with outputs of %s in\n%s", wu, r[0], tp.read("hook.log"))
		}
	}

	switchOn("enable_assignment")
	tp.waitFor("the jobs targeted at the volunteer", done("to_user1", "to_host1"))
	checkNamed("to_user1")
	checkNamed("to_host1")
	time.Sleep(200 * time.Millisecond)
	noneSent("broadcast off", "bc_all", "bc_user1", "bc_user7")

	switchOn("enable_assignment_multi")
	tp.waitFor("the broadcast jobs", done("bc_all", "bc_user1"))
	checkNamed("bc_all")
	checkNamed("bc_user1")
	time.Sleep(200 * time.Millisecond)
	noneSent("another target", "to_user7", "to_host2", "to_team3", "bc_user7")
	if got := strings.Count(tp.read("hook.log"), "\n"); got != 5 {
		t.Errorf("%d hook calls, want 5:\n%s", got, tp.read("hook.log"))
	}
	// Every seq differs: one scheduler, one counter.
	seqs := map[string]bool{}
	for _, wu := range []string{"to_user1", "to_host1", "bc_all", "bc_user1"} {
		seqs[assigned.FindStringSubmatch(results(wu)[0])[4]] = true
	}
	if len(seqs) != 4 {
		t.Errorf("result sequence numbers repeat: %v", seqs)
	}
}
