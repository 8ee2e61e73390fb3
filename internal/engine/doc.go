// Package engine is rboinc's workflow logic: submit chains, advance them
// from the assimilator hook, stop, purge, report status, hand out and
// forget results. It knows nothing of HTTP or terminals; it talks to BOINC
// only through the process boundary in package boinc.
package engine
