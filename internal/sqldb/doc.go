// Package sqldb is what rboinc's two databases (its own state, in
// internal/store, and BOINC's, in internal/boincdb) share about the SQL
// engines they run on, SQLite and MariaDB/MySQL: where a database is
// (Target, ParseURL: the addresses users write) and how the engines' errors
// read (IsDuplicate, IsTooLong). Neither database package reaches into the
// other for them.
package sqldb
