package query

import "github.com/rboinc/rboinc/internal/store"

// Reader reads rboinc's state database; it has no method that writes.
type Reader struct {
	db *store.DB
}

// New returns the Reader of an open state database.
func New(db *store.DB) *Reader { return &Reader{db: db} }
