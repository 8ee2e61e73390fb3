package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/rboinc/rboinc/internal/atomicfile"
	"github.com/rboinc/rboinc/internal/secretfile"
	"github.com/rboinc/rboinc/internal/sqldb"
	"github.com/rboinc/rboinc/internal/store"
)

// StateFile is the SQLite state database in the server root, used unless
// rboinc.json's state_db names a MariaDB.
const StateFile = "state.db"

// StateLocation is where the root's state is: rboinc.json's state_db
// (mysql://...: rboinc_* tables in MariaDB, shared by the project's hosts)
// or the SQLite file root/state.db. Every process that opens the state
// asks here (OpenState), so that they all open the same one.
func (c Config) StateLocation(root string) string {
	if c.StateDB != "" {
		return c.StateDB
	}
	return filepath.Join(root, StateFile)
}

// CheckStateDB refuses a state_db that is not a MariaDB address.
func CheckStateDB(s string) error {
	if s == "" {
		return nil
	}
	t, err := sqldb.ParseURL(s)
	if err != nil {
		return err
	}
	if t.Engine != sqldb.MySQL {
		return fmt.Errorf("state_db %q: only mysql://USER:PASS@tcp(HOST:PORT)/DB or mysql://USER:PASS@unix(SOCKET)/DB; leave it out for the SQLite file %s in the root", t, StateFile)
	}
	return nil
}

// StateLocation reads root's rboinc.json and says where its state is.
func StateLocation(root string) (string, error) {
	c, err := LoadConfig(root)
	if err != nil {
		return "", err
	}
	return c.StateLocation(root), nil
}

// OpenState opens root's state database (upgrading its schema, as every
// Open does), wherever rboinc.json puts it.
func OpenState(ctx context.Context, root string) (*store.DB, error) {
	loc, err := StateLocation(root)
	if err != nil {
		return nil, err
	}
	return store.Open(ctx, loc)
}

// OpenCurrentState opens root's state database only if its schema is
// this build's (store.OpenCurrent): for programs that read the state of
// an rboinc built apart from them, whose schema they must not upgrade.
func OpenCurrentState(ctx context.Context, root string) (*store.DB, error) {
	loc, err := StateLocation(root)
	if err != nil {
		return nil, err
	}
	return store.OpenCurrent(ctx, loc)
}

// SetStateDB makes root's rboinc.json name location as its state database
// (migrate does, once the state is copied there). The file is replaced
// atomically, every other setting kept as written, its owner too; it now
// holds a password, so its mode is private (a group read kept: BOINC's
// daemons may read it as another user of the project's group).
func SetStateDB(root, location string) error {
	if err := CheckStateDB(location); err != nil {
		return err
	}
	path := filepath.Join(root, ConfigFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return fmt.Errorf("parsing %s: %w", path, err)
	}
	v, err := json.Marshal(location)
	if err != nil {
		return err
	}
	fields["state_db"] = v
	out, err := json.MarshalIndent(fields, "", "  ")
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, append(out, '\n'), secretfile.ModeFrom(fi.Mode())); err != nil {
		return fmt.Errorf("switching %s to the new state database: %w", path, err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		os.Chown(path, int(st.Uid), int(st.Gid)) // as it was: the mode says who reads it
	}
	return nil
}
