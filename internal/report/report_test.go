package report

import (
	"bytes"
	"context"
	"fmt"
	"github.com/rboinc/rboinc/internal/query"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/store"
)

// fixture makes a state database with two users' chains in every state,
// done steps of known turnarounds, failures, a late step and results.
func fixture(t *testing.T, now time.Time) (*store.DB, store.User, store.User) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var users []store.User
	for _, name := range []string{"alice", "bob"} {
		if _, err := db.AddUser(ctx, name, "h-"+name); err != nil {
			t.Fatal(err)
		}
		u, _ := db.UserByName(ctx, name)
		users = append(users, u)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.SQL().Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Turnarounds of done steps, in seconds: some in every bin, one too
	// old for the 7-day window.
	turn := []int64{10, 30, 90, 400, 1000, 4000, 20000, 50000, 100000, 300000}
	for ui, u := range users {
		var ncs []store.NewChain
		for i := 0; i < 12; i++ {
			ncs = append(ncs, store.NewChain{Chain: store.Chain{Group: fmt.Sprintf("g%d", i%3), Name: fmt.Sprintf("c%d", i), Queue: "q", App: "a", NSteps: 4, Params: "{}", Layout: "{}"}})
		}
		cs, err := db.CreateChains(ctx, u, ncs)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cs {
			for s := 1; s < 4; s++ {
				exec(`INSERT INTO steps(chain_id, step, wu_name, state, created) VALUES (?, ?, ?, 'pending', ?)`, c.ID, s, c.WU(s), now.Unix())
			}
			done := i % 4 // steps done
			for s := 0; s < done; s++ {
				d := turn[(i+s+ui)%len(turn)]
				fin := now.Unix() - int64(3600*(i%30)) - int64(s*60)
				exec(`UPDATE steps SET state = 'done', created = ?, finished = ? WHERE chain_id = ? AND step = ?`, fin-d, fin, c.ID, s)
			}
			state := []string{"running", "done", "failed", "stopped"}[i%4]
			reason := ""
			if state == "failed" {
				reason = fmt.Sprintf("work unit %s failed in BOINC (error mask 2) (attempt %d of 3)", c.WU(done), 1+i%3)
				if i%8 == 6 {
					reason = "an output is missing"
				}
			}
			exec(`UPDATE chains SET state = ?, steps_done = ?, error = ? WHERE id = ?`, state, done, reason, c.ID)
			if state == "running" {
				exec(`UPDATE steps SET state = 'queued', late = ? WHERE chain_id = ? AND step = ?`, i%8/4, c.ID, done)
			}
			exec(`INSERT INTO results(chain_id, step, idx, file, md5, size) VALUES (?, 0, 0, ?, 'x', ?)`, c.ID, c.WU(0)+"_0", 1000*(i+1)+ui)
		}
	}
	return db, users[0], users[1]
}

// TestReportMatchesDatabase computes the report's figures again with SQL
// of its own and compares.
func TestReportMatchesDatabase(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 4, 6, 0, 0, 0, time.UTC)
	db, alice, _ := fixture(t, now)
	q := func(query string, args ...any) map[string]int {
		t.Helper()
		rows, err := db.SQL().Query(query, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[string]int{}
		for rows.Next() {
			var k string
			var n int
			rows.Scan(&k, &n)
			m[k] = n
		}
		return m
	}
	bins := `CASE WHEN d < 60 THEN '0' WHEN d < 300 THEN '1' WHEN d < 900 THEN '2' WHEN d < 3600 THEN '3' WHEN d < 10800 THEN '4'
		WHEN d < 43200 THEN '5' WHEN d < 86400 THEN '6' WHEN d < 259200 THEN '7' ELSE '8' END`
	for _, u := range []*store.User{&alice, nil} {
		who, cond := "all", "1"
		if u != nil {
			who, cond = u.Name, fmt.Sprintf("c.user_id = %d", u.ID)
		}
		t.Run(who, func(t *testing.T) {
			r, err := Build(ctx, query.New(db), u, now)
			if err != nil {
				t.Fatal(err)
			}
			states := q(`SELECT state, count(*) FROM chains c WHERE state != 'purged' AND ` + cond + ` GROUP BY state`)
			got := map[string]int{}
			for _, s := range r.F.States {
				got[s.State] = s.Chains
			}
			if fmt.Sprint(got) != fmt.Sprint(states) || len(states) != 4 {
				t.Errorf("chains by state %v, the database has %v", got, states)
			}
			failures := q(`SELECT CASE WHEN error LIKE 'work unit %' THEN 'wu' ELSE error END, count(*) FROM chains c WHERE state = 'failed' AND ` + cond + ` GROUP BY 1`)
			gotF := map[string]int{}
			for _, f := range r.Failures {
				k := f.Reason
				if strings.HasPrefix(k, "work unit <work unit> failed") {
					k = "wu"
				}
				gotF[k] += f.Chains
			}
			if fmt.Sprint(gotF) != fmt.Sprint(failures) || len(r.Failures) != 2 {
				t.Errorf("failures by reason %v (%d lines), the database has %v", gotF, len(r.Failures), failures)
			}
			turn := q(`SELECT `+bins+`, count(*) FROM (SELECT s.finished - s.created AS d FROM steps s JOIN chains c ON c.id = s.chain_id
				WHERE s.state = 'done' AND s.finished >= ? AND c.state != 'purged' AND `+cond+`) GROUP BY 1`, now.Add(-7*24*time.Hour).Unix())
			gotT := map[string]int{}
			for i, b := range r.F.Turnaround {
				if b.Count > 0 {
					gotT[fmt.Sprint(i)] = b.Count
				}
			}
			if fmt.Sprint(gotT) != fmt.Sprint(turn) || len(turn) < 5 {
				t.Errorf("turnaround histogram %v, the database has %v", gotT, turn)
			}
			late := q(`SELECT 'n', count(*) FROM steps s JOIN chains c ON c.id = s.chain_id WHERE s.late != 0 AND s.state = 'queued' AND c.state = 'running' AND ` + cond)
			if len(r.Late) != late["n"] || late["n"] == 0 {
				t.Errorf("%d late steps, the database has %d", len(r.Late), late["n"])
			}
			disk := q(`SELECT u.name, sum(r.size) FROM results r JOIN chains c ON c.id = r.chain_id JOIN users u ON u.id = c.user_id WHERE ` + cond + ` GROUP BY u.name`)
			gotD := map[string]int{}
			for _, d := range r.Disk {
				gotD[d.User] = int(d.Results)
			}
			if fmt.Sprint(gotD) != fmt.Sprint(disk) {
				t.Errorf("disk %v, the database has %v", gotD, disk)
			}
			// The text and the HTML say the same figures.
			var txt, html bytes.Buffer
			if err := r.Text(&txt); err != nil {
				t.Fatal(err)
			}
			if err := r.HTML(&html); err != nil {
				t.Fatal(err)
			}
			for s, n := range states {
				if !strings.Contains(txt.String(), fmt.Sprintf("  %-10s %d\n", s, n)) {
					t.Errorf("the text lacks %s %d:\n%s", s, n, txt.String())
				}
				if !strings.Contains(html.String(), fmt.Sprintf("<tr><td>%s</td><td align=\"right\">%d</td></tr>", s, n)) {
					t.Errorf("the HTML lacks %s %d", s, n)
				}
			}
			if !strings.Contains(txt.String(), fmt.Sprintf("Late steps (BOINC holds them past their deadline): %d\n", late["n"])) {
				t.Errorf("the text lacks the late steps:\n%s", txt.String())
			}
			if u == nil && !strings.Contains(txt.String(), "bob") || u != nil && strings.Contains(txt.String(), "bob") {
				t.Errorf("the report of %s and bob:\n%s", who, txt.String())
			}
		})
	}
}

// TestHTMLEscapes: reasons come from applications' stderr.
func TestHTMLEscapes(t *testing.T) {
	r := Report{User: "alice", Failures: []Failure{{Reason: `<script>alert(1)</script>`, Chains: 1}}}
	var b bytes.Buffer
	if err := r.HTML(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<script>") || !strings.Contains(b.String(), "&lt;script&gt;") {
		t.Fatalf("not escaped:\n%s", b.String())
	}
}

func FuzzNormalize(f *testing.F) {
	f.Add("work unit run1-ALICE_g1-0-3-RND1234 failed (attempt 2 of 3)")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if Normalize(n) != n {
			t.Fatalf("Normalize(%q) = %q, again %q", s, n, Normalize(n))
		}
	})
}
