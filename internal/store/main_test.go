package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rboinc/rboinc/internal/mariadbtest"
)

func TestMain(m *testing.M) { mariadbtest.Main(m) }

// TestStateDBEnv chooses the engine of the tests' databases:
// RBOINC_TEST_STATE_DB=mariadb puts each test's state in a database of its
// own on a private MariaDB server; SQLite otherwise.
const TestStateDBEnv = "RBOINC_TEST_STATE_DB"

// onMariaDB tells whether the tests run on MariaDB.
func onMariaDB() bool { return os.Getenv(TestStateDBEnv) == "mariadb" }

// testLocation is a new, empty state database for t on the engine under
// test.
func testLocation(t *testing.T) string {
	t.Helper()
	if onMariaDB() {
		mariadbtest.Shared(t)
		return "mysql://" + mariadbtest.NewDB(t)
	}
	return filepath.Join(t.TempDir(), "state.db")
}
