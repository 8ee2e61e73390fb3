package main

import "testing"

// BOINC_QUERY_BATCHES' answer for one batch, as rboinc-gahp writes it; a
// failure or a short answer is no list (the driver asks again).
func TestParseQuery(t *testing.T) {
	jobs, ok := parseQuery("NULL 1733457600.000000 2 j1 DONE j2 IN_PROGRESS")
	if !ok || len(jobs) != 2 || jobs["j1"] != "DONE" || jobs["j2"] != "IN_PROGRESS" {
		t.Fatalf("parseQuery: %v, %v", jobs, ok)
	}
	if allEnded(jobs) {
		t.Error("a job in progress taken for ended")
	}
	jobs["j2"] = "ERROR"
	if !allEnded(jobs) {
		t.Error("jobs done or failed not taken for ended")
	}
	for _, r := range []string{"error\\ querying\\ batch:\\ connection\\ refused", "NULL 1.0 2 j1 DONE", "NULL 1.0"} {
		if _, ok := parseQuery(r); ok {
			t.Errorf("%q taken for a batch's jobs", r)
		}
	}
}
