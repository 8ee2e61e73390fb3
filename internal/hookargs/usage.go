package hookargs

// Usage is the help of the hook, printed by `rboinc-hook --help` and by
// `rboinc-server process --help` (which takes the same calls and answers
// with the same exit codes), so that the two never disagree.
const Usage = `Usage:
  rboinc-hook [--root DIR] WU_ID PATH...
  rboinc-hook [--root DIR] --error MASK WU_NAME WU_ID BATCH
  rboinc-hook --version
  (rboinc-server process takes the same arguments)

The assimilator hook BOINC's script_assimilator runs once per finished work
unit: it hands the outputs to rboinc-server through the server root's spool.
Without --root (or RBOINC_ROOT) the server root is the one whose bin/ holds
the program.

Exit codes: 0 done (also a work unit that is not rboinc's, or a call it
cannot read), 1 BOINC must keep the outputs and call again later (disk or
database failure, a --root that is not a server root), 2 no server root.
`
