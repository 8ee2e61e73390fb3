package dialguard

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	p, err := Parse([]string{"127.0.0.0/8", "::1", " 10.1.2.3 ", "[fd00::1]", "Hooks.Internal.", "fc00::/7", "10.9.9.9/8"})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"127.0.0.1", "127.9.9.9", "::1", "10.1.2.3", "fd00::1", "fd12::5", "10.200.0.1", "::ffff:127.0.0.1"} {
		if err := p.Check(a, netip.MustParseAddr(a)); err != nil {
			t.Errorf("%s refused though allowed: %v", a, err)
		}
	}
	if err := p.Check("hooks.internal", netip.MustParseAddr("192.168.1.1")); err != nil {
		t.Errorf("an allowed host name refused: %v", err)
	}
	if err := p.Check("other.internal", netip.MustParseAddr("192.168.1.1")); err == nil {
		t.Error("192.168.1.1 allowed for a name not listed")
	}
	for in, want := range map[string]string{
		"":                 "empty",
		"10.0.0.0/33":      "CIDR",
		"not a host!":      "neither",
		"http://x.org/":    "CIDR",
		"-bad.example.org": "neither",
		"fe80::1%eth0":     "zone",
		"a..b":             "neither",
		"*":                "neither",
	} {
		if _, err := Parse([]string{in}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", in, err, want)
		}
	}
}

func TestRefusedClasses(t *testing.T) {
	var p *Policy // no notify_allow at all
	refused := []string{"127.0.0.1", "127.1.2.3", "::1", "0.0.0.0", "::", "0.1.2.3", "169.254.169.254", "fe80::1",
		"10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.0.10", "100.64.0.1", "100.127.255.254", "fd00::1", "fc00::1",
		"fec0::1", "224.0.0.1", "239.1.2.3", "ff02::1", "255.255.255.255", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
		"64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "::127.0.0.1", "::10.0.0.1", "64:ff9b:1::a00:1", "64:ff9b:1:ffff::1"}
	for _, s := range refused {
		err := p.Check(s, netip.MustParseAddr(s))
		if err == nil || !IsRefused(err) || !strings.Contains(err.Error(), `"notify_allow"`) {
			t.Errorf("%s: %v, want a refusal naming notify_allow", s, err)
		}
	}
	for _, s := range []string{"93.184.215.14", "8.8.8.8", "2606:4700::1111", "172.32.0.1", "100.128.0.1", "11.0.0.1", "64:ff9b::808:808"} {
		if err := p.Check(s, netip.MustParseAddr(s)); err != nil {
			t.Errorf("%s refused: %v", s, err)
		}
	}
}

// TestDialRefusesAtConnect dials a real listener on loopback, by address
// and by a name that resolves to it: refused without notify_allow, reached
// with it.
func TestDialRefusesAtConnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ctx := context.Background()
	closed, _ := Parse(nil)
	for _, host := range []string{"127.0.0.1", "localhost"} {
		c, err := closed.DialContext(2*time.Second)(ctx, "tcp", net.JoinHostPort(host, port))
		if err == nil {
			c.Close()
			t.Fatalf("dialled %s on loopback without notify_allow", host)
		}
		if !IsRefused(err) || !strings.Contains(err.Error(), "loopback") {
			t.Fatalf("dialling %s: %v, want a refusal for loopback", host, err)
		}
		if err := closed.CheckHost(ctx, nil, host); !IsRefused(err) {
			t.Fatalf("CheckHost(%s) = %v, want a refusal", host, err)
		}
	}
	// Other spellings of loopback never get through either (refused, or
	// not an address the resolver knows).
	for _, host := range []string{"127.1", "2130706433", "0x7f000001", "::ffff:127.0.0.1", "0177.0.0.1", "localhost."} {
		if c, err := closed.DialContext(2*time.Second)(ctx, "tcp", net.JoinHostPort(host, port)); err == nil {
			c.Close()
			t.Errorf("dialled %s", host)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("%d connections reached the loopback listener", n)
	}
	open, _ := Parse([]string{"127.0.0.0/8", "::1/128"})
	c, err := open.DialContext(2*time.Second)(ctx, "tcp", net.JoinHostPort("localhost", port))
	if err != nil {
		t.Fatalf("dialling an allowed address: %v", err)
	}
	c.Close()
	if err := open.CheckHost(ctx, nil, "localhost"); err != nil {
		t.Fatal(err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"127.0.0.0/8", "::1", "hooks.example.org", "[fd00::1]", "10.0.0.0/33", "a..b", "fe80::1%eth0", "x/y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse([]string{s})
		if err != nil {
			return
		}
		if len(p.nets)+len(p.hosts) != 1 {
			t.Fatalf("%q made %d networks and %d hosts", s, len(p.nets), len(p.hosts))
		}
		for h := range p.hosts {
			if h != strings.ToLower(h) || strings.ContainsAny(h, " /:[]%") || len(h) > 253 {
				t.Fatalf("%q taken as host %q", s, h)
			}
		}
		// An entry never opens more than it names: a public address
		// stays allowed and the check never panics.
		p.Check("x", netip.MustParseAddr("8.8.8.8"))
		for _, n := range p.nets {
			if !n.Contains(n.Addr()) {
				t.Fatalf("%q: network %v", s, n)
			}
		}
	})
}
