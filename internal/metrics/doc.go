// Package metrics serves rboinc's Prometheus metrics (text format) at
// /rboinc_cgi/metrics, for administrators only. Every name begins with
// rboinc_. The server may be a CGI program, one process per request, so
// counters that must outlive a process are read from the state database
// at scrape time (chains by state, steps created and assimilated, pool
// and upload figures, the hook and create_work latency histograms); the
// request counts by endpoint are the serving process's own (a standalone
// server's since it started).
package metrics
