package mail

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestNoServer: rboinc.json without "smtp" is ErrNoServer for Check and
// Send alike (the one wording every command gives); an "smtp" section
// that lacks its host says so instead.
func TestNoServer(t *testing.T) {
	if err := (Settings{}).Check(); !errors.Is(err, ErrNoServer) {
		t.Fatalf("no smtp section: %v", err)
	}
	if err := Send(context.Background(), Settings{}, Message{To: []string{"a@example.org"}, Text: "x"}); !errors.Is(err, ErrNoServer) {
		t.Fatalf("Send without smtp: %v", err)
	}
	if err := (Settings{From: "rboinc@example.org"}).Check(); errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), `no "host"`) {
		t.Fatalf("smtp without host: %v", err)
	}
}
