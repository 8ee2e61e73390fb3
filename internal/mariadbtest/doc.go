// Package mariadbtest runs a private MariaDB server for tests, so that the
// project's SQL runs against the real engine: no system service, no mocks.
//
// A [Server] lives in a directory of its own: a data directory made by
// mariadb-install-db (once for the machine's programs and the package's
// options, kept under TMPDIR as rboinc-mariadbtest-template-*, and copied
// for each new server), a unix socket, a pid file and a log, and it listens on
// a free loopback TCP port. It runs as the current user (as root too), reads
// no option files, and is tuned to start in a few seconds, not to keep data
// through a power cut.
//
// Tests normally share one server per test binary and take a database of
// their own from it:
//
//	func TestMain(m *testing.M) { mariadbtest.Main(m) }
//
//	func TestQuery(t *testing.T) {
//		dsn := mariadbtest.NewDB(t) // USER:PASS@unix(SOCKET)/db_1_3f2a9c01
//		db, err := sql.Open("mysql", dsn)
//		...
//	}
//
// [Shared] skips the test when no MariaDB server binary is installed, unless
// the environment sets RBOINC_NEED_MARIADB=1 (as CI does): then a missing
// server fails the test instead.
package mariadbtest
