package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/internal/store"
)

func TestDisableEnableRotate(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	ctx := context.Background()
	tok, err := server.AddUser(ctx, v.db, "carol")
	if err != nil {
		t.Fatal(err)
	}
	if len(tok) != 64 || strings.Trim(tok, "0123456789abcdef") != "" {
		t.Fatalf("token %q: want 256 random bits in hex", tok)
	}
	if _, err := server.AddUser(ctx, v.db, "Carol"); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a second carol, differing in case: %v", err)
	}
	v.tokens["carol"] = tok
	up := v.newUpload("carol")
	works := func(what string, want bool) {
		t.Helper()
		for _, r := range [][2]string{{"GET", api + "/whoami"}, {"GET", api + "/status"}, {"PROPFIND", up.DAVPath}} {
			a := v.call("carol", r[0], r[1], nil, "Depth", "0")
			if a.ok() != want {
				t.Errorf("%s: %s %s: %v", what, r[0], r[1], a)
			}
			if !want && a.status != 401 {
				t.Errorf("%s: %s %s: %v, want 401", what, r[0], r[1], a)
			}
		}
	}
	works("new user", true)
	if err := v.db.SetUserDisabled(ctx, "CAROL", true); err != nil {
		t.Fatal(err)
	}
	works("disabled", false)
	if a := v.call("carol", "GET", api+"/whoami", nil); !strings.Contains(a.err.Error, "disabled") {
		t.Errorf("the refusal does not say why: %v", a)
	}
	if err := v.db.SetUserDisabled(ctx, "carol", false); err != nil {
		t.Fatal(err)
	}
	works("enabled again", true)
	newTok, err := server.RotateToken(ctx, v.db, "carol")
	if err != nil || newTok == tok {
		t.Fatalf("rotate: %q %v", newTok, err)
	}
	works("old token after rotate", false)
	v.tokens["carol"] = newTok
	works("new token", true)
	if _, err := server.RotateToken(ctx, v.db, "nobody"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("rotating an unknown user: %v", err)
	}
	if err := v.db.SetUserDisabled(ctx, "nobody", true); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("disabling an unknown user: %v", err)
	}
	var stored string
	v.db.SQL().QueryRow(`SELECT token_hash FROM users WHERE name = 'carol'`).Scan(&stored)
	if stored != server.HashToken(newTok) || strings.Contains(stored, newTok) {
		t.Errorf("stored %q", stored)
	}
}
