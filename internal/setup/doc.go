// Package setup prepares a server root: directories, configuration, the
// state database, the assimilator hook in the BOINC project's bin/, and,
// without a real project, the embedded BOINC stand-in with the example
// application queue.
package setup
