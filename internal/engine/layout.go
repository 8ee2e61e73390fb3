package engine

import (
	"encoding/json"
	"sync"

	"github.com/rboinc/rboinc/internal/templates"
)

// Layout is the snapshot of a queue's inputs and outputs taken when a chain
// is submitted: the hook and retrieval follow it even if the templates
// change later.
type Layout struct {
	Inputs  []LayoutInput  `json:"inputs"`
	Outputs []LayoutOutput `json:"outputs"`
}

// LayoutInput is one input position.
type LayoutInput struct {
	Slot     int    `json:"slot"`
	OpenName string `json:"open_name"`
	Constant bool   `json:"constant,omitempty"`
}

// LayoutOutput is one output file.
type LayoutOutput struct {
	Index    int      `json:"index"`
	OpenName string   `json:"open_name"`
	Aliases  []string `json:"aliases,omitempty"`
	ChainPos int      `json:"chain_pos"` // input position it feeds; -1 for none
	Optional bool     `json:"optional,omitempty"`
}

func layoutOf(q *templates.Queue) Layout {
	var l Layout
	for _, in := range q.Inputs {
		l.Inputs = append(l.Inputs, LayoutInput{Slot: in.Slot, OpenName: in.OpenName, Constant: in.Constant})
	}
	for _, o := range q.Outputs {
		pos := -1
		if o.Chain >= 0 {
			if in, ok := q.InputBySlot(o.Chain); ok {
				pos = in.Position
			}
		}
		l.Outputs = append(l.Outputs, LayoutOutput{Index: o.Index, OpenName: o.OpenName, Aliases: o.Aliases, ChainPos: pos, Optional: o.Optional})
	}
	return l
}

func parseLayout(s string) (Layout, error) {
	var l Layout
	err := json.Unmarshal([]byte(s), &l)
	return l, err
}

func (l Layout) output(index int) (LayoutOutput, bool) {
	for _, o := range l.Outputs {
		if o.Index == index {
			return o, true
		}
	}
	return LayoutOutput{}, false
}

// layoutCache keeps the layouts parsed from chains' stored JSON, by that
// JSON: the chains of a queue share one, and a batch of hundreds of records
// parsed the same document each time. A cached Layout is shared: its users
// only read it.
type layoutCache struct {
	mu     sync.Mutex
	parsed map[string]Layout
}

// layoutCacheMax bounds the cache; past it, it starts again.
const layoutCacheMax = 256

// parse is parseLayout(s), once per document.
func (c *layoutCache) parse(s string) (Layout, error) {
	c.mu.Lock()
	l, ok := c.parsed[s]
	c.mu.Unlock()
	if ok {
		return l, nil
	}
	l, err := parseLayout(s)
	if err != nil {
		return l, err
	}
	c.mu.Lock()
	if c.parsed == nil || len(c.parsed) >= layoutCacheMax {
		c.parsed = map[string]Layout{}
	}
	c.parsed[s] = l
	c.mu.Unlock()
	return l, nil
}
