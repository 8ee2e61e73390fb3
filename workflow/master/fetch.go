package master

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// fetch waits up to wait for the events of the master's own work units
// after m.next and returns them, the files of their results downloaded.
// The events of the user's other work units (other tags: other masters,
// rboinc-submit, the GAHP) are passed over: their results are not the
// master's to take.
func (m *Master) fetch(ctx context.Context, wait time.Duration) ([]*Event, error) {
	m.mu.Lock()
	after := m.next
	m.mu.Unlock()
	deadline := time.Now().Add(wait)
	var evs []*Event
	for {
		t0 := time.Now()
		r, err := m.c.Events(ctx, after, wait)
		if err != nil {
			return nil, fmt.Errorf("reading the server's events: %w", err)
		}
		t1 := time.Now()
		var groups []string
		seen := map[string]bool{}
		for _, w := range r.Events {
			if !m.owns(w.Group) {
				continue
			}
			e := toEvent(w)
			evs = append(evs, e)
			if e.Type == EventResult && !seen[e.Tag] {
				seen[e.Tag] = true
				groups = append(groups, e.Tag)
			}
		}
		for _, g := range groups {
			if err := m.download(ctx, g, evs); err != nil {
				return nil, err
			}
		}
		slog.Debug("master: events read", "events", len(r.Events), "own", len(evs), "feed", t1.Sub(t0), "downloads", time.Since(t1))
		if len(r.Events) > 0 {
			after = r.Events[len(r.Events)-1].ID
			m.mu.Lock()
			m.next = after
			m.mu.Unlock()
		}
		wait = time.Until(deadline)
		if len(evs) > 0 || len(r.Events) == 0 || wait <= 0 {
			return evs, nil
		}
	}
}

// download fetches the waiting result files of group (those not on disk
// yet), verified and durable, keeping the server's copies, and gives the
// result events of the group their files.
func (m *Master) download(ctx context.Context, group string, evs []*Event) error {
	dir := m.resultDir(group)
	t0 := time.Now()
	_, err := m.c.Retrieve(ctx, client.RetrieveInput{Group: group, Dir: dir, Tree: true, Keep: true, Consumer: wire.ConsumerMaster})
	if isNotFound(err) {
		return nil // purged meanwhile: nothing to deliver
	}
	if err != nil {
		return fmt.Errorf("downloading the results of tag %s: %w", group, err)
	}
	slog.Debug("master: retrieved", "group", group, "took", time.Since(t0))
	list, err := m.c.ResultsFor(ctx, wire.ConsumerMaster, group, "")
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing the results of tag %s: %w", group, err)
	}
	type key struct {
		chain string
		step  int
	}
	files := map[key][]File{}
	for _, rf := range list.Files {
		k := key{rf.Chain, rf.Step}
		files[k] = append(files[k], resultFile(dir, rf))
	}
	for _, e := range evs {
		if e.Type == EventResult && e.Tag == group {
			e.Result.Files = files[key{e.Name, e.Step}]
		}
	}
	return nil
}
