package advance

import (
	"context"
	"errors"
	"fmt"

	"github.com/rboinc/rboinc/internal/spool"
)

// readEntry reads a spool entry (spool.Read; a test makes it fail).
var readEntry = spool.Read

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
	var unread error
	for _, name := range names {
		call, err := readEntry(root, name)
		if errors.Is(err, spool.ErrMalformed) {
			// A torn or foreign entry will not improve; keep it aside for
			// the administrator rather than block every chain behind it.
			chains.Log().Error("hook spool entry malformed; set aside", "entry", name, "err", err)
			if err := spool.SetAside(root, name); err != nil {
				return 0, err
			}
			continue
		}
		if err != nil {
			// EMFILE, EIO: the entry may read at the next pass. The
			// others are recorded all the same; the error tells the
			// caller that the pass was not whole.
			chains.Log().Warn("hook spool entry not readable now; left for the next pass", "entry", name, "err", err)
			unread = errors.Join(unread, fmt.Errorf("reading hook spool entry %s: %w", name, err))
			continue
		}
		b.Items = append(b.Items, &Item{Call: call, Entry: name})
	}
	if len(b.Items) == 0 {
		return 0, unread
	}
	err = Run(ctx, chains, b)
	err = errors.Join(err, unread)
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
