package server

import (
	"context"
	"net/http"

	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// batchRoutes adds the batch API (HTCondor's BOINC GAHP uses it). Every
// batch request first expires ended leases, so that a CGI deployment,
// whose creator may run seldom, expires them too.
func (s *Server) batchRoutes(mux *http.ServeMux, api string) {
	expiring := func(h func(http.ResponseWriter, *http.Request, store.User)) http.Handler {
		return s.withUser(func(w http.ResponseWriter, r *http.Request, u store.User) {
			s.E.ExpireLeasesSoon(r.Context())
			h(w, r, u)
		})
	}
	mux.Handle("GET "+api+wire.PathBatches, expiring(func(w http.ResponseWriter, r *http.Request, u store.User) {
		s.answer(w, r)(s.E.Batches(r.Context(), u))
	}))
	mux.Handle("POST "+api+wire.PathBatchQuery, expiring(post(s, batchListBody, s.E.QueryBatches)))
	mux.Handle("GET "+api+wire.PathBatchOutput, expiring(func(w http.ResponseWriter, r *http.Request, u store.User) {
		s.answer(w, r)(s.E.JobOutput(r.Context(), u, r.URL.Query().Get("job")))
	}))
	mux.Handle("POST "+api+wire.PathBatchAbort, expiring(post(s, batchListBody, s.E.AbortJobs)))
	mux.Handle("POST "+api+wire.PathBatchRetire, expiring(post(s, controlBody, s.E.RetireBatch)))
	mux.Handle("POST "+api+wire.PathBatchLease, expiring(post(s, controlBody, func(ctx context.Context, u store.User, ref wire.BatchRef) (wire.CountResponse, error) {
		return s.E.SetLease(ctx, u, ref)
	})))
}
