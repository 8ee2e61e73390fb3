// Package naming builds and parses the names rboinc gives to things: chain
// identifiers, work-unit names (NAME-USER_GROUP-STEP-NSTEPS-RNDnnnn) and the
// BOINC output file names the assimilator hook receives.
package naming
