// Package advance is the advance path: BOINC has finished (or given up on)
// work units, and each one's chain moves on. Every door a finished work
// unit comes through turns what it got into a Batch and calls Run, the one
// entry point:
//
//   - the hook spool's entries (SpoolDoor; IntakeSpool reads them into a
//     batch at every pass of the creator). Every hook call comes this way:
//     rboinc-hook and rboinc-server process spool it (spool.Accept), then
//     hand it over to the creator, or take the creator lock and do its pass
//     themselves (engine.Handover); a lone call is a batch of one,
//   - the native assimilator, reading BOINC's database (AssimilatorDoor;
//     the engine's Assimilator builds its batches).
//
// Run records every item (the engine does one work unit's record: outputs
// into the results area, the step done, the next step pending or the
// chain ended), sets aside the calls rboinc cannot place, makes what it
// took durable once for the batch, and has the next steps' work units
// created. The doors differ only in the Door's properties below, never in
// separate code paths.
//
// The hook's argument protocol is package hookargs, the spool entry's
// package spool (spool.Accept is the front half of every hook call); both
// stay small so that rboinc-hook, started once per work unit, links little.
package advance
