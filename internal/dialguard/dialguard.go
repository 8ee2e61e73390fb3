// Package dialguard keeps the server's outgoing notification calls off
// its own networks. A webhook URL is a user's choice; without a guard any
// user could make the server POST to its loopback services, its own API,
// cloud metadata (169.254.169.254) or the private network it sits in.
//
// Every address is checked after name resolution, at connect time (the
// net.Dialer's Control hook sees the very address dialled), so a name that
// resolves to a public address when a target is registered and to
// loopback when it is called (DNS rebinding) is refused all the same.
// Loopback, link-local, private (RFC 1918, and 100.64.0.0/10 of carrier
// NAT), IPv6 unique-local and site-local, unspecified, "this network",
// broadcast and multicast addresses are refused unless the administrator
// allows them in rboinc.json's "notify_allow": networks in CIDR form, bare
// addresses, or host names (a name allowed may resolve to anything).
package dialguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// Setting is the rboinc.json key that allows refused addresses.
const Setting = "notify_allow"

// Policy says which addresses notifications may reach.
type Policy struct {
	nets  []netip.Prefix
	hosts map[string]bool
}

// Parse reads the entries of notify_allow: a network in CIDR form
// (10.1.0.0/16, fd00::/8), one address (127.0.0.1, ::1), or a host name
// (hooks.internal.example.org). Anything else is an error naming it.
func Parse(entries []string) (*Policy, error) {
	p := &Policy{hosts: map[string]bool{}}
	for _, e := range entries {
		s := strings.TrimSpace(e)
		switch {
		case s == "":
			return nil, fmt.Errorf("%s: an entry is empty", Setting)
		case strings.Contains(s, "/"):
			pf, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not a network in CIDR form (10.0.0.0/8, fd00::/8): %w", Setting, e, err)
			}
			p.nets = append(p.nets, pf.Masked())
		default:
			if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
				if a.Zone() != "" {
					return nil, fmt.Errorf("%s: %q: an address with a zone cannot be allowed", Setting, e)
				}
				a = a.Unmap()
				p.nets = append(p.nets, netip.PrefixFrom(a, a.BitLen()))
				continue
			}
			h, ok := hostName(s)
			if !ok {
				return nil, fmt.Errorf("%s: %q is neither a network (CIDR), an address nor a host name", Setting, e)
			}
			p.hosts[h] = true
		}
	}
	return p, nil
}

// hostName is s as a lower-case DNS name without a trailing dot, if it is one.
func hostName(s string) (string, bool) {
	s = strings.TrimSuffix(strings.ToLower(s), ".")
	if s == "" || len(s) > 253 {
		return "", false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return "", false
			}
		}
	}
	return s, true
}

// RefusedError is an address notifications may not reach.
type RefusedError struct {
	Host  string // as the target names it
	Addr  netip.Addr
	Class string // "loopback", "private", ...
}

func (e *RefusedError) Error() string {
	what := e.Addr.String()
	if h := strings.Trim(e.Host, "[]"); h != what {
		what = fmt.Sprintf("%s (resolved to %s)", e.Host, e.Addr)
	}
	return fmt.Sprintf("the address %s is %s: notifications are not sent there unless the administrator lists it in rboinc.json's %q",
		what, e.Class, Setting)
}

// classes are the refused ranges; an address in several gets the first.
var classes = []struct {
	class string
	nets  []netip.Prefix
}{
	{"a loopback address", prefixes("127.0.0.0/8", "::1/128")},
	{"unspecified", prefixes("0.0.0.0/32", "::/128")},
	{`in "this network" (0.0.0.0/8)`, prefixes("0.0.0.0/8")},
	{"link-local (cloud metadata lives there)", prefixes("169.254.0.0/16", "fe80::/10")},
	{"private", prefixes("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fec0::/10")},
	{"shared address space (carrier-grade NAT, 100.64.0.0/10)", prefixes("100.64.0.0/10")},
	{"IPv6 unique-local", prefixes("fc00::/7")},
	{"multicast", prefixes("224.0.0.0/4", "ff00::/8")},
	{"reserved or broadcast", prefixes("240.0.0.0/4")},
	// ::a.b.c.d (IPv4-compatible, deprecated) reaches a.b.c.d where the
	// system still tunnels it; NAT64's local-use prefix (RFC 8215) embeds
	// an IPv4 address of the local network's choosing.
	{"IPv4-compatible or local NAT64, which may reach an inner IPv4 address", prefixes("::/96", "64:ff9b:1::/48")},
}

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// nat64 is the well-known NAT64 prefix: its addresses reach the IPv4
// address in their last 32 bits.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// classOf is the refused class of a, or "".
func classOf(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	if a.Is6() && nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	for _, c := range classes {
		for _, n := range c.nets {
			if n.Contains(a) {
				return c.class
			}
		}
	}
	return ""
}

// Check tells whether host (as the target names it) may be reached at a.
func (p *Policy) Check(host string, a netip.Addr) error {
	if p.hostAllowed(host) {
		return nil
	}
	class := classOf(a)
	if class == "" {
		return nil
	}
	u := a.Unmap().WithZone("")
	if p == nil {
		return &RefusedError{Host: host, Addr: u, Class: class}
	}
	for _, n := range p.nets {
		if n.Contains(u) {
			return nil
		}
	}
	return &RefusedError{Host: host, Addr: u, Class: class}
}

func (p *Policy) hostAllowed(host string) bool {
	if p == nil || len(p.hosts) == 0 {
		return false
	}
	h, ok := hostName(strings.Trim(host, "[]"))
	return ok && p.hosts[h]
}

// CheckHost resolves host (a name or an address literal, as in a URL) and
// refuses it when any of its addresses is refused. A name that does not
// resolve now is let through: every connection is checked again.
func (p *Policy) CheckHost(ctx context.Context, r *net.Resolver, host string) error {
	h := strings.Trim(host, "[]")
	if a, err := netip.ParseAddr(h); err == nil {
		return p.Check(host, a)
	}
	if p.hostAllowed(h) {
		return nil
	}
	if a, ok := legacyIPv4(h); ok {
		return p.Check(host, a)
	}
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", h)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if err := p.Check(host, a); err != nil {
			return err
		}
	}
	return nil
}

// DialContext dials as a net.Dialer with timeout does, refusing at connect
// time every address the policy refuses (for an http.Transport).
func (p *Policy) DialContext(timeout time.Duration) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second,
			Control: func(_, resolved string, _ syscall.RawConn) error {
				ip, _, err := net.SplitHostPort(resolved)
				if err != nil {
					return err
				}
				a, err := netip.ParseAddr(ip)
				if err != nil {
					return fmt.Errorf("dialling %s: %w", resolved, err)
				}
				return p.Check(host, a)
			}}
		return d.DialContext(ctx, network, address)
	}
}

// IsRefused tells whether err is (or wraps) a refusal of the policy.
func IsRefused(err error) bool {
	var r *RefusedError
	return errors.As(err, &r)
}
