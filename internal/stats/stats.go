package stats

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/rboinc/rboinc/internal/query"
	"github.com/rboinc/rboinc/internal/store"
)

// Window is how far back finished steps are read: the turnaround
// histogram and the rates behind the ETA look at these.
const Window = 7 * 24 * time.Hour

// RateWindow is how far back the finishing rate of a group is measured.
const RateWindow = 6 * time.Hour

// Hours is how many hours the steps-per-hour chart shows.
const Hours = 24

// FailedShown is how many failed chains a summary lists (the latest).
const FailedShown = 100

// Bin is one bar of a histogram.
type Bin struct {
	Label string
	Count int
}

// StateCount is how many chains are in one state.
type StateCount struct {
	State  string
	Chains int
}

// Group is one group's figures.
type Group struct {
	User      string
	Name      string
	Chains    int
	States    []StateCount
	StepsDone int
	Steps     int
	Remaining int     // steps left in running chains
	Rate      float64 // steps finished per hour lately (RateWindow)
	ETA       time.Duration
	HasETA    bool // a rate is known and steps remain
}

// Percent is the group's progress, 0..100.
func (g Group) Percent() float64 {
	if g.Steps == 0 {
		return 0
	}
	return 100 * float64(g.StepsDone) / float64(g.Steps)
}

// Figures are the figures of one user (or every user).
type Figures struct {
	Now         time.Time
	Groups      []Group
	States      []StateCount // over all groups
	Chains      int
	StepsDone   int
	Steps       int
	Turnaround  []Bin // TurnaroundEdges: len+1 bins
	PerHour     []Bin // Hours bins, oldest first
	Failed      []store.FailedChain
	FailedTotal int
}

// TurnaroundEdges bound the bins of the turnaround histogram: a step's
// time from its creation to its assimilation.
var TurnaroundEdges = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 3 * time.Hour, 12 * time.Hour, 24 * time.Hour, 72 * time.Hour}

// Load reads the figures of a user (userID 0: every user's), or of one
// of their groups, at now.
func Load(ctx context.Context, db *query.Reader, userID int64, group string, now time.Time) (Figures, error) {
	counts, err := db.GroupCounts(ctx, userID)
	if err != nil {
		return Figures{}, err
	}
	if group != "" {
		counts = slices.DeleteFunc(counts, func(c store.GroupCount) bool { return c.Group != group })
	}
	edges := make([]int64, len(TurnaroundEdges))
	for i, e := range TurnaroundEdges {
		edges[i] = int64(e / time.Second)
	}
	sc, err := db.CountSteps(ctx, userID, group, now.Add(-Window).Unix(), now.Unix(), edges, Hours, now.Add(-RateWindow).Unix())
	if err != nil {
		return Figures{}, err
	}
	f := Compute(counts, sc, now)
	if group == "" {
		if f.Failed, f.FailedTotal, err = db.FailedChains(ctx, userID, FailedShown); err != nil {
			return Figures{}, err
		}
	}
	return f, nil
}

// Compute makes the figures from the database's counts (pure, for tests).
func Compute(counts []store.GroupCount, sc store.StepCounts, now time.Time) Figures {
	f := Figures{Now: now}
	byKey := map[[2]string]*Group{}
	var order [][2]string
	all := map[string]int{}
	for _, c := range counts {
		k := [2]string{c.User, c.Group}
		g := byKey[k]
		if g == nil {
			g = &Group{User: c.User, Name: c.Group}
			byKey[k] = g
			order = append(order, k)
		}
		g.Chains += c.Chains
		g.StepsDone += c.StepsDone
		g.Steps += c.Steps
		g.States = append(g.States, StateCount{c.State, c.Chains})
		if c.State == "running" {
			g.Remaining += c.Steps - c.StepsDone
		}
		all[c.State] += c.Chains
		f.Chains += c.Chains
		f.StepsDone += c.StepsDone
		f.Steps += c.Steps
	}
	for _, k := range order {
		g := byKey[k]
		sortStates(g.States)
		// The rate of a group: its steps finished within RateWindow, over
		// the time since the first of them was created (a group started
		// ten minutes ago is not measured over six hours). With every
		// user's figures, groups of one name share it: a rough ETA.
		if r, ok := sc.Rates[g.Name]; ok && r.N > 0 {
			span := max(float64(now.Unix()-r.Start), 60) / 3600
			g.Rate = float64(r.N) / span
			if g.Remaining > 0 && g.Rate > 0 {
				g.ETA = time.Duration(float64(g.Remaining) / g.Rate * float64(time.Hour)).Round(time.Minute)
				g.HasETA = true
			}
		}
		f.Groups = append(f.Groups, *g)
	}
	for s, n := range all {
		f.States = append(f.States, StateCount{s, n})
	}
	sortStates(f.States)
	f.Turnaround = make([]Bin, len(TurnaroundEdges)+1)
	for i := range f.Turnaround {
		switch {
		case i == 0:
			f.Turnaround[i].Label = "<" + Short(TurnaroundEdges[0])
		case i == len(TurnaroundEdges):
			f.Turnaround[i].Label = "≥" + Short(TurnaroundEdges[i-1])
		default:
			f.Turnaround[i].Label = Short(TurnaroundEdges[i-1]) + "–" + Short(TurnaroundEdges[i])
		}
		if i < len(sc.Turnaround) {
			f.Turnaround[i].Count = sc.Turnaround[i]
		}
	}
	f.PerHour = make([]Bin, len(sc.PerHour))
	for i := range f.PerHour {
		ago := len(sc.PerHour) - 1 - i
		f.PerHour[i] = Bin{Label: now.Add(-time.Duration(ago) * time.Hour).UTC().Format("15h"), Count: sc.PerHour[ago]}
	}
	return f
}

// stateOrder is the order states are shown in.
var stateOrder = []string{"running", "queued", "done", "failed", "stopped", "aborted"}

func sortStates(s []StateCount) {
	rank := func(st string) int {
		if i := slices.Index(stateOrder, st); i >= 0 {
			return i
		}
		return len(stateOrder)
	}
	sort.SliceStable(s, func(i, j int) bool {
		if a, b := rank(s[i].State), rank(s[j].State); a != b {
			return a < b
		}
		return s[i].State < s[j].State
	})
}

// Short writes a duration briefly: 90s, 5m, 3h, 2d.
func Short(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// Span writes a duration for people: "3h 20m", "2d 4h", "45s".
func Span(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm %ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd %dh", int(d.Hours()/24), int(d.Hours())%24)
}
