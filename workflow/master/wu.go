package master

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/rboinc/rboinc/internal/words"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// WU is a work unit: a chain of Steps steps of a queue, named Name within
// its Tag (the chain's group).
type WU struct {
	Queue string
	Name  string
	Tag   string
	// Inputs are local files by parameter name (without the dash), e.g.
	// "coor_file": "start.coor"; only contents the server lacks are sent.
	Inputs map[string]string
	// Steps is the chain's length (0 means 1).
	Steps int
	// Options are the other submission options (priority, batch,
	// attempts...); Options.NumSteps is set from Steps.
	Options wire.Options

	// Set by Submit.
	ID    string // the BOINC work unit of the first step
	State State
}

// NewWU makes a work unit of queue with the master's tag and one step.
func (m *Master) NewWU(queue, name string, inputs map[string]string) *WU {
	return &WU{Queue: queue, Name: name, Tag: m.tag, Inputs: maps.Clone(inputs), Steps: 1, State: StateReady}
}

// batchKey groups work units one submit request can carry: same queue,
// tag and options (compared by their JSON: Options holds pointers and
// slices).
type batchKey struct {
	queue, tag, opts string
}

// Submit sends the work units: one submit request for all those that share
// queue, tag and options (uploads as rboinc-submit makes them: each
// distinct content once, only those the server lacks). A work unit the
// server already has from an identical submission (a master submitting
// again after a crash) counts as submitted. On error none of the work
// units of the failed request were made.
func (m *Master) Submit(ctx context.Context, wus ...*WU) error {
	var order []batchKey
	batches := map[batchKey][]*WU{}
	opts := map[batchKey]wire.Options{}
	for _, wu := range wus {
		o := wu.Options
		o.NumSteps = max(wu.Steps, 1)
		j, err := json.Marshal(o)
		if err != nil {
			return fmt.Errorf("work unit %s: its options: %w", wu.Name, err)
		}
		k := batchKey{wu.Queue, wu.Tag, string(j)}
		if k.tag == "" {
			k.tag = m.tag
		}
		if _, ok := batches[k]; !ok {
			order = append(order, k)
			opts[k] = o
		}
		batches[k] = append(batches[k], wu)
	}
	for _, k := range order {
		if err := m.claim(k.tag); err != nil {
			return err
		}
		if err := m.submitBatch(ctx, k, opts[k], batches[k]); err != nil {
			return err
		}
	}
	return nil
}

func (m *Master) submitBatch(ctx context.Context, k batchKey, o wire.Options, wus []*WU) error {
	q, err := m.c.Queue(ctx, k.queue)
	if err != nil {
		return fmt.Errorf("looking up queue %s: %w", k.queue, err)
	}
	known := map[string]bool{}
	for _, p := range q.Parameters {
		known[p.Name] = true
	}
	jobs := make([]client.Job, len(wus))
	for i, wu := range wus {
		for p := range wu.Inputs {
			if !known[p] {
				return fmt.Errorf("work unit %s: %s is not a parameter of queue %s", wu.Name, p, k.queue)
			}
		}
		jobs[i] = client.Job{Name: wu.Name, Files: wu.Inputs, Line: i + 1}
	}
	chains, err := client.BuildChains(q, nil, jobs)
	if err != nil {
		return fmt.Errorf("work units of queue %s: %w", k.queue, err)
	}
	rep, err := m.c.SubmitChains(ctx, client.SubmitInput{Queue: k.queue, Group: k.tag, Options: o, Chains: chains, Consumer: wire.ConsumerMaster})
	if err != nil {
		return fmt.Errorf("submitting %s of queue %s: %w", words.Count(len(wus), "work unit", "work units"), k.queue, err)
	}
	ids := map[string]string{}
	for _, c := range rep.Chains {
		ids[c.Name] = c.FirstWU
	}
	for _, wu := range wus {
		wu.Tag = k.tag
		wu.ID = ids[wu.Name]
		wu.State = StateRunning
	}
	return nil
}
