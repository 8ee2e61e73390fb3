//go:build !linux

package pool

// dropUserAttrs: WebDAV properties are kept in extended attributes on
// Linux only.
func dropUserAttrs(string) {}
