package main

import (
	"fmt"
	"time"
)

// killPoints are the moments of the driver's own work, beside the faults,
// that -kill-self-during can name: a kill of the whole run there leaves
// the run in a state a resume must finish as its user would.
var killPoints = []string{
	"gahp-retire", // a GAHP batch's retirement journaled, not yet sent (or sent, its answer not yet read)
}

// killAt kills the whole run (killWhole) at point p when -kill-self-during
// p asks for it and -kill-self-after has passed. Unlike killDuringFault
// it books no fault: no fault happened.
func (s *soak) killAt(p string) {
	if s.o.killDuring == p && s.o.killAfter > 0 && time.Since(s.started) >= s.o.killAfter {
		fmt.Printf("rbsoak: -kill-self-during %s\n", p)
		s.killWhole()
	}
}
