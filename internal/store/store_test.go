package store

import (
	"context"
	"errors"
	"sync"
	"testing"
)

func openTest(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), testLocation(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestUserOps(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	if _, err := db.AddUser(ctx, "alice", "h1"); err != nil {
		t.Fatal(err)
	}
	u, err := db.UserByName(ctx, "ALICE")
	if err != nil || u.Name != "alice" || u.Disabled {
		t.Fatalf("%+v %v", u, err)
	}
	if err := db.SetUserDisabled(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}
	if u, _ := db.UserByToken(ctx, "h1"); !u.Disabled {
		t.Fatal("not disabled")
	}
	if err := db.SetUserToken(ctx, "alice", "h2"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UserByToken(ctx, "h1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("old token: %v", err)
	}
	for _, err := range []error{db.SetUserToken(ctx, "bob", "h3"), db.SetUserDisabled(ctx, "bob", false)} {
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("unknown user: %v", err)
		}
	}
	if _, err := db.UserByName(ctx, "bob"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	// The administrator's right: off by default, granted, revoked, and
	// read by every way of finding a user.
	if u.Admin {
		t.Fatal("a new user is an administrator")
	}
	if err := db.SetUserAdmin(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}
	if u, _ := db.UserByToken(ctx, "h2"); !u.Admin {
		t.Fatal("granted, UserByToken says not an administrator")
	}
	if us, _ := db.Users(ctx); len(us) != 1 || !us[0].Admin {
		t.Fatalf("granted, Users says %+v", us)
	}
	if err := db.SetUserAdmin(ctx, "alice", false); err != nil {
		t.Fatal(err)
	}
	if u, _ := db.UserByName(ctx, "alice"); u.Admin {
		t.Fatal("revoked, still an administrator")
	}
	if err := db.SetUserAdmin(ctx, "bob", true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown user made administrator: %v", err)
	}
}

func newChain(name string, inputs ...string) NewChain {
	return NewChain{Chain: Chain{Group: "g", Name: name, Queue: "q", App: "a", NSteps: 2, Params: "{}", Layout: "{}"}, Inputs: inputs}
}

// TestCreateChainsWithinIsAtomic: concurrent submissions cannot pass the
// limit of chains in progress together.
func TestCreateChainsWithinIsAtomic(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	id, _ := db.AddUser(ctx, "alice", "h")
	u := User{ID: id, Name: "alice"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, quota := 0, 0
	for i := range 10 {
		wg.Go(func() {
			_, err := db.CreateChainsWithin(ctx, u, []NewChain{newChain(string(rune('a' + i)))}, 3)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, ErrQuota):
				quota++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok != 3 || quota != 7 {
		t.Fatalf("%d created, %d refused; want 3 and 7", ok, quota)
	}
	use, err := db.UsageOf(ctx, id)
	if err != nil || use.RunningChains != 3 {
		t.Fatalf("%+v %v", use, err)
	}
}

func TestUsageCountsEachContentOnce(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	a, _ := db.AddUser(ctx, "alice", "ha")
	b, _ := db.AddUser(ctx, "bob", "hb")
	m1, m2, m3 := "11111111111111111111111111111111", "22222222222222222222222222222222", "33333333333333333333333333333333"
	db.PoolAdd(ctx, m1, 100)
	db.PoolAdd(ctx, m2, 20)
	db.PoolAdd(ctx, m3, 3)
	if _, err := db.CreateChains(ctx, User{ID: a, Name: "alice"}, []NewChain{newChain("c1", m1, m2), newChain("c2", m1, "")}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateChains(ctx, User{ID: b, Name: "bob"}, []NewChain{newChain("c1", m3)}); err != nil {
		t.Fatal(err)
	}
	use, _ := db.UsageOf(ctx, a)
	if use.PoolBytes != 120 || use.RunningChains != 2 {
		t.Fatalf("alice: %+v", use)
	}
	ref, _ := db.Referenced(ctx, a, []string{m1, m3})
	if !ref[m1] || ref[m3] {
		t.Fatalf("referenced: %v", ref)
	}
	sizes, _ := db.PoolSizes(ctx, []string{m2, "44444444444444444444444444444444"})
	if len(sizes) != 1 || sizes[m2] != 20 {
		t.Fatalf("sizes: %v", sizes)
	}
	db.Purge(ctx, a, "g", "c1")
	if use, _ := db.UsageOf(ctx, a); use.PoolBytes != 100 || use.RunningChains != 1 {
		t.Fatalf("after purge: %+v", use)
	}
}
