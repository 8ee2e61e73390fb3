package main

import (
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"
)

// checkServeFlags refuses serve's flags whose values cannot work as
// usage errors (exit 2), before the root is opened: an address that
// net.Listen cannot read exited 1 after the daemons had started, as if the
// server had failed.
func checkServeFlags(c *cli.Context) error {
	addr := c.String("listen")
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--listen %q: give HOST:PORT, such as 127.0.0.1:8080 or :8080 (port 0: any free port)", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		// A service name (http) is what net.Listen also takes.
		if _, lerr := net.LookupPort("tcp", port); lerr != nil {
			return usagef("--listen %q: port %q is neither a number from 0 to 65535 nor a service name", addr, port)
		}
	}
	if host != "" && !isAddr(host) && !validHostName(host) {
		return usagef("--listen %q: %q is not an IP address or host name", addr, host)
	}
	if (c.String("tls-cert") == "") != (c.String("tls-key") == "") {
		return usagef("HTTPS needs both a certificate (--tls-cert) and its key (--tls-key)")
	}
	if d := c.Duration("status-refresh"); c.IsSet("status-refresh") && d < time.Second {
		return usagef("--status-refresh %s: give 1s or more, such as 30s", d)
	}
	return nil
}

// validHostName says whether h has the form of a DNS name (letters,
// digits, hyphens and dots; at most 253 characters).
func validHostName(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return false
		}
	}
	return true
}

// isAddr says whether h is an IP address (an IPv6 one with its zone too).
func isAddr(h string) bool {
	_, err := netip.ParseAddr(h)
	return err == nil
}
