// Package standin is a simulated BOINC project that behaves like BOINC at
// every interface rboinc touches, so that the same rboinc server code drives
// it and a real project unchanged.
//
// It sits at the process boundary, exactly where real BOINC sits:
//
//   - InitProject lays out a project directory (config.xml, cgi-bin/,
//     templates/, download/, upload/, apps/, tmp_<host>/) with a
//     bin/create_work wrapper that re-enters rboinc-server as
//     `rboinc-server standin create_work ARGS`, which calls CreateWorkMain.
//   - CreateWorkMain reproduces BOINC's create_work: option parsing, input
//     template processing, staging and hashing of input files, --stdin bulk
//     mode, its messages and exit statuses (see boinc-interfaces.md 1, 2 and
//     boinc-real-observations.md 3).
//   - Volunteer plays the transitioner, a volunteer host, the validator, the
//     script assimilator and the file deleter: it computes work units with
//     <project>/apps/<app>/run and calls the assimilator hook through the
//     shell from tmp_<host>, as script_assimilator does.
//
// State lives in <project>/standin.db (SQLite), with tables shaped like
// BOINC's workunit and result tables.
package standin
