package clitool

import "github.com/rboinc/rboinc/internal/buildinfo"

// Version is the line -version prints (see package buildinfo).
func Version(prog string) string { return buildinfo.Version(prog) }
