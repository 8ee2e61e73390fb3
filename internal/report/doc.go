// Package report makes the nightly report of rboinc-server report: for one
// user (by name) or, for the administrator, the whole server: chains by
// state, the groups' progress and estimated time to finish, failures by
// reason, the step turnaround histogram, late steps and the disk used; as
// text or as HTML (templates embedded). The figures are package stats',
// the same as the status page's.
package report
