package report

import (
	"context"
	"embed"
	htmltemplate "html/template"
	"io"
	"regexp"
	"sort"
	"strings"
	"text/template"
	"time"

	"github.com/rboinc/rboinc/internal/query"
	"github.com/rboinc/rboinc/internal/stats"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/words"
)

// LateShown is how many late steps a report lists.
const LateShown = 50

// Report is one report's figures.
type Report struct {
	// User is the user reported on; "" for the whole server.
	User      string
	Generated time.Time
	F         stats.Figures
	Failures  []Failure // by count, the most first
	Late      []store.LateStepRow
	Disk      []Disk // per user
	Pool      int64  // bytes in the pool (the whole server's report)
	Results   int64  // bytes of results waiting (the whole server's report)
}

// Failure is how many failed chains share one reason, told apart from the
// work units they name.
type Failure struct {
	Reason string
	Chains int
}

// Disk is what one user's chains hold on disk.
type Disk struct {
	User          string
	Results, Pool int64
}

// Build reads a report: of user u, or with u nil of every user.
func Build(ctx context.Context, db *query.Reader, u *store.User, now time.Time) (Report, error) {
	r := Report{Generated: now}
	var uid int64
	if u != nil {
		r.User, uid = u.Name, u.ID
	}
	var err error
	if r.F, err = stats.Load(ctx, db, uid, "", now); err != nil {
		return r, err
	}
	reasons, err := db.FailureReasons(ctx, uid)
	if err != nil {
		return r, err
	}
	r.Failures = FailuresByReason(reasons)
	if r.Late, err = db.LateStepsOf(ctx, uid, LateShown); err != nil {
		return r, err
	}
	users := []store.User{}
	if u != nil {
		users = append(users, *u)
	} else if users, err = db.Users(ctx); err != nil {
		return r, err
	}
	for _, x := range users {
		res, pool, err := db.DiskOf(ctx, x.ID)
		if err != nil {
			return r, err
		}
		r.Disk = append(r.Disk, Disk{User: x.Name, Results: res, Pool: pool})
	}
	if u == nil {
		t, err := db.ServerTotals(ctx)
		if err != nil {
			return r, err
		}
		r.Pool, r.Results = t.PoolBytes, t.ResultBytes
	}
	return r, nil
}

// wuName matches rboinc's work-unit names (NAME-USER_GROUP-STEP-N-RNDtag
// and its retries), which make every chain's reason different.
var wuName = regexp.MustCompile(`\b[A-Za-z0-9_]+-[A-Z0-9]+_[A-Za-z0-9_]+-\d+-\d+-RND\d+(?:-r\d+)?\b`)

// attemptOf is the "(attempt 3 of 3)" a reason ends with.
var attemptOf = regexp.MustCompile(`\(attempt \d+ of \d+\)`)

// Normalize makes reasons that differ only in the work unit comparable.
func Normalize(reason string) string {
	s := wuName.ReplaceAllString(reason, "<work unit>")
	s = attemptOf.ReplaceAllString(s, "(attempt N of N)")
	return strings.TrimSpace(s)
}

// FailuresByReason counts reasons, normalized, the most common first.
func FailuresByReason(reasons []string) []Failure {
	n := map[string]int{}
	for _, r := range reasons {
		n[Normalize(r)]++
	}
	out := make([]Failure, 0, len(n))
	for r, c := range n {
		out = append(out, Failure{r, c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Chains != out[j].Chains {
			return out[i].Chains > out[j].Chains
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}

// Subject is the mail subject of the report.
func (r Report) Subject() string {
	who := "all users"
	if r.User != "" {
		who = r.User
	}
	return "rboinc report for " + who + ", " + r.Generated.UTC().Format("2006-01-02")
}

//go:embed templates
var tmplFS embed.FS

var funcs = map[string]any{
	"when":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"unix":  func(s int64) string { return time.Unix(s, 0).UTC().Format("2006-01-02 15:04 UTC") },
	"span":  stats.Span,
	"bytes": words.Bytes,
	"pct":   func(f float64) string { return strconvF(f) },
	"bar":   bar,
	"pad":   func(n int, s string) string { return s + strings.Repeat(" ", max(0, n-len([]rune(s)))) },
	"maxOf": maxOf,
	"f1":    func(f float64) string { return strconvF(f) },
}

var (
	textT = template.Must(template.New("report.txt").Funcs(funcs).ParseFS(tmplFS, "templates/report.txt"))
	htmlT = htmltemplate.Must(htmltemplate.New("report.html").Funcs(funcs).ParseFS(tmplFS, "templates/report.html"))
)

// Text writes the report as plain text.
func (r Report) Text(w io.Writer) error { return textT.Execute(w, r) }

// HTML writes the report as an HTML page (for mail: styles inline, no
// script, no outside resource).
func (r Report) HTML(w io.Writer) error { return htmlT.Execute(w, r) }
