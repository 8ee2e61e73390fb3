package advance

import (
	"context"
	"errors"

	"github.com/rboinc/rboinc/internal/spool"
)

// IntakeSpool is the spool's door: it records the spooled hook calls,
// oldest first, as one batch, and removes each entry once its record is
// durable. It returns how many calls it recorded; an error means the state
// database or the disk failed, and the entries left wait for the next
// pass. The creator calls it at every pass.
func IntakeSpool(ctx context.Context, chains Chains) (int, error) {
	root := chains.Root()
	names, err := spool.Entries(root)
	if err != nil {
		return 0, err
	}
	b := Batch{Door: SpoolDoor}
	for _, name := range names {
		call, err := spool.Read(root, name)
		if err != nil {
			// A torn or foreign entry will not improve; keep it aside for
			// the administrator rather than block every chain behind it.
			chains.Log().Error("hook spool entry unreadable; set aside", "entry", name, "err", err)
			if err := spool.SetAside(root, name); err != nil {
				return 0, err
			}
			continue
		}
		b.Items = append(b.Items, &Item{Call: call, Entry: name})
	}
	if len(b.Items) == 0 {
		return 0, nil
	}
	err = Run(ctx, chains, b)
	// An entry is the only copy of its call until its record is durable
	// (Run made it so); a failure to remove it leaves it, and recording is
	// idempotent.
	n := 0
	for _, it := range b.Items {
		if it.Fate != Recorded {
			continue
		}
		if rerr := spool.Remove(root, it.Entry); rerr != nil {
			return n, errors.Join(err, rerr)
		}
		n++
	}
	return n, err
}
