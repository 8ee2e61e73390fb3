// Package query is rboinc's read side: the status pages (webstatus), the
// Prometheus metrics, the report, the statistics and the server's status,
// event and sign-in reads ask the state database through a Reader, which
// only reads. Nothing outside the engine holds the database itself: the
// engine hands out its Reader (engine.Engine.Query), and a command that
// opened the state on its own (`rboinc-server report`) wraps it with New.
package query
