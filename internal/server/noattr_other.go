//go:build !darwin && !freebsd && !netbsd

package server

import "golang.org/x/sys/unix"

// errNoAttr is what Linux answers for an extended attribute a file lacks.
const errNoAttr = unix.ENODATA
