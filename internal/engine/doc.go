// Package engine is rboinc's workflow logic: submit chains, record each
// finished step for the advance path (package advance calls it through
// Engine.Chains), stop, purge, report status, hand out and forget results. It knows nothing of HTTP or terminals; it talks to BOINC
// only through the process boundary in package boinc.
package engine
