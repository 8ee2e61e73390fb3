package dialguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
)

// TestLegacyIPv4FormsRefused: the spellings of inner addresses that
// getaddrinfo reads as addresses (127.1, 2130706433, 0x7f000001, ...) are
// refused by CheckHost although the resolver (here one without DNS, as
// Go's own resolver has none for them) resolves none of them.
func TestLegacyIPv4FormsRefused(t *testing.T) {
	noDNS := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS in this test")
	}}
	var p *Policy
	for _, h := range []string{"127.1", "127.0.1", "2130706433", "0x7f000001", "0X7F.1", "0177.0.0.1", "0177.1", "0", "0x0",
		"10.1", "167772161", "169.254.43518", "0xa9fea9fe", "127.0.0.1.", "192.168.257"} {
		if err := p.CheckHost(context.Background(), noDNS, h); !IsRefused(err) {
			t.Errorf("%s: %v, want a refusal", h, err)
		}
	}
	for h, want := range map[string]string{"127.1": "127.0.0.1", "2130706433": "127.0.0.1", "0x7f000001": "127.0.0.1", "0177.0.0.1": "127.0.0.1",
		"0": "0.0.0.0", "169.254.43518": "169.254.169.254", "192.168.257": "192.168.1.1", "8.8.8.8": "8.8.8.8", "134744072": "8.8.8.8"} {
		if a, ok := legacyIPv4(h); !ok || a != netip.MustParseAddr(want) {
			t.Errorf("legacyIPv4(%q) = %v, %v; want %s", h, a, ok, want)
		}
	}
	for _, h := range []string{"example.org", "1.2.3.4.5", "256.1", "1.2.65536", "4294967296", "0x", "08", "1..2", "", "1.2.3.256", "-1", "+1", "1_0"} {
		if a, ok := legacyIPv4(h); ok {
			t.Errorf("legacyIPv4(%q) = %v, want no address", h, a)
		}
	}
	// Names go on to the resolver: one that does not resolve passes (it
	// is checked again at connect time).
	if err := p.CheckHost(context.Background(), noDNS, "hooks.example.org"); err != nil {
		t.Errorf("a name that does not resolve: %v", err)
	}
}

// FuzzLegacyIPv4: any host name either is no address or one that reads
// back the same from its dotted quad.
func FuzzLegacyIPv4(f *testing.F) {
	for _, s := range []string{"127.1", "2130706433", "0x7f000001", "0177.0.0.1", "0", "1.2.3.4.", "0x", "08", "1..2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, ok := legacyIPv4(s)
		if !ok {
			return
		}
		if b, ok := legacyIPv4(a.String()); !ok || b != a || !a.Is4() {
			t.Fatalf("%q reads as %v, which reads back as %v, %v", s, a, b, ok)
		}
	})
}
