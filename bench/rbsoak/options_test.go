package main

import (
	"strings"
	"testing"
)

// TestDBPool: the long run sizes MariaDB's buffer pool for its gigabytes,
// the short run keeps the test servers' default, and the flag wins over both.
func TestDBPool(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "2G"},
		{[]string{"-short"}, ""},
		{[]string{"-short", "-db-pool", "512M"}, "512M"},
		{[]string{"-db-pool", "4G"}, "4G"},
	} {
		o, err := parseOptions(append([]string{"-bin", "b", "-work", "w"}, c.args...))
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if o.dbPool != c.want {
			t.Errorf("%q: buffer pool %q, want %q", c.args, o.dbPool, c.want)
		}
	}
}

// TestResumedChains: a resumed run takes its options from the journal,
// grows by a larger -chains and stays grown at the next resume (its resume
// record), shrinks only by groups never submitted; what is of the life
// alone comes from the command line.
func TestResumedChains(t *testing.T) {
	first := rec{T: "options", Args: []string{"-bin", "b", "-work", "w", "-chains", "100", "-batch", "25"}}
	now := func(args ...string) options {
		o, err := parseOptions(append([]string{"-resume", "-work", "w"}, args...))
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	o, err := resumedOptions([]rec{first}, now())
	if err != nil || o.chains != 100 || o.batch != 25 || !o.resume {
		t.Fatalf("plain resume: chains %d, batch %d, resume %v, %v", o.chains, o.batch, o.resume, err)
	}
	if o, err = resumedOptions([]rec{first}, now("-chains", "150", "-kill-self-after", "1m")); err != nil || o.chains != 150 || o.killAfter == 0 {
		t.Fatalf("grown: chains %d, kill after %s, %v", o.chains, o.killAfter, err)
	}
	grown := []rec{first, {T: "resume"}, {T: "resume", Chains: 150}}
	if o, err = resumedOptions(grown, now()); err != nil || o.chains != 150 {
		t.Fatalf("the resume after the growth: chains %d, want 150 (%v)", o.chains, err)
	}
	// Shrunk back: only groups never submitted may go.
	if o, err = resumedOptions(append(grown, rec{T: "submitted", User: "u1", Group: "b00004"}), now("-chains", "125")); err != nil || o.chains != 125 {
		t.Fatalf("shrunk to 125 with groups 0 to 4 submitted: chains %d, %v", o.chains, err)
	}
	if _, err = resumedOptions(append(grown, rec{T: "submit", User: "u1", Group: "b00004"}), now("-chains", "100")); err == nil || !strings.Contains(err.Error(), "b00004") {
		t.Fatalf("shrunk to 100 with group b00004 submitted: %v, want a refusal naming it", err)
	}
	if _, err = resumedOptions([]rec{{T: "site"}}, now()); err == nil {
		t.Fatal("a journal without its options was taken")
	}
	// The plan of the grown run begins with the groups of the first.
	s := &soak{o: o, users: []*user{{name: "u1"}, {name: "u2"}}}
	s.o.chains = 100
	before := s.plan()
	s.o.chains = 150
	after := s.plan()
	for u, gs := range before {
		for i, g := range gs {
			h := after[u][i]
			if h.name != g.name || len(h.chains) != len(g.chains) || h.steps != g.steps {
				t.Fatalf("group %s/%s changed by the growth", u, g.name)
			}
			for k, c := range g.chains {
				if *h.chains[k] != *c {
					t.Fatalf("chain %s/%s/%s changed by the growth", u, g.name, c.name)
				}
			}
		}
	}
	if n := len(after["u1"]) + len(after["u2"]); n != 6 {
		t.Fatalf("grown plan has %d groups, want 6", n)
	}
}
