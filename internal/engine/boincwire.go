package engine

import (
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/workflow/wire"
)

// BOINC's view reaches clients in wire's types: boincdb speaks its own,
// and these convert them (the fields are the same, the JSON names wire's).

func wireCounts(c boincdb.Counts) *wire.BoincCounts {
	w := wire.BoincCounts(c)
	return &w
}

func wireResults(rs []boincdb.ResultStatus) []wire.BoincResult {
	out := make([]wire.BoincResult, len(rs))
	for i, r := range rs {
		out[i] = wire.BoincResult(r)
	}
	return out
}

// wirePlace is a work unit's place in BOINC as the status words it.
var wirePlace = map[string]string{
	boincdb.PlaceUnsent:     wire.BoincUnsent,
	boincdb.PlaceInProgress: wire.BoincInProgress,
	boincdb.PlaceValidating: wire.BoincValidating,
}
