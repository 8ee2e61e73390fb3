// Package spool is the hand-over between the assimilator hook and the
// creator. BOINC starts one hook process per finished work unit and deletes
// its outputs once the process returns; the hook only hard-links the
// outputs into an entry of <root>/spool, with the call in a file named call, and
// makes it durable. The creator (engine) takes the entries in, in the
// order they came, and creates many chains' next steps with one
// create_work run.
//
// The package opens no database: the small rboinc-hook program is built
// from it, so that a hook call costs little more than a process start.
package spool
