package boinc

import "github.com/rboinc/rboinc/internal/hookargs"

// HookCall is one invocation of the assimilator hook (package hookargs).
type HookCall = hookargs.HookCall

// ParseHookArgs reads the hook's arguments in any of the forms BOINC's
// script_assimilator uses (hookargs.Parse).
func ParseHookArgs(args []string) (HookCall, error) { return hookargs.Parse(args) }
