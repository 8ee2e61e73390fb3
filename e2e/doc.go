// Package e2e holds the end-to-end tests of the three commands, written as
// testscript scripts in testdata/: real binaries, a real server on
// loopback, the embedded BOINC stand-in computing the chains.
package e2e
