package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rboinc/rboinc/workflow/master"
)

// record is one work unit that came back.
type record struct {
	Name   string  `json:"name"`
	Failed bool    `json:"failed,omitempty"`
	Energy float64 `json:"energy,omitempty"`
	Coor   string  `json:"coor,omitempty"`
	Vel    string  `json:"vel,omitempty"`
}

// progress is the master's own state, kept in the state file with each
// acknowledgement: what it submitted and what came back.
type progress struct {
	Submitted int      `json:"submitted"`
	Back      []record `json:"back"`
	Best      int      `json:"best"` // index in Back, -1 for none
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	c, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	m, err := master.Connect(ctx, c.url, c.token, master.Options{CAFile: c.caFile, Tag: c.tag,
		Dir: filepath.Join(c.dir, "results"), StateFile: filepath.Join(c.dir, "master.state")})
	if err != nil {
		return err
	}
	p := progress{Best: -1}
	if _, err := m.Data(&p); err != nil {
		return err
	}
	if p.Submitted == 0 {
		// The first work units, all in one request. Should the master
		// die before saving, it submits the same again, which the server
		// recognises.
		var wus []*master.WU
		for ; p.Submitted < min(c.inflight, c.target); p.Submitted++ {
			conf, err := seedFile(c.dir, p.Submitted)
			if err != nil {
				return err
			}
			wus = append(wus, m.NewWU("langevin", name(p.Submitted), map[string]string{"coor_file": c.coor, "vel_file": c.vel, "conf_file": conf}))
		}
		if err := m.Submit(ctx, wus...); err != nil {
			return err
		}
		if err := m.SetData(p); err != nil {
			return err
		}
		if err := m.Save(); err != nil {
			return err
		}
	}
	for len(p.Back) < c.target {
		_, err := m.Process(ctx, 30*time.Second, func(e *master.Event) error {
			return p.handle(ctx, m, c, e, stdout)
		})
		if err != nil {
			return err
		}
	}
	if p.Best >= 0 {
		b := p.Back[p.Best]
		fmt.Fprintf(stdout, "done: %d work units came back; the lowest energy %.6f is %s's (%s)\n", len(p.Back), b.Energy, b.Name, b.Coor)
	} else {
		fmt.Fprintf(stdout, "done: %d work units came back, all failed\n", len(p.Back))
	}
	return nil
}

// seedFile writes the n-th work unit's run configuration: its own random
// seed, so that work units starting from the same point explore
// differently. The same n gives the same file, so that a submission
// repeated after a crash is the same submission.
func seedFile(dir string, n int) (string, error) {
	p := filepath.Join(dir, "conf", name(n)+".conf")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(p, []byte(fmt.Sprintf("seed %d\n", n+1)), 0o644); err != nil {
		return "", fmt.Errorf("writing a work unit's configuration: %w", err)
	}
	return p, nil
}

// name is the n-th work unit's name: the same on a second try, so that a
// submission repeated after a crash is recognised by the server.
func name(n int) string { return fmt.Sprintf("w%05d", n) }

// handle takes one event into account: a result or a failure frees a
// place, filled by a new work unit starting from the best result so far.
func (p *progress) handle(ctx context.Context, m *master.Master, c config, e *master.Event, out io.Writer) error {
	var r record
	switch e.Type {
	case master.EventResult:
		coor, vel := e.Result.Alias(".coor"), e.Result.Alias(".vel")
		energy, err := potential(coor)
		if err != nil {
			return err
		}
		r = record{Name: e.Name, Energy: energy, Coor: coor, Vel: vel}
		fmt.Fprintf(out, "result %d %s energy %.6f\n", e.ID, e.Name, energy)
	case master.EventFailure:
		r = record{Name: e.Name, Failed: true}
		fmt.Fprintf(out, "failure %d %s: %s\n", e.ID, e.Name, e.Reason)
	default:
		return nil
	}
	p.Back = append(p.Back, r)
	if !r.Failed && (p.Best < 0 || r.Energy < p.Back[p.Best].Energy) {
		p.Best = len(p.Back) - 1
	}
	if p.Submitted < c.target {
		conf, err := seedFile(c.dir, p.Submitted)
		if err != nil {
			return err
		}
		in := map[string]string{"coor_file": c.coor, "vel_file": c.vel, "conf_file": conf}
		if p.Best >= 0 {
			in["coor_file"], in["vel_file"] = p.Back[p.Best].Coor, p.Back[p.Best].Vel
		}
		if err := m.Submit(ctx, m.NewWU("langevin", name(p.Submitted), in)); err != nil {
			return err
		}
		p.Submitted++
	}
	// Kept with this event's acknowledgement, in one write.
	return m.SetData(p)
}
