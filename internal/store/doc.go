// Package store is rboinc's state: users, chains, steps, results and the
// content pool's index, in one embedded SQLite database, or in MariaDB
// (tables rboinc_*) for a project on several hosts: Open takes a file path
// or mysql://..., and everything that differs between the engines is in
// dialect.go and dialect_mysql.go (the same guarantees on both: writers
// one at a time, the schema versioned). The server's HTTP
// requests (CGI processes included) and the assimilator hook are separate
// processes, so the database runs in WAL mode with a busy timeout, and every
// operation is one transaction.
//
// The schema is versioned (SQLite's user_version, and a table
// schema_history of the migrations applied, when and by which rboinc).
// Every Open brings an older database up to date with the numbered
// migrations of migrations.go, all in one immediate transaction, so that
// of several processes opening it at once exactly one upgrades it; a
// database newer than the binary is refused (SchemaTooNewError). The rule:
// never edit, renumber or remove a released migration; append a new one
// for every change of the schema (testdata/migrations-released.txt holds
// the released ones' digests, and a test holds them to it).
package store
