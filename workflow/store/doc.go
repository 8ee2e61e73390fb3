// Package store is rboinc's state: users, chains, steps, results and the
// content pool's index, in one embedded SQLite database. The server's HTTP
// requests (CGI processes included) and the assimilator hook are separate
// processes, so the database runs in WAL mode with a busy timeout, and every
// operation is one transaction.
package store
