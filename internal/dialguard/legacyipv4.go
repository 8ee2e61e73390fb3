package dialguard

import (
	"net/netip"
	"strconv"
	"strings"
)

// legacyIPv4 reads the other spellings of an IPv4 address that inet_aton
// (and so getaddrinfo, which a cgo resolver calls) accepts: one to four
// parts, each decimal, octal (a leading 0) or hexadecimal (0x), the last
// filling the bytes left: 127.1, 2130706433, 0x7f000001, 0177.0.0.1, 0.
// Go's own resolver takes them for names that do not resolve, glibc's for
// addresses: read as addresses, they are refused when a target is
// registered, whichever resolver the server uses.
func legacyIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(strings.TrimSuffix(s, "."), ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var a uint32
	for i, p := range parts {
		base := 10
		switch {
		case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
			p, base = p[2:], 16
		case len(p) > 1 && p[0] == '0':
			p, base = p[1:], 8
		}
		v, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if v > 255 {
				return netip.Addr{}, false
			}
			a |= uint32(v) << (24 - 8*i)
			continue
		}
		if bits := 8 * (4 - i); bits < 32 && v >= 1<<bits {
			return netip.Addr{}, false
		}
		a |= uint32(v)
	}
	return netip.AddrFrom4([4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a)}), true
}
