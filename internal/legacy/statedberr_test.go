package legacy

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/store"
)

// TestStateDatabaseErrorsHideTheAddress: the state database out of reach,
// or gone during a commit, reaches the original clients in words of
// theirs, without the database's address the driver's error names (the
// JSON API answers these with fixed words too).
func TestStateDatabaseErrorsHideTheAddress(t *testing.T) {
	h := &Handler{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	r := httptest.NewRequest("POST", "/rboinc_cgi/boinc_retrieve_server.pl", nil)
	broken := &net.OpError{Op: "read", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 3306}, Err: io.ErrUnexpectedEOF}
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("purging: state database: %w", broken), "cannot reach its database"},
		{fmt.Errorf("purging: state database commit: %w: %w", store.ErrCommitUnknown, broken), "may have been recorded or not"},
	} {
		got := h.engineReason(r, c.err)
		if strings.Contains(got, "10.1.2.3") || !strings.Contains(got, c.want) {
			t.Errorf("%v answered %q, want words with %q and no address", c.err, got, c.want)
		}
	}
}
