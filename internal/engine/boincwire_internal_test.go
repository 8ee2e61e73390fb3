package engine

import (
	"testing"

	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/workflow/wire"
)

// Every place boincdb reports reaches the status as one of wire's words.
func TestWirePlace(t *testing.T) {
	for _, p := range []string{boincdb.PlaceUnsent, boincdb.PlaceInProgress, boincdb.PlaceValidating} {
		w := wirePlace[p]
		if w == "" || wire.WhereWords(w, 0) == "" {
			t.Errorf("boincdb's place %q becomes %q in the status", p, w)
		}
	}
	if r := wireResults(nil); r == nil || len(r) != 0 {
		t.Errorf("no results: %#v, want an empty list (JSON [])", r)
	}
}
