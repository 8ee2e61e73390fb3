// Package webstatus is the status web page of rboinc-server: a user's
// groups with their progress, chains by state, failed chains with the
// reason, the step turnaround histogram, steps finished per hour and an
// estimated time to finish per group; a chain's own page with its steps,
// work units, times, attempts and links to download its finished outputs;
// and, for administrators, every user, the queues, the pool and the
// server's health (doctor's checks).
//
// The pages are server-rendered (html/template, templates embedded) with
// hand-written inline SVG charts: they work without JavaScript, refresh
// themselves and fit a phone. Every page needs the user's name and token
// through HTTP Basic (the server's own authentication), never in a URL or
// a page, and shows only the user's own chains. The same handler serves
// the standalone server and the CGI program.
package webstatus
