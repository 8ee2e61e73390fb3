package advance

import "fmt"

// Door is where a batch of finished work units came in. What differs
// between doors is spelled out by the methods below. A hook call has no
// door of its own: rboinc-hook and rboinc-server process spool it
// (spool.Accept), and the creator takes it in through SpoolDoor.
type Door int

const (
	// SpoolDoor is the hook spool's entries: each holds its call and
	// outputs, durable already (see package spool).
	SpoolDoor Door = iota + 1
	// AssimilatorDoor is the native assimilator: work units read from
	// BOINC's database, outputs in the upload hierarchy, some taken ahead
	// (Item.Pretaken); BOINC forgets a work unit once the assimilator marks
	// it.
	AssimilatorDoor
)

func (d Door) String() string {
	switch d {
	case SpoolDoor:
		return "spool"
	case AssimilatorDoor:
		return "assimilator"
	}
	return "unknown door"
}

// outputsDurable tells whether the outputs are durable where they lie: a
// spool entry's are, so taking them needs no sync; BOINC's upload
// hierarchy's are not, so the batch makes what it took durable before the
// door lets BOINC forget the work units.
func (d Door) outputsDurable() bool { return d == SpoolDoor }

// oneTransaction tells whether the batch's records share one transaction
// of the state database: the assimilator's batches are large, and a commit
// per work unit would cost more than the rest of its work. A spool entry
// is removed only after its record, so each record commits on its own.
func (d Door) oneTransaction() bool { return d == AssimilatorDoor }

// createsNext tells whether Run has the next steps' work units created.
// The spool's batches come from the creator itself, which creates them
// right after. A failure to create them is only logged: they are recorded
// as pending, and the assimilator's next pass or the creator creates them.
func (d Door) createsNext() bool { return d != SpoolDoor }

// failure words the failure of one item's record as the door's log has
// always said it.
func (d Door) failure(it *Item, err error) error {
	if d == AssimilatorDoor {
		return fmt.Errorf("assimilating work unit %s: %w", it.Call.WUName, err)
	}
	return err
}
