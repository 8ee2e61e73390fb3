// Package gahp is rboinc's BOINC GAHP: the server HTCondor's gridmanager
// starts for grid_resource = boinc jobs and drives over its stdin and
// stdout with the GAHP protocol (one request per line, "S" or "E" at once,
// results of the asynchronous BOINC_* commands later through RESULTS).
// Each BOINC_* request runs concurrently against the rboinc API of package
// client: a batch is a group of the user, a job a chain of it.
//
// The protocol is that of BOINC's reference GAHP (samples/condor in BOINC)
// as HTCondor's gridmanager speaks it; the code is rboinc's.
package gahp
