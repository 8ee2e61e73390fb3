package server

import (
	"context"
	"net/http"

	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// notifyRoutes are a user's own notification settings: their webhook
// signing secret, read or rotated, and the confirmation of e-mail
// addresses. Each acts on the authenticated user alone.
func (s *Server) notifyRoutes(mux *http.ServeMux, api string) {
	noStore := func(h func(http.ResponseWriter, *http.Request, store.User)) func(http.ResponseWriter, *http.Request, store.User) {
		return func(w http.ResponseWriter, r *http.Request, u store.User) {
			w.Header().Set("Cache-Control", "no-store") // a secret
			h(w, r, u)
		}
	}
	mux.HandleFunc("GET "+api+wire.PathNotifySecret, s.withUser(noStore(func(w http.ResponseWriter, r *http.Request, u store.User) {
		s.answer(w, r)(s.E.NotifySecret(r.Context(), u))
	})))
	mux.HandleFunc("POST "+api+wire.PathNotifySecretRotate, s.withUser(noStore(post(s, controlBody, s.E.RotateNotifySecret))))
	mux.HandleFunc("POST "+api+wire.PathNotifyEmail, s.withUser(post(s, controlBody, func(ctx context.Context, u store.User, req wire.EmailConfirmation) (wire.EmailConfirmation, error) {
		return s.E.ConfirmEmail(ctx, u, req)
	})))
}
