package pool

import (
	"strings"

	"golang.org/x/sys/unix"
)

// dropUserAttrs removes the user.* extended attributes of p: an upload
// moved in from a WebDAV scratch area may carry its user's WebDAV
// properties, which a content shared in the pool must not keep.
func dropUserAttrs(p string) {
	buf := make([]byte, 64<<10)
	n, err := unix.Llistxattr(p, buf)
	if err != nil || n <= 0 {
		return
	}
	for _, name := range strings.Split(string(buf[:n]), "\x00") {
		if strings.HasPrefix(name, "user.") {
			unix.Lremovexattr(p, name)
		}
	}
}
