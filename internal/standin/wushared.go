package standin

import "github.com/rboinc/rboinc/internal/wucreate"

// The parts of create_work's job processing (package wucreate) that the
// rest of the stand-in uses as well.
const maxBlob = wucreate.MaxBlob

func readTemplate(path string) (string, error) { return wucreate.ReadTemplate(path) }
func badPhysicalName(name string) bool         { return wucreate.BadPhysicalName(name) }
func xmlEscape(s string) string                { return wucreate.XMLEscape(s) }
func stripWS(s string) string                  { return wucreate.StripWS(s) }
func cStrtod(s string) (float64, bool)         { return wucreate.CStrtod(s) }
func isCSpace(c byte) bool                     { return wucreate.IsCSpace(c) }
