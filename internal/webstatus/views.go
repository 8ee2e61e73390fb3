package webstatus

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/stats"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// groupView is a group's line of the overview.
type groupView struct {
	stats.Group
	Link string
}

type overviewData struct {
	Page
	F          stats.Figures
	Groups     []groupView
	Turnaround Chart
	PerHour    Chart
	Admin      *adminData
}

func (h *Handler) overview(w http.ResponseWriter, r *http.Request, u store.User) {
	f, err := stats.Load(r.Context(), h.E.Query(), u.ID, "", h.now())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := overviewData{Page: h.frame(u, "rboinc status of "+u.Name), F: f}
	for _, g := range f.Groups {
		d.Groups = append(d.Groups, groupView{g, link(h.base, g.Name)})
	}
	d.Turnaround = barChart("turnaround", "Step turnaround (created to assimilated, last 7 days)", f.Turnaround, 1, "steps")
	d.PerHour = barChart("perhour", "Steps finished per hour (last 24 hours, UTC)", f.PerHour, 3, "steps")
	if u.Admin {
		a, err := h.adminData(r)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		d.Admin = &a
	}
	h.render(w, r, "overview", d)
}

type groupData struct {
	Page
	G      stats.Group
	Chains []chainLine
	// BoincNote says why the running chains do not say where their steps
	// are in BOINC (its database unreadable).
	BoincNote string
}

type chainLine struct {
	store.ChainRow
	Link  string
	Where string // where a running chain's step is in BOINC
}

func (h *Handler) group(w http.ResponseWriter, r *http.Request, u store.User) {
	group := r.PathValue("group")
	if badNames(group) {
		h.errorPage(w, http.StatusNotFound, "no such group")
		return
	}
	rows, err := h.E.Query().GroupChains(r.Context(), u.ID, group)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if len(rows) == 0 {
		h.errorPage(w, http.StatusNotFound, "You have no group "+group+".")
		return
	}
	f, err := stats.Load(r.Context(), h.E.Query(), u.ID, group, h.now())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := groupData{Page: h.frame(u, "Group "+group)}
	for _, g := range f.Groups {
		if g.Name == group {
			d.G = g
		}
	}
	where, note := h.whereInBoinc(r, u, group, "")
	d.BoincNote = note
	for _, c := range rows {
		d.Chains = append(d.Chains, chainLine{c, link(h.base, group, c.Name), where[c.Name]})
	}
	h.render(w, r, "group", d)
}

type chainData struct {
	Page
	C         store.Chain
	GroupLink string
	Steps     []store.StepRow
	Attempts  []store.Attempt
	Files     []fileLink
	// Where the current step is in BOINC, or BoincNote why not known.
	Where, BoincNote string
}

type fileLink struct {
	Name string
	Step int
	Size int64
	Href string
}

func (h *Handler) chain(w http.ResponseWriter, r *http.Request, u store.User) {
	group, name := r.PathValue("group"), r.PathValue("name")
	if badNames(group, name) {
		h.errorPage(w, http.StatusNotFound, "no such chain")
		return
	}
	cs, err := h.E.Query().Chains(r.Context(), u.ID, group, name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if len(cs) == 0 {
		h.errorPage(w, http.StatusNotFound, "You have no chain "+name+" in group "+group+".")
		return
	}
	c := cs[0]
	steps, atts, err := h.E.Query().ChainSteps(r.Context(), c.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.E.Query().PendingResults(r.Context(), u.ID, group, name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := chainData{Page: h.frame(u, "Chain "+group+"/"+name), C: c, GroupLink: link(h.base, group), Steps: steps, Attempts: atts}
	if c.State == wire.StateRunning {
		where, note := h.whereInBoinc(r, u, group, name)
		d.Where, d.BoincNote = where[name], note
	}
	consumer := ""
	if c.Consumer != wire.ConsumerRetriever {
		// The server hands a result only to its consumer: a look in the
		// browser names it (nothing is acknowledged from here).
		consumer = "?consumer=" + url.QueryEscape(c.Consumer)
	}
	for _, p := range res {
		// The clients' own download (files API), under the same Basic
		// credentials: the browser sends them again.
		d.Files = append(d.Files, fileLink{Name: p.File, Step: p.Step, Size: p.Size,
			Href: h.base + wire.PathFiles + "/" + url.PathEscape(group) + "/" + url.PathEscape(p.File) + consumer})
	}
	h.render(w, r, "chain", d)
}

// adminData is what administrators see besides their own chains.
type adminData struct {
	Users    []userLine
	Queues   []wire.QueueSummary
	T        store.Totals
	Health   []Finding
	Problems int
}

type userLine struct {
	store.User
	Chains, StepsDone, Steps int
	States                   []stats.StateCount
}

func (h *Handler) adminData(r *http.Request) (adminData, error) {
	var a adminData
	ctx := r.Context()
	users, err := h.E.Query().Users(ctx)
	if err != nil {
		return a, err
	}
	counts, err := h.E.Query().GroupCounts(ctx, 0)
	if err != nil {
		return a, err
	}
	per := map[string]*userLine{}
	for _, u := range users {
		per[strings.ToUpper(u.Name)] = &userLine{User: u}
	}
	for _, c := range counts {
		l := per[c.User]
		if l == nil {
			continue
		}
		l.Chains += c.Chains
		l.StepsDone += c.StepsDone
		l.Steps += c.Steps
		found := false
		for i := range l.States {
			if l.States[i].State == c.State {
				l.States[i].Chains += c.Chains
				found = true
			}
		}
		if !found {
			l.States = append(l.States, stats.StateCount{State: c.State, Chains: c.Chains})
		}
	}
	for _, u := range users {
		l := per[strings.ToUpper(u.Name)]
		sort.Slice(l.States, func(i, j int) bool { return l.States[i].State < l.States[j].State })
		a.Users = append(a.Users, *l)
	}
	qs, errs := h.E.Queues.List()
	for _, err := range errs {
		h.Log.Warn("bad queue templates", "err", err)
	}
	for _, q := range qs {
		a.Queues = append(a.Queues, wire.QueueSummary{Name: q.Name, Application: q.Application, Description: q.Description})
	}
	if a.T, err = h.E.Query().ServerTotals(ctx); err != nil {
		return a, err
	}
	a.Health = h.healthFindings(r)
	for _, f := range a.Health {
		if f.Severity == "PROBLEM" {
			a.Problems++
		}
	}
	return a, nil
}

func (h *Handler) healthFindings(r *http.Request) []Finding {
	h.healthMu.Lock()
	defer h.healthMu.Unlock()
	if h.health != nil && time.Since(h.healthAt) < healthTTL {
		return h.health
	}
	switch {
	case h.Health != nil:
		h.health = h.Health(r.Context())
	case DefaultHealth != nil:
		h.health = DefaultHealth(r.Context(), h.E.Root)
	default:
		h.health = []Finding{{"note", "this program does not run the server's checks: run `rboinc-server doctor`"}}
	}
	h.healthAt = time.Now()
	return h.health
}
