package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkClaimWithBacklog: a delivery's claim and record for a target
// with a backlog of undelivered events (one target's events go one at a
// time, so each needs its own claim).
func BenchmarkClaimWithBacklog(b *testing.B) {
	for _, backlog := range []int{100, 10000, 30000} {
		b.Run(fmt.Sprintf("backlog=%d", backlog), func(b *testing.B) {
			ctx := context.Background()
			db, err := Open(ctx, filepath.Join(b.TempDir(), "state.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			id, _ := db.AddUser(ctx, "alice", "h")
			if err := db.AddNotifyTarget(ctx, NotifyTarget{UserID: id, Group: "", Kind: NotifyWebhook, Address: "https://h.example.org/", Events: []string{"all"}}); err != nil {
				b.Fatal(err)
			}
			other, _ := db.AddUser(ctx, "bob", "hb")
			if err := db.AddNotifyTarget(ctx, NotifyTarget{UserID: other, Group: "", Kind: NotifyWebhook, Address: "https://h.example.org/b", Events: []string{"all"}}); err != nil {
				b.Fatal(err)
			}
			tx, _ := db.sql.Begin()
			for i := 0; i < backlog+b.N; i++ {
				u := id
				if i%10 == 9 {
					u = other
				}
				if _, err := tx.Exec(`INSERT INTO events(time, user_id, type, grp, name, step, reason) VALUES (?,?,?,?,?,?,'')`, now(), u, EvChainDone, "g", fmt.Sprint("c", i), -1); err != nil {
					b.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
			for {
				n, err := db.FanOut(ctx, 1000)
				if err != nil {
					b.Fatal(err)
				}
				if n < 1000 {
					break
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ds, err := db.ClaimDeliveries(ctx, Claim{At: now(), Lease: 90, Limit: 64, PerUser: 4})
				if err != nil || len(ds) == 0 {
					b.Fatal(len(ds), err)
				}
				for _, d := range ds {
					if err := db.Delivered(ctx, d.ID); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
