package server

import (
	"fmt"
	"net/http"

	"github.com/rboinc/rboinc/workflow/wire"
)

// scratchMinCharge is the least a file or collection counts toward the
// user's scratch quota (max_scratch_bytes), whatever it holds: what a file
// system spends on one at least, so that a quota also bounds how many
// entries a user can make (an empty one otherwise costs nothing).
const scratchMinCharge = 4 << 10

// charge is what an entry of size bytes counts toward the quota.
func charge(size int64) int64 { return max(size, scratchMinCharge) }

// scratchRoom tells whether the user's scratch area at root has n more
// bytes of quota, answering 403 (what names the thing refused) when not.
func (s *Server) scratchRoom(w http.ResponseWriter, root string, n int64, what string) bool {
	lim := s.E.Cfg.MaxScratchBytes
	if lim <= 0 {
		return true
	}
	if used := s.scratch.used(root); used+n > lim {
		writeError(w, http.StatusForbidden, wire.CodeQuotaExceeded, fmt.Sprintf("your scratch area holds %d bytes (each file and collection counts at least %d) and the limit is %d: %s does not fit; submit or delete your pending uploads first", used, scratchMinCharge, lim, what))
		return false
	}
	return true
}
