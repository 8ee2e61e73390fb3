package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/rboinc/rboinc/internal/reqid"
	"github.com/rboinc/rboinc/internal/store"
)

// ErrNoBoincAccount: the credential is no BOINC authenticator rboinc
// accepts.
var ErrNoBoincAccount = errors.New("unknown or revoked token")

// UserByBoincAuthenticator logs in with a BOINC account's authenticator,
// as BOINC's remote job submission accepts it: the account must exist in
// BOINC's database, be linked to an rboinc user (`user add|link
// --boinc-user ID`), and have the right to submit where the project grants
// it (user_submit).
func (e *Engine) UserByBoincAuthenticator(ctx context.Context, auth string) (store.User, error) {
	bdb, err := e.boincDB(ctx)
	if err != nil {
		return store.User{}, fmt.Errorf("%w (BOINC's database, which BOINC authenticators need, is not available)", ErrNoBoincAccount)
	}
	acct, found, err := bdb.AccountByAuthenticator(ctx, auth)
	if err != nil {
		rid := reqid.New()
		e.Log.Error("cannot check a BOINC authenticator", "request_id", rid, "err", err)
		return store.User{}, fmt.Errorf("%w now: %s", ErrAccountCheck, reqid.Message(rid))
	}
	if !found {
		return store.User{}, ErrNoBoincAccount
	}
	u, err := e.db.UserByBoincID(ctx, acct.ID)
	if errors.Is(err, store.ErrNotFound) {
		return store.User{}, fmt.Errorf("BOINC account %d is linked to no rboinc user: an administrator links it with `rboinc-server user link NAME --boinc-user %d`", acct.ID, acct.ID)
	}
	if err != nil {
		return store.User{}, e.cannotCheckAccount(acct.ID, err)
	}
	ok, err := bdb.MaySubmit(ctx, acct.ID)
	if err != nil {
		return store.User{}, e.cannotCheckAccount(acct.ID, err)
	}
	if !ok {
		return store.User{}, fmt.Errorf("BOINC account %d may not submit jobs on this project (no user_submit row)", acct.ID)
	}
	return u, nil
}

// ErrUnknownBoincAccount: BOINC's database has no such account.
var ErrUnknownBoincAccount = errors.New("BOINC's database has no such account")

// CheckBoincAccount makes sure a BOINC account exists before a user is
// linked to it; without BOINC's database it cannot tell, and says so.
func (e *Engine) CheckBoincAccount(ctx context.Context, id int64) error {
	bdb, err := e.boincDB(ctx)
	if err != nil {
		return fmt.Errorf("cannot check BOINC account %d: %w", id, err)
	}
	_, found, err := bdb.AccountByID(ctx, id)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("account %d: %w", id, ErrUnknownBoincAccount)
	}
	return nil
}

// cannotCheckAccount words a database failure while checking a BOINC
// account for the caller: the error itself (SQL, addresses) goes to the
// log under a request id, which the caller is told instead.
func (e *Engine) cannotCheckAccount(id int64, err error) error {
	rid := reqid.New()
	e.Log.Error("checking a BOINC account", "request_id", rid, "boinc_user", id, "err", err)
	return fmt.Errorf("%w %d now: %s", ErrAccountCheck, id, reqid.Message(rid))
}

// ErrAccountCheck: a BOINC account could not be checked (a database
// failed), which says nothing against the credential: not a 401.
var ErrAccountCheck = errors.New("cannot check BOINC account")

// AddUser creates a user with the given token hash (server.AddUser makes
// the token): for a process that holds the engine, as the stand-in's
// server does.
func (e *Engine) AddUser(ctx context.Context, name, tokenHash string) (int64, error) {
	return e.db.AddUser(ctx, name, tokenHash)
}
