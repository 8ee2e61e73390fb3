//go:build darwin || freebsd || netbsd

package server

import "golang.org/x/sys/unix"

// errNoAttr is what the BSDs and macOS answer for an extended attribute a
// file lacks.
const errNoAttr = unix.ENOATTR
