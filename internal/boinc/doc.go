// Package boinc holds rboinc's knowledge of a BOINC project at its process and
// file boundaries: config.xml, the download/upload hierarchy hash, .md5
// sidecars, running create_work, and the argument forms script_assimilator
// uses to call the hook. It is used by the server and by the BOINC stand-in
// alike, so both agree on every contract.
package boinc
