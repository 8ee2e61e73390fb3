package legacy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rboinc/rboinc/workflow/wire"
)

// DescriptionFile is the name of the submission description in an upload
// collection.
const DescriptionFile = "description_file.xml"

// maxDescription bounds description_file.xml; the original client writes
// about 1.3 KB.
const maxDescription = 64 << 10

// description is what the submit CGI reads from description_file.xml
// (root BoincRemote; XML::Simple makes no difference between an attribute
// and a child element holding text, so neither do we).
type description struct {
	fields hash
}

func parseDescription(data []byte) (description, error) {
	if len(data) > maxDescription {
		return description{}, fmt.Errorf("%s is %d bytes, more than the %d allowed", DescriptionFile, len(data), maxDescription)
	}
	v, err := xmlIn(data)
	if err != nil {
		return description{}, fmt.Errorf("%s is not readable XML: %w", DescriptionFile, err)
	}
	h, ok := v.(hash)
	if !ok {
		return description{}, fmt.Errorf("%s holds no fields", DescriptionFile)
	}
	return description{fields: h}, nil
}

// has reports whether field k is present at all.
func (d description) has(k string) bool { _, ok := d.fields[k]; return ok }

// get returns field k as text: an empty element counts as empty text.
func (d description) get(k string) (string, error) {
	switch v := d.fields[k].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case hash:
		if len(v) == 0 {
			return "", nil
		}
	}
	return "", fmt.Errorf("field %s of %s must be plain text", k, DescriptionFile)
}

// failure is a rejection worded for the scientist; the submit CGI answers
// it as Failure/@Reason.
type failure struct{ reason string }

func (f *failure) Error() string { return f.reason }

func failf(format string, a ...any) error { return &failure{fmt.Sprintf(format, a...)} }

// reservedNames could not be job names in the original (they were
// directories of its group directory); refused the same way here.
var reservedNames = map[string]bool{"pool": true, "process": true, "process_stop": true}

// request checks the description as the original submit CGI did, in the
// same order and with the same messages, and turns it into the engine's
// request for one chain (files are added by the caller). notes are
// one-line remarks for the scientist about fields accepted but ignored.
func (d description) request() (req wire.SubmitRequest, notes []string, err error) {
	s := map[string]string{}
	for _, k := range []string{"Group", "Name", "Template", "NumSteps", "Priority", "FPopsEst", "FPopsBound", "MemoryBound",
		"TargetNResults", "MinQuorum", "Batch", "AssignUserAll", "DryRun", "Balance", "DelayBound"} {
		v, err := d.get(k)
		if err != nil {
			return req, nil, &failure{err.Error()}
		}
		s[k] = strings.TrimSpace(v)
	}
	group, name := s["Group"], s["Name"]
	switch {
	case d.has("Tag"):
		return req, nil, failf("Tag syntax is obsolete. Please use group+name")
	case !d.has("Name") || group == "":
		return req, nil, failf("Both group and name must be given")
	case !identRE.MatchString(name):
		return req, nil, failf("Invalid name supplied")
	case !identRE.MatchString(group):
		return req, nil, failf("Invalid group supplied")
	case reservedNames[name]:
		return req, nil, failf("%s is a reserved name", name)
	}
	var o wire.Options
	var nsteps, prio, tnr, mq, batch, assign, balance int64
	for _, f := range []struct {
		field string
		dst   *int64
	}{{"NumSteps", &nsteps}, {"Priority", &prio}, {"TargetNResults", &tnr}, {"MinQuorum", &mq},
		{"Batch", &batch}, {"AssignUserAll", &assign}, {"Balance", &balance}} {
		if s[f.field] == "" {
			continue
		}
		n, err := strconv.ParseInt(s[f.field], 10, 32)
		if err != nil {
			return req, nil, failf("Invalid %s supplied: %q is not a whole number", f.field, s[f.field])
		}
		*f.dst = n
	}
	if nsteps < 0 {
		return req, nil, failf("Invalid NumSteps supplied: %d is not a number of steps", nsteps)
	}
	if s["MinQuorum"] != "" && s["TargetNResults"] != "" && mq > tnr {
		return req, nil, failf("min_quorum (now %d) must be <= target_nresults (%d)", mq, tnr)
	}
	floats := map[string]*float64{"FPopsEst": &o.FpopsEst, "FPopsBound": &o.FpopsBound, "MemoryBound": &o.MemoryBound}
	for _, k := range []string{"FPopsEst", "FPopsBound", "MemoryBound"} {
		if s[k] == "" {
			continue
		}
		x, err := strconv.ParseFloat(s[k], 64)
		if err != nil {
			return req, nil, failf("Invalid %s supplied: %q is not a number", k, s[k])
		}
		*floats[k] = x
	}
	// As in the original, 0 means "not given" for the chain length and the
	// priority.
	if nsteps == 0 {
		nsteps = 1
	}
	if prio == 0 {
		prio = 1
	}
	p := int(prio)
	o.NumSteps, o.Priority = int(nsteps), &p
	o.TargetNResults, o.MinQuorum = int(tnr), int(mq)
	o.Batch, o.AssignUserAll = batch, assign
	o.DryRun = s["DryRun"] != "" && s["DryRun"] != "0"
	if balance != 0 {
		notes = append(notes, "note: -balance (the load balancer) is not supported by this server and was ignored")
	}
	if s["DelayBound"] != "" {
		notes = append(notes, "note: DelayBound is not supported by this server and was ignored; the template's delay_bound applies")
	}
	if s["Template"] == "" {
		return req, nil, failf("No application queue (Template) in %s", DescriptionFile)
	}
	return wire.SubmitRequest{Queue: s["Template"], Group: group, Options: o, Chains: []wire.ChainSpec{{Name: name}}}, notes, nil
}
