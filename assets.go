// Package rboinc ships the example application queue (templates, app and
// server default files) so that `rboinc-server init` can install it into a
// fresh server root.
package rboinc

import "embed"

// Examples holds templates/ (annotated template pairs) and
// examples/langevin/ (the example app and its default files).
//
//go:embed templates examples/langevin
var Examples embed.FS
