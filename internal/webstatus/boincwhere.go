package webstatus

import (
	"net/http"

	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// whereInBoinc words, by chain name, where the running chains of a group
// (or one chain) have their current step in BOINC, read in one batched
// pass over BOINC's database; note says why not, when it cannot be read.
// A failure of the state database leaves the page without it: the page's
// own reads report such failures.
func (h *Handler) whereInBoinc(r *http.Request, u store.User, group, name string) (where map[string]string, note string) {
	st, err := h.E.StatusWhere(r.Context(), u, group, name)
	if err != nil {
		h.Log.Warn("status page without where steps are in BOINC", "err", err)
		return nil, ""
	}
	where = map[string]string{}
	for _, c := range st.Chains {
		if w := c.WhereInBoinc(); w != "" && c.State == wire.StateRunning {
			where[c.Name] = w
		}
	}
	return where, st.BoincError
}
