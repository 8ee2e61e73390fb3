// Package boincdb reads and writes BOINC's project database the way BOINC's
// own daemons and tools do: the app, workunit and result tables (and the
// few others rboinc needs), with BOINC's column names, types and state
// codes. The same queries run on a real project's MariaDB/MySQL and on the
// embedded stand-in's SQLite file, so that every query rboinc makes is
// exercised on both engines.
package boincdb
